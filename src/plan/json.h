// A launch plan as JSON: the same data as plan.h, for an executor in another process or program
// (the CUDA driver-API launcher of src/aot reads it from an exported manifest). docs/reports.md,
// "Kernel manifest", documents the schema.
//
// Kernels travel as their headers only: name, role, forward, key, parameters (name and kind),
// constexprs, what they write (the kind of each write), re-grid and transposition. from_json gives
// kernels whose ir::Function has those and no body: an executor needs no more, and
// print(from_json(to_json(p))) == print(p).
#pragma once

#include "plan/plan.h"
#include "support/json.h"

namespace tad::plan {

Json to_json(const Plan &p);

// tad::Error TAD_ERR_INVALID_ARGUMENT "plan: <what>" on anything that is not a plan to_json wrote.
Plan from_json(JsonRef j);

}  // namespace tad::plan
