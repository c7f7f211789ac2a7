#include "schedule/schedule.h"

namespace tad::schedule {

std::vector<WritePlan> gradient_writes(const ir::Function &fwd, const ad::GradSpec &spec,
                                       const std::set<std::string> &shared) {
    WritePlan first{passes::plan_gradient_writes(fwd, spec.wrt, spec.outputs), {}};
    for (auto &[param, w] : first.writes)
        if (shared.count(param)) w = passes::GradWrite{};
    WritePlan fallback = first;
    for (auto &[param, w] : fallback.writes)
        if (!w.guards.empty()) {
            first.guards.insert(first.guards.end(), w.guards.begin(), w.guards.end());
            w = passes::GradWrite{};
        }
    if (first.guards.empty()) return {first};
    return {first, fallback};
}

std::string print(const WritePlan &w) {
    std::string s;
    for (const auto &[param, g] : w.writes) {
        s += param + ": ";
        if (g.kind == passes::GradWrite::Atomic) {
            s += "atomic\n";
            continue;
        }
        s += "store mirroring " + g.mirror + (g.covers ? "" : ", not covering");
        for (const auto &[a, b] : g.guards) s += ", if " + a + " == " + b;
        s += "\n";
    }
    if (!w.guards.empty()) {
        s += "when";
        for (const auto &[a, b] : w.guards) s += " " + a + " == " + b;
        s += "\n";
    }
    return s;
}

}  // namespace tad::schedule
