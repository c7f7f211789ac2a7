// Schedule decision: scatter split of a launch's backward (passes::split_scatter). Gradients the
// write plan stores plainly although some of their writes scatter (GradWrite::split) get those
// writes in a kernel of their own, run after the others, with relaxed atomic adds.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ad/reverse.h"
#include "passes/passes.h"

namespace tad::schedule {

// The scatter kernel of `b` (its writes: the split gradients as GradWrite::Atomic with `split`), with
// `b` rewritten without those writes: folded into b's stores where passes::fold_scatter applies
// (then both take a ParamOrigin::Hits parameter, and the gradients are `folded`), split otherwise
// (`report` says which and why). nullopt when `b` splits nothing, or, with `why`, when the split
// does not apply: `b`'s plain stores would then lose the scatter's sums, so the caller derives it
// again with without_split() of its write plan.
std::optional<ad::Backward> split_scatter(ad::Backward &b, const ad::Cleanup &cleanup, std::string *why,
                                          std::string *report);

// A write plan with its split gradients written with atomics instead.
std::map<std::string, passes::GradWrite> without_split(std::map<std::string, passes::GradWrite> writes);

}  // namespace tad::schedule
