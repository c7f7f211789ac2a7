// Which forward reverse mode differentiates: the launch's kernel, or that kernel with idioms whose
// gradient has a closed form rewritten so that reverse mode finds it (passes/online_softmax.h).
#pragma once

#include <string>

#include "ad/reverse.h"
#include "ir/ir.h"

namespace tad::schedule {

// TAD_CLOSED_FORM: "on" (or unset) or "off"; anything else is an invalid argument.
bool closed_forms(const char *env);

// The forward to hand to ad::reverse for `spec`; `report` gets what each rewrite did or why not.
ir::Function forward_for_reverse(const ir::Function &fwd, const ad::GradSpec &spec, bool closed_forms,
                                 std::string *report);

}  // namespace tad::schedule
