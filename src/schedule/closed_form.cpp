#include "schedule/closed_form.h"

#include "passes/online_softmax.h"
#include "passes/saved_values.h"
#include "passes/shift_invariance.h"
#include "passes/stored_states.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace tad::schedule {

ClosedForms closed_forms(const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "on") return ClosedForms::On;
    if (v == "recompute") return ClosedForms::Recompute;
    if (v == "off") return ClosedForms::Off;
    fail(TAD_ERR_INVALID_ARGUMENT, "TAD_CLOSED_FORM='" + v + "': expected on, recompute or off");
}

std::vector<ReverseForward> forwards_for_reverse(const ir::Function &given, const ad::GradSpec &spec,
                                                 ClosedForms closed_forms, std::string *report) {
    if (closed_forms == ClosedForms::Off) return {{given, {}}};
    const ir::Function fwd = passes::hold_shift_invariant_maxima(given, spec.outputs, report);
    const std::vector<std::string> kept = closed_forms == ClosedForms::On ? spec.kept : std::vector<std::string>{};
    passes::ClosedForm c = passes::closed_form_online_softmax(fwd, spec.outputs, kept, report);
    passes::SavedReuse s = passes::reuse_saved_values(c.fn, kept, report);
    passes::SavedReuse states = passes::reuse_stored_states(s.fn, kept, report);
    std::vector<ReverseForward> out = {{std::move(states.fn), {}}};
    c.guards.insert(c.guards.end(), s.guards.begin(), s.guards.end());
    c.guards.insert(c.guards.end(), states.guards.begin(), states.guards.end());
    for (const auto &alternatives : c.guards) {
        const plan::Guards g = guards_of(alternatives);
        out[0].guards.insert(out[0].guards.end(), g.begin(), g.end());
    }
    if (out[0].guards.empty()) return out;
    std::string ignored;
    out.push_back({passes::closed_form_online_softmax(fwd, spec.outputs, {}, &ignored).fn, {}});
    return out;
}

}  // namespace tad::schedule
