// The CPU tier's oracle: one traced call run on the tile-IR interpreter in float64. The forward
// kernels run as written; the generated backward and tangent kernels run as emitted (lowered again
// from the module's text), following the same launch plans as the emitted launchers (run_plan.h).
// Two checks per call:
// - each gradient against central finite differences of the forward along random directions;
// - the dot-product test <J v, u> = <v, Jᵀ u> between the tangent plan and the backward plan:
//   reference-free, and exact up to rounding.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "plan/plan.h"
#include "support/json.h"

namespace tad::verify {

// One launch of the traced call.
struct TracedLaunch {
    std::string kernel;
    std::vector<frontend::ArgBinding> bindings;  // its arguments
    std::map<std::string, plan::TensorRef> tensors;  // pointer parameter -> tensor
};

struct OracleInput {
    const frontend::KernelFile &kf;
    const ast::File &module;  // the emitted module, parsed
    JsonRef trace;  // a trace record with data (docs/worker-protocol.md)
    std::vector<TracedLaunch> launches;
    const plan::Plan &backward;
    const plan::Plan *tangent;  // null: no forward mode, for the reason below
    std::string tangent_unsupported;
};

// One entry of a verify report (docs/reports.md): method, grads, status, message, dot_product.
Json check_call(const OracleInput &in, std::mt19937_64 &rng);

// Sets "passed" and "summary" of a verify report from its "results".
void summarize_verify(Json &report);

}  // namespace tad::verify
