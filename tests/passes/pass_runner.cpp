#include "pass_runner.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "passes/access.h"
#include "passes/adds_to_stores.h"
#include "passes/combine_atomics.h"
#include "passes/early_loads.h"
#include "passes/factor_sums.h"
#include "passes/fold_scatter.h"
#include "passes/fuse_loops.h"
#include "passes/gather_shifts.h"
#include "passes/lift_reductions.h"
#include "passes/merge_adds.h"
#include "passes/online_softmax.h"
#include "passes/passes.h"
#include "passes/pipeline_loops.h"
#include "passes/regrid.h"
#include "passes/remap_programs.h"
#include "passes/reverse_rereads.h"
#include "passes/rewrites.h"
#include "passes/run_once.h"
#include "passes/saved_values.h"
#include "passes/segment_atomics.h"
#include "passes/shift_invariance.h"
#include "passes/split_loops.h"
#include "passes/split_scatter.h"
#include "passes/stored_states.h"
#include "passes/transpose.h"
#include "passes/unwrap_adds.h"
#include "passes/updates_to_stores.h"
#include "passes/widen.h"
#include "support/error.h"
#include "support/text.h"

namespace tad::testing {

namespace {

std::string trim(const std::string &s) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::istringstream in(s);
    for (std::string p; std::getline(in, p, sep);)
        if (!trim(p).empty()) parts.push_back(trim(p));
    return parts;
}

// One step of a RUN line: the pass name and its key=value arguments.
struct Step {
    std::string pass;
    std::map<std::string, std::string> args;
};

Step parse_step(const std::string &text) {
    std::vector<std::string> words = split(text, ' ');
    Step s{words.empty() ? "" : words[0], {}};
    for (size_t i = 1; i < words.size(); ++i) {
        const size_t eq = words[i].find('=');
        if (eq == std::string::npos)
            fail(TAD_ERR_INVALID_ARGUMENT, "RUN: argument '" + words[i] + "' is not key=value");
        s.args[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    }
    return s;
}

std::string plan_text(const ir::Function &f, const Step &s) {
    const std::vector<std::string> wrt = split(s.args.count("wrt") ? s.args.at("wrt") : "", ',');
    const std::vector<std::string> outputs = split(s.args.count("outputs") ? s.args.at("outputs") : "", ',');
    std::string out;
    for (const auto &[param, w] : passes::plan_gradient_writes(f, wrt, outputs)) {
        out += param + ": ";
        if (w.kind == passes::GradWrite::Atomic) {
            out += "atomic\n";
            continue;
        }
        std::vector<std::string> guards;
        for (const auto &[a, b] : w.guards) guards.push_back(a + "==" + b);
        out += "store mirror=" + w.mirror + (guards.empty() ? "" : " guards=" + join(guards, ",")) + "\n";
    }
    return out;
}

std::string memory_text(const ir::Function &f) {
    const passes::MemoryParams m = passes::memory_params(f);
    auto set = [](const std::set<std::string> &s) { return join(std::vector<std::string>(s.begin(), s.end()), ", "); };
    std::string out = "loaded: " + set(m.loaded) + "\nstored: " + set(m.stored) +
                      "\naccumulated: " + set(m.accumulated) + "\noverwritten: " + set(m.overwritten) + "\n";
    for (const passes::Access &a : m.accesses) {
        out += std::string(ir::op_name(a.kind)) + " " + a.param + " ptr=%" + std::to_string(a.ptr);
        if (a.loop >= 0) out += " loop=" + std::to_string(a.loop);
        out += "\n";
    }
    return out;
}

// A line per stored parameter a program may write an element of twice: why, or the run-time
// conditions under which it does not ("none" when there is no such parameter).
std::string rewrites_text(const ir::Function &f) {
    std::string out;
    for (const passes::Rewrite &r : passes::rewrites(f)) {
        std::vector<std::string> alternatives;
        for (const std::vector<passes::Inequality> &gs : r.unless) {
            std::vector<std::string> all;
            for (const passes::Inequality &g : gs) all.push_back(g.str());
            alternatives.push_back(join(all, " and "));
        }
        out += r.param + " at op " + std::to_string(r.op) + ": " +
               (r.unless.empty() ? "rewritten: " + r.why : "once where " + join(alternatives, ", or ")) + "\n";
    }
    return out.empty() ? "none\n" : out;
}

std::string access_text(const ir::Function &f, const Step &s) {
    return passes::print(f, passes::analyze_access(f, split(s.args.count("wrt") ? s.args.at("wrt") : "", ',')));
}

ir::Function transform(const Step &s, const ir::Function &f) {
    if (s.pass == "cse") return passes::cse(f);
    if (s.pass == "dce") return passes::dce(f);
    if (s.pass == "drop-unused-params") return passes::drop_unused_params(f);
    fail(TAD_ERR_INVALID_ARGUMENT, "RUN: unknown pass '" + s.pass + "'");
}

// Per constexpr and role (the loop over G, then each axis), the retile proof's answer; then what
// free_tiles chooses.
std::string retile_text(const ir::Function &f, const Step &s) {
    std::vector<int> axes;
    for (const std::string &a : split(s.args.count("axes") ? s.args.at("axes") : "", ',')) axes.push_back(std::stoi(a));
    const std::string g = s.args.count("grid") ? s.args.at("grid") : "G";
    const std::string widened = s.args.count("widened") ? s.args.at("widened") : "";
    const int64_t width = s.args.count("width") ? std::stoll(s.args.at("width")) : 1;
    const int loop = passes::loop_over_grid(f, g);
    std::string out = loop < 0 ? "no loop over " + g + "\n" : "";
    for (const ir::Constexpr &c : f.constexprs) {
        std::vector<passes::TileRole> roles;
        if (loop >= 0) roles.push_back({-1, loop, true});
        for (int a : axes) roles.push_back({a, -1, true});
        for (const passes::TileRole &r : roles) {
            std::string why;
            const bool ok = passes::retile_proof(f, r, c.name, &why);
            out += c.name + (r.loop >= 0 ? " over " + g : " along axis " + std::to_string(r.axis)) + ": " +
                   (ok ? "free" : why) + "\n";
        }
    }
    for (const passes::FreeTile &t : passes::free_tiles(f, axes, g, widened, width))
        out += "free tile " + t.name + (t.axis < 0 ? " over " + g : " along axis " + std::to_string(t.axis)) + " at " +
               std::to_string(t.target) + "\n";
    return out;
}

// ", C x4 (at most 8, tiles BLOCK_M x C)": the factor at the traced sizes and what the launcher sizes
// it from; "" when not widened.
std::string widening_text(const passes::Widening &w) {
    if (w.name.empty()) return "";
    std::vector<std::string> tiles;
    for (const std::vector<std::string> &t : w.tiles) tiles.push_back(join(t, " x "));
    return ", " + w.name + " x" + std::to_string(w.width) + " (at most " + std::to_string(w.most) + ", tiles " +
           join(tiles, ", ") + ")";
}

std::string run_steps(const std::vector<std::string> &steps, ir::Function f) {
    std::string notes;  // what a pass that may decline said (regrid), before the IR
    for (size_t i = 0; i < steps.size(); ++i) {
        const Step s = parse_step(steps[i]);
        const bool last = i + 1 == steps.size();
        if (s.pass == "widen-proof") {  // axis=A constexpr=C: whether the kernel may run with C widened
            if (!last) fail(TAD_ERR_INVALID_ARGUMENT, "RUN: the analysis widen-proof must come last");
            std::string why;
            const int axis = s.args.count("axis") ? std::stoi(s.args.at("axis")) : 0;
            const bool ok = passes::widen_proof(f, axis, s.args.count("constexpr") ? s.args.at("constexpr") : "", &why);
            return ok ? "independent of " + s.args.at("constexpr") + "\n" : "not widened: " + why + "\n";
        }
        if (s.pass == "retile-proof") {  // axes=1,2 grid=G widened=C width=4: each constexpr's roles
            if (!last) fail(TAD_ERR_INVALID_ARGUMENT, "RUN: the analysis retile-proof must come last");
            return retile_text(f, s);
        }
        if (s.pass == "plan-gradient-writes" || s.pass == "memory-params" || s.pass == "access" ||
            s.pass == "rewrites") {
            if (!last) fail(TAD_ERR_INVALID_ARGUMENT, "RUN: the analysis " + s.pass + " must come last");
            if (s.pass == "access") return access_text(f, s);
            if (s.pass == "rewrites") return rewrites_text(f);
            return s.pass == "memory-params" ? memory_text(f) : plan_text(f, s);
        }
        if (s.pass == "regrid") {  // flush=atomic: one atomic add per program instead of a partial buffer
            passes::Regrid r = passes::regrid(f, s.args.count("flush") && s.args.at("flush") == "atomic");
            notes += "// " + passes::print(r);
            f = std::move(r.fn);
        } else if (
            s.pass ==
            "transpose-loops") {  // each transposed kernel, then the rest; copies=R widen=off keep=DV recompute=1
            const int copies = s.args.count("copies") ? std::stoi(s.args.at("copies")) : 8;
            const bool widen = !s.args.count("widen") || s.args.at("widen") != "off";
            const std::vector<std::string> keep = split(s.args.count("keep") ? s.args.at("keep") : "", ',');
            const int recompute = s.args.count("recompute") ? std::stoi(s.args.at("recompute")) : 0;
            passes::Transposition t =
                passes::transpose_loops(f, std::set<std::string>(keep.begin(), keep.end()), copies, widen, recompute);
            notes += t.report;
            for (const passes::Transposed &k : t.kernels) {
                const std::string problem = ir::verify(k.fn);
                notes += "// transposed d" + join(k.params, ", d") + " (grid axis " + std::to_string(k.axis) + ": " +
                         k.trips.str() + widening_text(k.widening) + ")\n" +
                         (problem.empty() ? ir::print(passes::cse(k.fn)) : "error: invalid IR: " + problem + "\n");
            }
            notes += "// rest\n";
            f = passes::dce(t.rest);
        } else if (s.pass == "split-loops") {  // ways=S: the sums kernel, then the rest (the output)
            std::string why;
            std::optional<passes::SplitLoops> sl =
                passes::split_loops(f, s.args.count("ways") ? std::stoi(s.args.at("ways")) : 8, &why);
            if (!sl) {
                notes += "// not split: " + why + "\n";
            } else {
                std::string when;
                for (const passes::Inequality &q : sl->when) when += (when.empty() ? "" : " and ") + q.str();
                const std::string problem = ir::verify(sl->sums);
                notes += "// split along grid axis " + std::to_string(sl->axis) + " into " + std::to_string(sl->ways) +
                         " when " + when + "; stash " + sl->stash.param + " [" + join(sl->stash.dims, ", ") +
                         "] per program\n// sums\n" +
                         (problem.empty() ? ir::print(passes::dce(passes::cse(sl->sums)))
                                          : "error: invalid IR: " + problem + "\n") +
                         "// rest\n";
                f = passes::dce(passes::cse(sl->rest));
            }
        } else if (s.pass == "updates-to-stores") {  // params=DK,DQ: the candidates
            const std::vector<std::string> ps = split(s.args.count("params") ? s.args.at("params") : "", ',');
            passes::UpdatesToStores u = passes::updates_to_stores(f, std::set<std::string>(ps.begin(), ps.end()));
            for (const std::string &line : split(u.report, '\n')) notes += "// " + line + "\n";
            f = std::move(u.fn);
        } else if (s.pass == "run-loops-once") {
            std::optional<passes::RunOnce> once = passes::run_loops_once(f);
            if (!once) return notes + "// no loop runs once\n";
            std::string where;
            for (const passes::Inequality &g : once->guards) where += (where.empty() ? "" : " and ") + g.str();
            notes += "// " + std::to_string(once->loops) + " loop(s) run once where " + where + "\n";
            f = passes::dce(passes::cse(once->fn));
        } else if (s.pass == "unwrap-adds") {
            passes::UnwrappedAdds u = passes::unwrap_adds(f);
            for (const std::string &line : split(u.report, '\n')) notes += "// " + line + "\n";
            f = passes::dce(passes::cse(u.fn));
        } else if (s.pass == "merge-loop-adds") {
            passes::MergedAdds m = passes::merge_loop_adds(f);
            for (const std::string &line : split(m.report, '\n')) notes += "// " + line + "\n";
            f = passes::dce(passes::cse(m.fn));
        } else if (s.pass == "gather-shifted-adds") {
            passes::GatheredShifts g = passes::gather_shifted_adds(f);
            for (const std::string &line : split(g.report, '\n')) notes += "// " + line + "\n";
            f = passes::dce(passes::cse(g.fn));
        } else if (s.pass == "adds-to-stores") {  // params=DX,DW: the candidates
            const std::vector<std::string> params = split(s.args.count("params") ? s.args.at("params") : "", ',');
            passes::StoredAdds a = passes::adds_to_stores(f, std::set<std::string>(params.begin(), params.end()));
            for (const std::string &line : split(a.report + a.kept, '\n')) notes += "// " + line + "\n";
            for (const passes::StoredAdd &st : a.stored)
                if (st.cover) notes += "// " + st.param + " covered\n";
            f = std::move(a.fn);
        } else if (s.pass == "remap-programs") {  // pick=1: go on with the second rewrite
            std::string why;
            std::vector<passes::Remapped> r = passes::remap_programs(f, &why);
            if (r.empty()) return notes + "// not remapped: " + why + "\n";
            for (const passes::Remapped &m : r) notes += "// coordinates: " + m.map.str() + "\n";
            const size_t pick = s.args.count("pick") ? std::stoul(s.args.at("pick")) : 0;
            if (pick >= r.size()) return notes + "// no rewrite " + std::to_string(pick) + "\n";
            f = std::move(r[pick].fn);
        } else if (s.pass == "pipeline-loops") {
            passes::PipelinedLoops p = passes::pipeline_loops(f);
            for (const std::string &line : split(passes::print(p), '\n')) notes += "// " + line + "\n";
            f = std::move(p.fn);
        } else if (s.pass == "lift-reductions") {
            passes::LiftedReductions l = passes::lift_reductions(f);
            notes += "// lifted: " + std::to_string(l.lifted) + "\n";
            f = std::move(l.fn);
        } else if (s.pass == "factor-sums") {
            passes::FactoredSums fs = passes::factor_sums(f);
            notes += "// factored: " + std::to_string(fs.factored) + "\n";
            f = passes::dce(fs.fn);  // the increments at the factor's value, now unused
        } else if (s.pass == "fuse-loops") {  // cse and dce after, as the driver runs it
            passes::FusedLoops fl = passes::fuse_loops(f);
            notes += "// fused: " + std::to_string(fl.fused) + "\n";
            f = passes::dce(passes::cse(fl.fn));
        } else if (s.pass == "reverse-rereads") {
            passes::ReversedLoops r = passes::reverse_rereads(f);
            notes +=
                "// reversed: " + std::to_string(r.loops.size()) + (r.why.empty() ? "" : " (" + r.why + ")") + "\n";
            f = std::move(r.fn);
        } else if (s.pass == "early-loads") {
            passes::EarlyLoads e = passes::early_loads(f);
            notes += "// loads moved: " + std::to_string(e.moved) + "\n";
            f = std::move(e.fn);
        } else if (s.pass == "segment-atomics") {
            passes::SegmentedAtomics sa = passes::segment_atomics(f);
            notes += "// segmented: " + join(sa.params, ", ") + "; runs: " + std::to_string(sa.runs) + "\n";
            std::vector<std::string> when;
            for (const passes::Inequality &q : sa.few_when) when.push_back(q.str());
            notes += "// few addresses where: " + (sa.few ? join(when, " and ") : "never") + "\n";
            const bool few = s.args.count("form") && s.args.at("form") == "few";  // form=few: the form without lanes
            if (few && !sa.few)
                fail(TAD_ERR_INVALID_ARGUMENT, "RUN: segment-atomics form=few: the rewrite has no such form");
            f = passes::dce(passes::cse(few ? *sa.few : sa.fn));
        } else if (s.pass == "combine-atomics") {
            passes::CombinedAtomics c = passes::combine_atomics(f);
            notes += "// combined: " + join(c.params, ", ") + "\n";
            f = passes::dce(passes::cse(c.fn));
        } else if (s.pass == "split-scatter" ||
                   s.pass == "fold-scatter") {  // params=A,B: the scatter kernel, then the rest
            const std::vector<std::string> list = split(s.args.count("params") ? s.args.at("params") : "", ',');
            const std::set<std::string> params(list.begin(), list.end());
            const bool fold = s.pass == "fold-scatter";
            passes::ScatterSplit t;
            if (fold) {
                passes::ScatterFold folded = passes::fold_scatter(f, params);
                t = {std::move(folded.rest), std::move(folded.scatter), folded.why};
            } else {
                t = passes::split_scatter(f, params);
            }
            if (!t.why.empty()) return notes + (fold ? "// not folded: " : "// not split: ") + t.why + "\n";
            // The rest is verified by the runner after the last pass; the scatter kernel here.
            const std::string problem = ir::verify(t.scatter);
            notes +=
                "// scatter\n" +
                (problem.empty() ? ir::print(passes::cleanup(t.scatter)) : "error: invalid IR: " + problem + "\n") +
                "// rest\n";
            f = passes::dce(t.rest);
        } else if (s.pass == "hold-shift-invariant-maxima") {  // outputs=A,B: differentiated
            std::string report;
            f = passes::hold_shift_invariant_maxima(f, split(s.args.count("outputs") ? s.args.at("outputs") : "", ','),
                                                    &report);
            for (const std::string &line : split(report, '\n'))
                if (!line.empty()) notes += "// " + line + "\n";
        } else if (s.pass == "closed-form-online-softmax") {  // outputs=A,B: differentiated; kept=C,D
            std::string report;
            auto list = [&](const std::string &key) { return split(s.args.count(key) ? s.args.at(key) : "", ','); };
            passes::ClosedForm c = passes::closed_form_online_softmax(f, list("outputs"), list("kept"), &report);
            f = std::move(c.fn);
            for (const std::string &line : split(report, '\n'))
                if (!line.empty()) notes += "// " + line + "\n";
            for (const auto &alternatives : c.guards) notes += "// guard:" + passes::guards_text(alternatives) + "\n";
        } else if (s.pass == "reuse-saved-values" || s.pass == "reuse-stored-states") {  // kept=C,D
            std::string report;
            const std::vector<std::string> kept = split(s.args.count("kept") ? s.args.at("kept") : "", ',');
            passes::SavedReuse r = s.pass == "reuse-saved-values" ? passes::reuse_saved_values(f, kept, &report)
                                                                  : passes::reuse_stored_states(f, kept, &report);
            f = std::move(r.fn);
            for (const std::string &line : split(report, '\n'))
                if (!line.empty()) notes += "// " + line + "\n";
            for (const auto &alternatives : r.guards) notes += "// guard:" + passes::guards_text(alternatives) + "\n";
        } else {
            f = transform(s, f);
        }
        const std::string problem = ir::verify(f);
        if (!problem.empty()) return "error: invalid IR after " + s.pass + ": " + problem + "\n" + ir::print(f);
    }
    return notes + ir::print(f);
}

}  // namespace

std::string run_line(const std::string &file_text) {
    const size_t at = file_text.find("// RUN:");
    if (at == std::string::npos) return "";
    const size_t end = file_text.find('\n', at);
    return trim(file_text.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7));
}

std::string run_passes(const std::string &pipeline, ir::Function f) {
    try {
        return run_steps(split(pipeline, '|'), std::move(f));
    } catch (const Error &e) {
        return std::string("error: ") + e.what() + "\n";
    }
}

}  // namespace tad::testing
