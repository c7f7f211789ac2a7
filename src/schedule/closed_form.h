// Which forward reverse mode differentiates: the launch's kernel, or that kernel with idioms whose
// gradient has a closed form rewritten so that reverse mode finds it (passes/online_softmax.h), and
// with the values it saved read back instead of recomputed (passes/saved_values.h).
#pragma once

#include <string>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"
#include "plan/derivation.h"

namespace tad::schedule {

// TAD_CLOSED_FORM: "on" (or unset): closed forms, loading the values the forward saved where it can;
// "recompute": closed forms, and every value recomputed; "off": neither. Anything else is an
// invalid argument.
enum class ClosedForms { Off, Recompute, On };
ClosedForms closed_forms(const char *env);

// The forwards to hand to ad::reverse for `spec`, in the order their backwards are tried: the
// rewritten one (maxima whose gradient is zero held constant, passes/shift_invariance.h; online
// softmax loops in closed form), under `guards` where it loads values the forward saved and their stores are each
// program's own only at run time; then, in that case, the rewrite that recomputes them. `report`
// gets what each rewrite did or why not.
struct ReverseForward {
    ir::Function fn;
    plan::Guards guards;
};
std::vector<ReverseForward> forwards_for_reverse(const ir::Function &fwd, const ad::GradSpec &spec,
                                                 ClosedForms closed_forms, std::string *report);

}  // namespace tad::schedule
