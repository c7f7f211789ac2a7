#include "schedule/split.h"

#include "passes/split_loops.h"
#include "schedule/schedule.h"

namespace tad::schedule {

namespace {

passes::HostExpr constant(int64_t v) {
    passes::HostExpr e;
    e.value = v;
    return e;
}

// One of the split's kernels as a run along `axis` of `ways` programs, with the origins and writes
// of the backward it was cut from.
plan::Transposed run_of(const ir::Function &fn, const ad::Backward &from, const passes::Stash &stash, int axis,
                        int ways, const ad::Cleanup &cleanup) {
    plan::Transposed t;
    t.bwd.fn = cleanup(fn);
    t.bwd.origins = origins_by_name(t.bwd.fn, from, {stash});
    const passes::MemoryParams m = passes::memory_params(t.bwd.fn);
    for (size_t i = 0; i < t.bwd.fn.params.size(); ++i) {
        const std::string &name = t.bwd.fn.params[i].name;
        const ad::ParamOrigin &o = t.bwd.origins[i];
        if (o.kind == ad::ParamOrigin::Shadow && (m.stored.count(name) || m.accumulated.count(name)))
            t.bwd.writes[o.primal] = from.writes.at(o.primal);
    }
    t.axis = axis;
    t.split = true;
    t.trips = passes::TripCount{constant(0), constant(ways), constant(1), 1};
    return t;
}

}  // namespace

std::optional<SplitKernels> split(const ad::Backward &b, int ways, const ad::Cleanup &cleanup, std::string *report) {
    if (b.tape) return std::nullopt;
    std::string why;
    std::optional<passes::SplitLoops> s = passes::split_loops(b.fn, ways, &why);
    if (!s) {
        if (!why.empty()) *report += b.fn.name + ": loops not split: " + why + "\n";
        return std::nullopt;
    }
    SplitKernels out{run_of(s->sums, b, s->stash, s->axis, ways, cleanup),
                     run_of(s->rest, b, s->stash, s->axis, ways, cleanup), s->stash, guards_of({s->when})};
    std::string when;
    for (const passes::Inequality &q : s->when) when += (when.empty() ? "" : " and ") + q.str();
    *report += b.fn.name + ": loops split across " + std::to_string(ways) + " programs along grid axis " +
               std::to_string(s->axis) + " where " + when + "\n";
    return out;
}

bool splitting(const char *env) { return env && *env && switched_on("TAD_SPLIT_LOOPS", env); }

}  // namespace tad::schedule
