#include "schedule/schedule.h"

#include <algorithm>

#include "passes/access.h"
#include "support/error.h"

namespace tad::schedule {

namespace {

// One way to write a parameter's gradient, and the conditions it needs.
struct Option {
    passes::GradWrite write;
    plan::Guards guards;
};

// A store mirroring the forward's store when the addresses coincide (disjoint by the forward's race
// freedom), a store where the access analysis proves the writes disjoint, and atomics; each option
// with guards is followed by the next. A store's buffer needs no zero fill only where the access
// analysis' coverage holds at run time: that the forward's store fills its output is not known (a
// mask short of the row, a grid short of the rows leave elements the backward must read as zero).
std::vector<Option> options(const passes::GradWrite &mirror, const passes::GradAccess *access) {
    std::vector<Option> out;
    if (mirror.kind == passes::GradWrite::Store) {
        Option o{mirror, {}};
        o.write.cover = access && access->cls == passes::LoadAccess::Disjoint ? access->cover : std::nullopt;
        for (const auto &[a, b] : mirror.guards)
            o.guards.push_back({plan::Guard::Equal, passes::Poly::symbol(a), passes::Poly::symbol(b), {}});
        o.write.guards.clear();
        out.push_back(o);
        if (o.guards.empty()) return out;
    }
    const bool split = access && access->cls == passes::LoadAccess::Scatter && access->split;
    if (access && (access->cls == passes::LoadAccess::Disjoint || split)) {
        Option o{passes::GradWrite{passes::GradWrite::Store, "", {}, split, access->cover}, {}};
        if (!access->alternatives.empty()) o.guards = guards_of(access->alternatives);
        out.push_back(o);
        if (o.guards.empty()) return out;
    }
    out.push_back(Option{});
    return out;
}

void add_guards(plan::Guards &to, const plan::Guards &from) {
    for (const plan::Guard &g : from)
        if (std::find(to.begin(), to.end(), g) == to.end()) to.push_back(g);
}

}  // namespace

std::vector<WritePlan> gradient_writes(const ir::Function &fwd, const ad::GradSpec &spec,
                                       const std::set<std::string> &shared) {
    const std::map<std::string, passes::GradWrite> mirrors = passes::plan_gradient_writes(fwd, spec.wrt, spec.outputs);
    const std::vector<passes::GradAccess> accesses = passes::analyze_access(fwd, spec.wrt);
    std::map<std::string, std::vector<Option>> choices;
    for (const auto &[param, w] : mirrors) {
        const passes::GradAccess *access = nullptr;
        for (const passes::GradAccess &a : accesses)
            if (a.param == param) access = &a;
        choices[param] = shared.count(param) ? std::vector<Option>{Option{}} : options(w, access);
    }
    // The first variant takes every parameter's first option; each next one moves the parameters
    // whose option has guards to their next option, until a variant needs none.
    std::map<std::string, size_t> at;
    std::vector<WritePlan> out;
    for (;;) {
        WritePlan plan;
        bool guarded = false;
        for (const auto &[param, opts] : choices) {
            const Option &o = opts[at[param]];
            plan.writes[param] = o.write;
            add_guards(plan.guards, o.guards);
            guarded = guarded || !o.guards.empty();
        }
        out.push_back(plan);
        if (!guarded) return out;
        for (const auto &[param, opts] : choices)
            if (!opts[at[param]].guards.empty()) ++at[param];
    }
}

plan::Guards guards_of(const std::vector<std::vector<passes::Inequality>> &alternatives) {
    auto all = [](const std::vector<passes::Inequality> &gs) {
        plan::Guards out;
        for (const passes::Inequality &g : gs) out.push_back({plan::Guard::AtLeast, g.lhs, g.rhs, {}});
        return out;
    };
    if (alternatives.size() == 1) return all(alternatives[0]);
    plan::Guard any{plan::Guard::Any, {}, {}, {}};
    for (const auto &gs : alternatives) any.any.push_back(all(gs));
    return {any};
}

bool all_atomic(const WritePlan &w) {
    for (const auto &[param, g] : w.writes)
        if (g.kind != passes::GradWrite::Atomic) return false;
    return true;
}

std::string print(const WritePlan &w) {
    std::string s;
    for (const auto &[param, g] : w.writes) {
        s += param + ": ";
        if (g.kind == passes::GradWrite::Atomic) {
            s += "atomic\n";
            continue;
        }
        s += g.mirror.empty() ? "store, disjoint" : "store mirroring " + g.mirror;
        s += g.cover ? ", covering where its layout matches" : ", not covering";
        s += g.split ? ", scatter split\n" : "\n";
    }
    if (!w.guards.empty()) {
        s += "when";
        for (size_t i = 0; i < w.guards.size(); ++i) s += (i ? " and " : " ") + w.guards[i].str();
        s += "\n";
    }
    return s;
}

std::vector<ad::ParamOrigin> origins_by_name(const ir::Function &fn, const ad::Backward &from,
                                             const std::vector<passes::Stash> &stashes) {
    std::vector<ad::ParamOrigin> out;
    for (const ir::Param &p : fn.params) {
        const int i = from.fn.param_index(p.name);
        const bool stash =
            std::any_of(stashes.begin(), stashes.end(), [&](const passes::Stash &s) { return s.param == p.name; });
        out.push_back(i >= 0  ? from.origins[i]
                      : stash ? ad::ParamOrigin{ad::ParamOrigin::Stash, p.name}
                              : ad::ParamOrigin{ad::ParamOrigin::Primal, p.name});
    }
    return out;
}

bool switched_on(const char *name, const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "on") return true;
    if (v == "off") return false;
    fail(TAD_ERR_INVALID_ARGUMENT, std::string(name) + "='" + v + "': expected on or off");
}

bool early_loading(const char *env) { return switched_on("TAD_EARLY_LOADS", env); }

bool lifting_reductions(const char *env) { return switched_on("TAD_LIFT_REDUCTIONS", env); }

bool fusing_loops(const char *env) { return switched_on("TAD_FUSE_LOOPS", env); }

bool reversing_rereads(const char *env) { return switched_on("TAD_REVERSE_REREADS", env); }

}  // namespace tad::schedule
