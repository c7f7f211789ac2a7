#include "schedule/scatter.h"

#include <set>

#include "passes/fold_scatter.h"
#include "passes/split_scatter.h"
#include "support/text.h"

namespace tad::schedule {

namespace {

std::vector<ad::ParamOrigin> origins_of(const ir::Function &fn, const ad::Backward &from, const std::string &hits) {
    std::vector<ad::ParamOrigin> out;
    for (const ir::Param &p : fn.params)
        out.push_back(p.name == hits ? ad::ParamOrigin{ad::ParamOrigin::Hits, ""}
                                     : from.origins.at(from.fn.param_index(p.name)));
    return out;
}

}  // namespace

std::optional<ad::Backward> split_scatter(ad::Backward &b, const ad::Cleanup &cleanup, std::string *why,
                                          std::string *report) {
    why->clear();
    std::set<std::string> shadows;  // of the split gradients, by their parameter in b.fn
    std::map<std::string, passes::GradWrite> writes;
    for (size_t i = 0; i < b.fn.params.size(); ++i) {
        const ad::ParamOrigin &o = b.origins[i];
        auto w = b.writes.find(o.primal);
        if (o.kind != ad::ParamOrigin::Shadow || w == b.writes.end() || !w->second.split) continue;
        shadows.insert(b.fn.params[i].name);
        writes[o.primal] = passes::GradWrite{passes::GradWrite::Atomic, "", {}, true, std::nullopt};
    }
    if (shadows.empty()) return std::nullopt;
    if (b.tape) return *why = "its backward keeps a tape", std::nullopt;
    passes::ScatterFold fold = passes::fold_scatter(b.fn, shadows);
    ir::Function rest, scatter_fn;
    if (fold.why.empty()) {
        rest = std::move(fold.rest);
        scatter_fn = std::move(fold.scatter);
        for (auto &[param, w] : writes) w.folded = b.writes.at(param).folded = true;
        *report += b.fn.name + ": " + join(std::vector<std::string>(shadows.begin(), shadows.end())) +
                   ": the scatter's adds folded into the stores they land on\n";
    } else {
        passes::ScatterSplit s = passes::split_scatter(b.fn, shadows);
        if (!s.why.empty()) return *why = s.why, std::nullopt;
        rest = std::move(s.rest);
        scatter_fn = std::move(s.scatter);
        *report += b.fn.name + ": scatter not folded: " + fold.why + "\n";
    }
    ad::Backward scatter;
    scatter.fn = cleanup(scatter_fn);
    scatter.origins = origins_of(scatter.fn, b, fold.hits);
    scatter.writes = writes;
    rest = cleanup(rest);
    b.origins = origins_of(rest, b, fold.hits);
    b.fn = std::move(rest);
    return scatter;
}

std::map<std::string, passes::GradWrite> without_split(std::map<std::string, passes::GradWrite> writes) {
    for (auto &[param, w] : writes)
        if (w.split) w = passes::GradWrite{};
    return writes;
}

}  // namespace tad::schedule
