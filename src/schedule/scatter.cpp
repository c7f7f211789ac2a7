#include "schedule/scatter.h"

#include <set>

#include "passes/split_scatter.h"

namespace tad::schedule {

std::optional<ad::Backward> split_scatter(ad::Backward &b, const ad::Cleanup &cleanup, std::string *why) {
    why->clear();
    std::set<std::string> shadows;  // of the split gradients, by their parameter in b.fn
    std::map<std::string, passes::GradWrite> writes;
    for (size_t i = 0; i < b.fn.params.size(); ++i) {
        const ad::ParamOrigin &o = b.origins[i];
        auto w = b.writes.find(o.primal);
        if (o.kind != ad::ParamOrigin::Shadow || w == b.writes.end() || !w->second.split) continue;
        shadows.insert(b.fn.params[i].name);
        writes[o.primal] = passes::GradWrite{passes::GradWrite::Atomic, "", {}, true, true, std::nullopt};
    }
    if (shadows.empty()) return std::nullopt;
    if (b.tape) return *why = "its backward keeps a tape", std::nullopt;
    passes::ScatterSplit s = passes::split_scatter(b.fn, shadows);
    if (!s.why.empty()) return *why = s.why, std::nullopt;
    ad::Backward scatter;
    scatter.fn = cleanup(s.scatter);
    for (const ir::Param &p : scatter.fn.params) scatter.origins.push_back(b.origins.at(b.fn.param_index(p.name)));
    scatter.writes = writes;
    ir::Function rest = cleanup(s.rest);
    std::vector<ad::ParamOrigin> origins;
    for (const ir::Param &p : rest.params) origins.push_back(b.origins.at(b.fn.param_index(p.name)));
    b.fn = std::move(rest);
    b.origins = std::move(origins);
    return scatter;
}

std::map<std::string, passes::GradWrite> without_split(std::map<std::string, passes::GradWrite> writes) {
    for (auto &[param, w] : writes)
        if (w.split) w = passes::GradWrite{};
    return writes;
}

}  // namespace tad::schedule
