// Run-time conditions a backward assumes about its forward's launch (plan::Precondition).
#pragma once

#include <string>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"
#include "plan/derivation.h"

namespace tad::driver {

// The conditions under which the forward `fwd` writes each element of the launch's outputs whose
// gradient the backward reads (spec.outputs) once per program, as a backward that reads each such
// gradient once assumes (passes/rewrites.h): one per buffer whose proof needs run-time conditions
// (`stride_t >= C`), and one `mapped` for those written once only on tile coordinates
// (spec.mapped_once), which the module checks before the backward runs, raising the refusal where
// they fail. `report` gets a line per such buffer, and one per buffer the forward may write twice
// (its gradient is then read at the last write and zeroed: flow.cpp).
std::vector<plan::Precondition> single_write_preconditions(const ir::Function &fwd, const ad::GradSpec &spec,
                                                           std::string *report);

}  // namespace tad::driver
