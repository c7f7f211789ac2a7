// The end of every derivation, reverse and forward mode alike: the step that turns the function a
// mode built into its result.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"

namespace tad::ad {

struct Finished {
    ir::Function fn;
    std::vector<ParamOrigin> origins;  // per fn.params
};

// Cleans up the derived function `raw` with `cleanup` (passes::cleanup: cse, dce, then the parameters
// nothing reads dropped), gives each remaining parameter its origin (`derived_params` by name for the parameters
// the mode added, shadows and the tape; Primal for the forward's own) and checks the result with
// ir::verify: an invalid one is TAD_ERR_INTERNAL "<what> is invalid IR: ...", `what` naming the
// result ("backward of 'k'").
Finished finish_derived(const ir::Function &raw, const std::map<std::string, ParamOrigin> &derived_params,
                        const std::string &what, const Cleanup &cleanup);

}  // namespace tad::ad
