#include "schedule/closed_form.h"

#include "passes/online_softmax.h"
#include "support/error.h"

namespace tad::schedule {

bool closed_forms(const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "on") return true;
    if (v == "off") return false;
    fail(TAD_ERR_INVALID_ARGUMENT, "TAD_CLOSED_FORM='" + v + "': expected on or off");
}

ir::Function forward_for_reverse(const ir::Function &fwd, const ad::GradSpec &spec, bool closed_forms,
                                 std::string *report) {
    if (!closed_forms) return fwd;
    return passes::closed_form_online_softmax(fwd, spec.outputs, report);
}

}  // namespace tad::schedule
