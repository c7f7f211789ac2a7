#include "schedule/regrid.h"

#include "passes/regrid.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace tad::schedule {

GridReduction grid_reduction(const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "partial") return GridReduction::Partial;
    if (v == "atomic") return GridReduction::Atomic;
    if (v == "off") return GridReduction::Off;
    fail(TAD_ERR_INVALID_ARGUMENT, "TAD_GRID_REDUCTION='" + v + "': expected partial, atomic or off");
}

std::optional<plan::Regrid> regrid(ad::Backward &b, GridReduction mode, plan::Guards *when, std::string *report) {
    if (mode == GridReduction::Off) {
        *report = "not re-gridded: TAD_GRID_REDUCTION=off\n";
        return std::nullopt;
    }
    if (b.tape) {
        *report = "not re-gridded: the backward reads a tape laid out per program\n";
        return std::nullopt;
    }
    passes::Regrid r = passes::regrid(b.fn, mode == GridReduction::Atomic);
    *report = passes::print(r);
    if (!r.fired) return std::nullopt;
    // The added scalar parameters are bound by the plan (plan::Regrid), not from the forward.
    for (size_t i = b.origins.size(); i < r.fn.params.size(); ++i)
        b.origins.push_back({ad::ParamOrigin::Primal, r.fn.params[i].name});
    b.fn = std::move(r.fn);
    for (const auto &alternatives : r.when)
        for (const plan::Guard &g : guards_of(alternatives)) when->push_back(g);
    return plan::Regrid{r.axes, r.grid_params, r.partial, r.covers, r.accumulated};
}

}  // namespace tad::schedule
