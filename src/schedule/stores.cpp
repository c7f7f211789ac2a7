#include "schedule/stores.h"

#include <algorithm>

#include "passes/adds_to_stores.h"
#include "passes/gather_shifts.h"
#include "passes/merge_adds.h"
#include "passes/passes.h"
#include "passes/unwrap_adds.h"
#include "passes/updates_to_stores.h"
#include "schedule/schedule.h"

namespace tad::schedule {

namespace {

// Each line of `text` (lines end in '\n') after `prefix`.
std::string prefixed(const std::string &prefix, const std::string &text) {
    std::string out;
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size() - 1);
        out += prefix + text.substr(at, end - at + 1);
        at = end + 1;
    }
    return out;
}

}  // namespace

std::string unwrap_adds(ad::Backward &b) {
    passes::UnwrappedAdds u = passes::unwrap_adds(b.fn);
    if (u.unwrapped) b.fn = passes::dce(passes::cse(u.fn));  // the same parameters: b.origins still holds
    return prefixed(b.fn.name + ": ", u.report);
}

std::string merge_adds(ad::Backward &b, std::set<std::string> *merged) {
    std::string report;
    passes::MergedAdds m = passes::merge_loop_adds(b.fn);
    if (!m.report.empty()) {
        merged->insert(m.params.begin(), m.params.end());
        b.fn = passes::dce(passes::cse(m.fn));  // the same parameters: b.origins still holds
        report += prefixed(b.fn.name + ": ", m.report);
    }
    passes::GatheredShifts g = passes::gather_shifted_adds(b.fn);
    if (!g.params.empty()) {
        merged->insert(g.params.begin(), g.params.end());
        b.fn = passes::dce(passes::cse(g.fn));
    }
    if (!g.report.empty()) report += prefixed(b.fn.name + ": ", g.report);
    return report;
}

std::optional<ad::Backward> stored_adds(const ad::Backward &b, const std::set<std::string> &merged,
                                        const std::set<std::string> &keep, const std::set<std::string> &aliased,
                                        plan::Guards *guards, std::string *report) {
    if (b.tape) return std::nullopt;  // its tape-sizing kernel is named after it: one variant only
    std::set<std::string> candidates;
    for (size_t i = 0; i < b.origins.size(); ++i) {
        const ad::ParamOrigin &o = b.origins[i];
        auto w = b.writes.find(o.primal);
        if (o.kind == ad::ParamOrigin::Shadow && merged.count(b.fn.params[i].name) && w != b.writes.end() &&
            w->second.kind == passes::GradWrite::Atomic && !w->second.split && !keep.count(o.primal))
            candidates.insert(b.fn.params[i].name);
    }
    passes::StoredAdds s = passes::adds_to_stores(b.fn, candidates);
    *report += prefixed(b.fn.name + ": ", s.report + s.kept);
    std::set<std::string> updatable;
    for (size_t i = 0; i < b.origins.size(); ++i) {
        const ad::ParamOrigin &o = b.origins[i];
        auto w = b.writes.find(o.primal);
        if (o.kind == ad::ParamOrigin::Shadow && w != b.writes.end() && w->second.kind == passes::GradWrite::Atomic &&
            !w->second.split && !aliased.count(o.primal))
            updatable.insert(b.fn.params[i].name);
    }
    // The updates' shadows keep their plan write (an accumulator holding the cotangent they read, which
    // other launches may share: a store of zero and an add, as a store of what they leave, change
    // nothing another kernel sees; another parameter of this launch on the same tensor would).
    passes::UpdatesToStores u = passes::updates_to_stores(s.fn, updatable);
    *report += prefixed(b.fn.name + ": ", u.report);
    for (const passes::UpdatedParam &p : u.updated)
        for (const plan::Guard &g : guards_of(p.alternatives))
            if (std::find(guards->begin(), guards->end(), g) == guards->end()) guards->push_back(g);
    if (s.stored.empty() && u.updated.empty()) return std::nullopt;
    ad::Backward out = b;
    out.fn = std::move(u.fn);
    for (const passes::StoredAdd &a : s.stored) {
        const std::string primal = b.origins.at(b.fn.param_index(a.param)).primal;
        out.writes[primal] = passes::GradWrite{passes::GradWrite::Store, "", {}, false, a.cover};
        for (const plan::Guard &g : guards_of(a.alternatives))
            if (std::find(guards->begin(), guards->end(), g) == guards->end()) guards->push_back(g);
    }
    return out;
}

}  // namespace tad::schedule
