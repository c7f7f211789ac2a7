// Schedule decisions for a launch's backward: how each gradient buffer is written.
//
// Reverse mode turns every forward load of a differentiated input into a write of its gradient
// through the same addresses. Where passes::plan_gradient_writes proves the writes disjoint across
// programs they are plain stores; otherwise, and for shadows several launches share, they are
// relaxed atomic adds. A proof that holds only when pairs of scalar arguments are equal at run time
// (`row * stride_x` vs `row * stride_y`) gives two variants: the guarded one with stores, and a
// fallback with atomics that the launcher runs otherwise.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "passes/passes.h"
#include "plan/derivation.h"

namespace tad::schedule {

// How the gradients of one backward variant are written, and when the variant applies.
struct WritePlan {
    std::map<std::string, passes::GradWrite> writes;  // per wrt parameter
    plan::Guards guards;  // empty: always
};

// The variants of one launch's backward, tried in this order (the last has no guards). `shared`:
// wrt parameters whose shadow other launches also write (always atomics).
std::vector<WritePlan> gradient_writes(const ir::Function &fwd, const ad::GradSpec &spec,
                                       const std::set<std::string> &shared);

// Text form of a write plan (the pipeline's IR dump, tests).
std::string print(const WritePlan &w);

}  // namespace tad::schedule
