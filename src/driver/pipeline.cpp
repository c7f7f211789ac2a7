#include "driver/pipeline.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>

#include "driver/launch_nodes.h"
#include "driver/preconditions.h"
#include "driver/residuals.h"
#include "emit/emit.h"
#include "flow/flow.h"
#include "flow/trace.h"
#include "passes/access.h"
#include "passes/combine_atomics.h"
#include "passes/early_loads.h"
#include "passes/factor_sums.h"
#include "passes/fuse_loops.h"
#include "passes/lift_reductions.h"
#include "passes/passes.h"
#include "passes/pipeline_loops.h"
#include "passes/remap_programs.h"
#include "passes/reverse_rereads.h"
#include "passes/rewrites.h"
#include "passes/run_once.h"
#include "passes/segment_atomics.h"
#include "schedule/closed_form.h"
#include "schedule/regrid.h"
#include "schedule/scatter.h"
#include "schedule/schedule.h"
#include "schedule/split.h"
#include "schedule/stores.h"
#include "schedule/transpose.h"
#include "support/error.h"
#include "support/text.h"

namespace tad::driver {

namespace {

// ---- TAD_DUMP_IR -------------------------------------------------------------------------------

bool dumping(const std::string &stage) {
    const char *env = std::getenv("TAD_DUMP_IR");
    if (!env || !*env || std::string(env) == "0") return false;
    return std::string(env) == "1" || ("," + std::string(env) + ",").find("," + stage + ",") != std::string::npos;
}

void dump_text(const std::string &stage, const std::string &what, const std::string &text) {
    if (dumping(stage)) std::cerr << "// ---- " << stage << ": " << what << "\n" << text << std::flush;
}

const ir::Function &dump(const std::string &stage, const ir::Function &f) {
    dump_text(stage, f.name, ir::print(f));
    return f;
}

// What every kernel reverse and forward mode derive goes through (passes::cleanup), stage by stage:
// "ad" is the kernel as the mode built it.
ir::Function cleanup(const ir::Function &derived) {
    ir::Function f = passes::cse(dump("ad", derived));
    f = passes::dce(dump("cse", f));
    f = passes::drop_unused_params(dump("dce", f));
    return dump("drop-unused-params", f);
}

// ---- names -------------------------------------------------------------------------------------

// "ACTIVATION='gelu'" -> "_ACTIVATION_gelu": a readable, valid suffix for kernel names.
std::string suffix_of(const plan::Key &key) {
    std::string s;
    for (const auto &[name, value] : key) {
        s += "_" + name + "_";
        for (char c : value)
            if (std::isalnum(static_cast<unsigned char>(c)))
                s += c;
            else if (c != '\'')
                s += '_';
    }
    return s;
}

plan::Key key_of(const ir::Function &f) {
    plan::Key key;
    for (const std::string &name : f.specialized) {
        if (f.param_index(name) >= 0) key.emplace_back(name, plan::kNotNone);
        for (const ir::Constexpr &c : f.constexprs)
            if (c.name == name) key.emplace_back(name, c.literal);
    }
    return key;
}

// ---- stages ------------------------------------------------------------------------------------

Derived lower_launch(const frontend::KernelFile &kf, JsonRef launch) {
    Derived d;
    d.kernel = launch.at("kernel").str();
    d.bindings = flow::bindings_of(kf, launch);
    d.forward = dump("cse", passes::cse(dump("lower", frontend::lower_kernel(kf, d.kernel, d.bindings))));
    d.specialization.key = key_of(d.forward);
    d.tensors = flow::tensors_of(launch);
    return d;
}

std::string print_flow(const flow::Flow &f, const std::vector<Derived> &ls) {
    std::string s;
    auto list = [](const std::vector<std::string> &v) {
        std::string out;
        for (const std::string &x : v) out += " " + x;
        return out;
    };
    for (size_t k = 0; k < ls.size(); ++k)
        s += "launch " + std::to_string(k) + " " + ls[k].kernel + ": wrt" + list(f.specs[k].wrt) + "; outputs" +
             list(f.specs[k].outputs) + "; overwritten" + list(f.specs[k].overwritten) + "; rewritten" +
             list(f.specs[k].rewritten) + "\n";
    for (const plan::TensorRef &t : f.shared)
        s += "shared " + std::to_string(t.kind) + ":" + std::to_string(t.index) + "\n";
    return s;
}

flow::Flow analyze_flow(const frontend::KernelFile &kf, JsonRef trace, const std::vector<Derived> &ls) {
    std::vector<flow::Launch> launches;
    for (const Derived &d : ls) launches.push_back({d.kernel, &d.forward, d.tensors, passes::memory_params(d.forward)});
    flow::Flow f = flow::analyze(flow::call_of(kf, trace), launches);
    dump_text("flow", kf.stub.name, print_flow(f, ls));
    return f;
}

std::set<std::string> shared_params(const Derived &d, const std::set<plan::TensorRef> &shared) {
    std::set<std::string> out;
    for (const auto &[param, t] : d.tensors)
        if (shared.count(t)) out.insert(param);
    return out;
}

// Parameters whose tensor another parameter of the launch also reaches.
std::set<std::string> aliased_params(const Derived &d) {
    std::set<std::string> out;
    for (const auto &[p, t] : d.tensors)
        for (const auto &[q, u] : d.tensors)
            if (p != q && t == u) out.insert(p);
    return out;
}

// Gradient parameters whose shadow other launches, or other parameters of this launch, also write:
// they keep atomic adds (a kernel that owns its elements would overwrite the others' sums).
std::set<std::string> keep_atomic(const Derived &d, const std::set<plan::TensorRef> &shared) {
    std::set<std::string> keep = shared_params(d, shared), aliased = aliased_params(d);
    keep.insert(aliased.begin(), aliased.end());
    return keep;
}

// Running sums' loop-invariant factors taken out, then sibling loops fused (factor_sums.h,
// fuse_loops.h): where a loop no longer needs the one before it, the two read their input once.
void fuse(ir::Function &fn, std::string *report) {
    passes::FactoredSums factored = passes::factor_sums(fn);
    if (factored.factored == 0) return;
    factored.fn = passes::dce(factored.fn);  // the increments at the factor's value, now unused
    passes::FusedLoops fused = passes::fuse_loops(factored.fn);
    if (fused.fused == 0) return;  // the factors alone save a multiplication per lane; keep the loops as written
    dump("factor-sums", factored.fn);
    fn = passes::dce(passes::cse(fused.fn));
    dump("fuse-loops", fn);
    *report += fn.name + ": " + std::to_string(factored.factored) +
               " running sum(s) with a loop-invariant factor taken out; " + std::to_string(fused.fused) +
               " pair(s) of loops fused\n";
}

// The schedule passes after the re-grid and the segments: atomic adds combined, the re-grid's loop
// pipelined, reductions lifted, loops fused, loads issued earlier (`report` gets what each did).
void schedule_rest(ad::Backward &b, bool regridded, std::string *report) {
    passes::CombinedAtomics c = passes::combine_atomics(b.fn);
    if (!c.params.empty()) {
        b.fn = passes::dce(passes::cse(c.fn));  // the same parameters: b.origins still holds
        dump("combine-atomics", b.fn);
        std::string params;
        for (const std::string &p : c.params) params += (params.empty() ? "" : ", ") + p;
        *report += b.fn.name + ": atomic adds to " + params +
                   " combined where a tile's active lanes share at most two addresses\n";
    }
    // Only the re-grid's loop: its iterations were the forward's programs, which share nothing a
    // load could see change (pipeline_loops.h); a loop the user wrote may carry such a dependency.
    passes::PipelinedLoops pipelined = regridded ? passes::pipeline_loops(b.fn) : passes::PipelinedLoops{};
    if (!pipelined.loops.empty()) {
        *report += b.fn.name + ": " + passes::print(pipelined);
        b.fn = std::move(pipelined.fn);
        dump("pipeline-loops", b.fn);
    }
    if (schedule::lifting_reductions(std::getenv("TAD_LIFT_REDUCTIONS"))) {
        passes::LiftedReductions lifted = passes::lift_reductions(b.fn);
        if (lifted.lifted > 0) {
            *report += b.fn.name + ": " + std::to_string(lifted.lifted) +
                       " loop-carried reduction(s) accumulated lane by lane, reduced after the loop\n";
            b.fn = std::move(lifted.fn);
            dump("lift-reductions", b.fn);
        }
    }
    if (schedule::fusing_loops(std::getenv("TAD_FUSE_LOOPS"))) fuse(b.fn, report);
    if (schedule::reversing_rereads(std::getenv("TAD_REVERSE_REREADS"))) {
        passes::ReversedLoops reversed = passes::reverse_rereads(b.fn);
        if (!reversed.loops.empty()) {
            *report += b.fn.name + ": " + std::to_string(reversed.loops.size()) +
                       " loop(s) that read again what an earlier loop read run last iteration first\n";
            b.fn = std::move(reversed.fn);
            dump("reverse-rereads", b.fn);
        } else if (!reversed.why.empty()) {
            *report += b.fn.name +
                       ": a loop that reads again what an earlier loop read keeps its order: " + reversed.why + "\n";
        }
    }
    if (schedule::early_loading(std::getenv("TAD_EARLY_LOADS"))) {
        passes::EarlyLoads early = passes::early_loads(b.fn);
        if (early.moved > 0) {
            *report += b.fn.name + ": " + std::to_string(early.moved) + " load(s) issued earlier in their segment\n";
            b.fn = std::move(early.fn);
            dump("early-loads", b.fn);
        }
    }
}

// The variant of `b` (re-gridded as `regrid` says); with `few`, preceded by the variant of
// segment_atomics.h's form without the lanes' own adds (kernel name + "_few"), under its condition
// that no tile spans more than 16 addresses (`report` gets what the passes did).
std::vector<plan::KernelVariant> segmented(ad::Backward b, const plan::Guards &guards,
                                           const std::optional<plan::Regrid> &regrid, bool few, std::string *report) {
    std::vector<plan::KernelVariant> out;
    passes::SegmentedAtomics sa = passes::segment_atomics(b.fn);
    if (!sa.params.empty()) {
        std::string params;
        for (const std::string &p : sa.params) params += (params.empty() ? "" : ", ") + p;
        const std::string runs = " (" + std::to_string(sa.runs) + " run(s) carried across a loop)";
        if (few && sa.few) {
            ad::Backward fb = b;
            fb.fn = passes::dce(passes::cse(*sa.few));
            fb.fn.name += "_few";
            dump("segment-atomics", fb.fn);
            plan::Guards with = guards;
            std::string when;
            for (const passes::Inequality &q : sa.few_when) {
                with.push_back({plan::Guard::AtLeast, q.lhs, q.rhs, {}});
                when += (when.empty() ? "" : " and ") + q.str();
            }
            *report += fb.fn.name + ": atomic adds to " + params + " by segments of one address" + runs +
                       ", every tile's addresses by segments where " + when + "\n";
            schedule_rest(fb, regrid.has_value(), report);
            out.push_back({std::move(fb), with, regrid, {}, true, std::nullopt, std::nullopt});
        }
        b.fn = passes::dce(passes::cse(sa.fn));
        dump("segment-atomics", b.fn);
        *report += b.fn.name + ": atomic adds to " + params + " by segments of one address" + runs +
                   (sa.few && few ? ", past 16 addresses a tile's lanes add on their own" : "") + "\n";
    }
    schedule_rest(b, regrid.has_value(), report);
    out.push_back({std::move(b), guards, regrid, {}, true, std::nullopt, std::nullopt});
    return out;
}

// The variants of `b`, re-gridded where its gradients are reduced over the grid; where the
// re-gridded kernel needs run-time conditions, followed by `b` on the forward's grid (kernel name +
// "_unregridded") for the launches that fail them, or, without `fallback` (one variant wanted),
// not re-gridded.
std::vector<plan::KernelVariant> variants(ad::Backward b, const plan::Guards &guards, bool few, std::string *report,
                                          bool fallback = true) {
    const schedule::GridReduction mode = schedule::grid_reduction(std::getenv("TAD_GRID_REDUCTION"));
    ad::Backward kept = b;
    plan::Guards with = guards;
    std::string what;
    std::optional<plan::Regrid> regrid = schedule::regrid(b, mode, &with, &what);
    if (!fallback && with.size() != guards.size()) {
        *report += kept.fn.name +
                   ": not re-gridded: it would need run-time conditions, and this variant has no "
                   "fallback\n";
        return segmented(std::move(kept), guards, std::nullopt, few, report);
    }
    dump("regrid", b.fn);
    *report += b.fn.name + ": " + what;
    std::vector<plan::KernelVariant> out = segmented(std::move(b), with, regrid, few, report);
    if (with.size() == guards.size()) return out;
    kept.fn.name += "_unregridded";
    for (plan::KernelVariant &v : segmented(std::move(kept), guards, std::nullopt, few, report))
        out.push_back(std::move(v));
    return out;
}

// The variant that runs `b`'s loops split across programs (schedule/split.h), where the split
// applies: its reductions lifted and its loops fused first, as schedule_rest would, then each of its
// two kernels through the passes the rest gets.
void push_split(plan::Specialization &sp, const ad::Backward &b, const plan::Guards &guards, std::string *report) {
    if (!schedule::splitting(std::getenv("TAD_SPLIT_LOOPS"))) return;
    ad::Backward c = b;
    if (schedule::lifting_reductions(std::getenv("TAD_LIFT_REDUCTIONS"))) {
        passes::LiftedReductions lifted = passes::lift_reductions(c.fn);
        if (lifted.lifted > 0) c.fn = std::move(lifted.fn);
    }
    std::string fused;
    if (schedule::fusing_loops(std::getenv("TAD_FUSE_LOOPS"))) fuse(c.fn, &fused);
    std::optional<schedule::SplitKernels> s = schedule::split(c, 8, cleanup, report);
    if (!s) return;
    plan::Guards all = guards;
    for (const plan::Guard &g : s->guards)
        if (std::find(all.begin(), all.end(), g) == all.end()) all.push_back(g);
    dump("split", s->sums.bwd.fn);
    dump("split", s->rest.bwd.fn);
    s->rest.bwd = std::move(segmented(std::move(s->rest.bwd), {}, std::nullopt, false, report).back().bwd);
    // The sums kernel's forms (segment_atomics.h: the one without the lanes' own adds under its
    // condition first), each beside the one rest kernel.
    for (plan::KernelVariant &sums : segmented(std::move(s->sums.bwd), all, std::nullopt, true, report)) {
        plan::Transposed t = s->sums;
        t.bwd = std::move(sums.bwd);
        plan::KernelVariant v{b,     std::move(sums.guards), std::nullopt, {std::move(t), s->rest},
                              false, std::nullopt,           std::nullopt};
        v.stashes = {s->stash};
        sp.variants.push_back(std::move(v));
    }
}

// The variant of `b` with the adds no two writes share stored (schedule/stores.h), then, where that
// needs guards or none is stored, `b` itself; the split variant of the first of them before them.
void push_variants(plan::Specialization &sp, ad::Backward b, const plan::Guards &guards,
                   const std::set<std::string> &merged, const std::set<std::string> &keep,
                   const std::set<std::string> &aliased, const std::optional<ad::Backward> &scatter,
                   std::string *report) {
    plan::Guards with = guards;
    std::optional<ad::Backward> stored =
        scatter ? std::nullopt : schedule::stored_adds(b, merged, keep, aliased, &with, report);
    if (!scatter) push_split(sp, stored ? *stored : b, stored ? with : guards, report);
    if (stored) {
        dump("stores", stored->fn);
        for (plan::KernelVariant &v : variants(std::move(*stored), with, true, report))
            sp.variants.push_back(std::move(v));
        if (with.size() == guards.size()) return;
        b.fn.name += "_adds";
    }
    for (plan::KernelVariant &v : variants(std::move(b), guards, true, report)) {
        v.scatter = scatter;
        sp.variants.push_back(std::move(v));
    }
}

// The variant that runs `rest`, then the transposed kernels `t` (the rest's form with the lanes' own
// adds only: a `few` twin would need its transposed kernels twice).
plan::KernelVariant with_transposed(ad::Backward rest, const schedule::Transposition &t,
                                    std::vector<plan::Transposed> kernels, const plan::Guards &guards,
                                    const std::optional<ad::Backward> &scatter, std::string *report) {
    plan::KernelVariant v =
        t.rest ? std::move(variants(std::move(rest), guards, false, report, false).back())
               : plan::KernelVariant{std::move(rest), guards, std::nullopt, {}, false, std::nullopt, std::nullopt};
    v.transposed = std::move(kernels);
    v.stashes = t.stashes;
    v.scatter = scatter;
    return v;
}

// The variants with transposed kernels `t` and what is left of `b`: its merged adds stored, then,
// where that needs guards, `b` with the adds (kernel name + "_adds", its transposed kernels' too).
std::vector<plan::KernelVariant> transposed_variants(ad::Backward b, schedule::Transposition &t,
                                                     const plan::Guards &guards, const std::set<std::string> &merged,
                                                     const std::set<std::string> &keep,
                                                     const std::set<std::string> &aliased,
                                                     const std::optional<ad::Backward> &scatter, std::string *report) {
    for (const plan::Transposed &k : t.kernels) dump("transpose", k.bwd.fn);
    plan::Guards all = guards;
    all.insert(all.end(), t.guards.begin(), t.guards.end());
    plan::Guards with = all;
    std::optional<ad::Backward> stored =
        t.rest && !scatter ? schedule::stored_adds(b, merged, keep, aliased, &with, report) : std::nullopt;
    std::vector<plan::KernelVariant> out;
    if (!stored) {
        out.push_back(with_transposed(std::move(b), t, t.kernels, all, scatter, report));
        return out;
    }
    dump("stores", stored->fn);
    out.push_back(with_transposed(std::move(*stored), t, t.kernels, with, scatter, report));
    if (with.size() == all.size()) return out;
    const std::string name = b.fn.name;
    b.fn.name += "_adds";
    std::vector<plan::Transposed> kernels = t.kernels;
    for (plan::Transposed &k : kernels) {
        std::string &n = k.bwd.fn.name;
        n = n.rfind(name, 0) == 0 ? b.fn.name + n.substr(name.size()) : n + "_adds";
    }
    out.push_back(with_transposed(std::move(b), t, std::move(kernels), all, scatter, report));
    return out;
}

// The variants of one forward for reverse mode: one per write plan. Gradients reduced over a loop
// and a grid axis get kernels of their own (loop transposition); where that needs run-time guards,
// the variant without it follows as the fallback. `guards`: the forward's own (saved values it loads).
// `atomic_fallback`: whether the write plan with every gradient atomic gets a variant (a remapped
// forward's need not: the original forward's variants follow).
void add_variants(plan::Specialization &sp, const Derived &d, const ir::Function &fwd, const plan::Guards &guards,
                  const std::set<plan::TensorRef> &shared, const std::string &name, bool atomic_fallback,
                  std::string *report) {
    // Aliased parameters too: two plain-store gradients into one buffer would overwrite each other.
    std::vector<schedule::WritePlan> plans = schedule::gradient_writes(d.forward, d.spec, keep_atomic(d, shared));
    const int max_copies = schedule::transposing(std::getenv("TAD_TRANSPOSE"));
    const int recompute = schedule::recomputing(std::getenv("TAD_TRANSPOSE_RECOMPUTE"));
    const bool stash = schedule::stashing(std::getenv("TAD_STASH"));
    const std::set<std::string> keep = keep_atomic(d, shared), aliased = aliased_params(d);
    for (size_t i = 0; i < plans.size(); ++i) {
        if (!atomic_fallback && i > 0 && schedule::all_atomic(plans[i])) continue;
        const std::string name_i = name + (i == 0                           ? ""
                                           : schedule::all_atomic(plans[i]) ? "_atomic"
                                                                            : "_v" + std::to_string(i));
        dump_text("writes", name_i, schedule::print(plans[i]));
        plan::Guards plan_guards = plans[i].guards;
        plan_guards.insert(plan_guards.end(), guards.begin(), guards.end());
        ad::Backward b = ad::reverse(fwd, d.spec, plans[i].writes, name_i, cleanup);
        std::string why;
        std::optional<ad::Backward> scatter = schedule::split_scatter(b, cleanup, &why, report);
        if (!why.empty()) {
            *report += name_i + ": no scatter split: " + why + "\n";
            b = ad::reverse(fwd, d.spec, schedule::without_split(plans[i].writes), name_i, cleanup);
        }
        if (scatter) dump("scatter", scatter->fn);
        *report += schedule::unwrap_adds(b);
        dump("unwrap-adds", b.fn);
        std::set<std::string> merged;
        *report += schedule::merge_adds(b, &merged);
        dump("merge-adds", b.fn);
        ad::Backward untransposed = b;
        std::string what;
        std::optional<schedule::Transposition> t =
            schedule::transpose(b, keep, max_copies, recompute, stash, cleanup, &what);
        dump_text("transpose", name_i, what);
        *report += what.empty() ? "" : name_i + ":\n" + what;
        if (!t) {
            push_variants(sp, std::move(b), plan_guards, merged, keep, aliased, scatter, report);
            continue;
        }
        for (plan::KernelVariant &v :
             transposed_variants(std::move(b), *t, plan_guards, merged, keep, aliased, scatter, report))
            sp.variants.push_back(std::move(v));
        if (t->guards.empty()) continue;
        untransposed.fn.name += "_untransposed";
        std::optional<ad::Backward> s = scatter;
        if (s) s->fn.name += "_untransposed";
        push_variants(sp, std::move(untransposed), plan_guards, merged, keep, aliased, s, report);
    }
}

// Whether a kernel of the variants from index `first` on reads a buffer as the launch left it
// (ir::Param::final_of: a value the forward saved, read back).
bool reads_back(const plan::Specialization &sp, size_t first) {
    const auto finals = [](const ad::Backward &b) {
        return std::any_of(b.fn.params.begin(), b.fn.params.end(),
                           [](const ir::Param &p) { return !p.final_of.empty(); });
    };
    for (size_t i = first; i < sp.variants.size(); ++i) {
        const plan::KernelVariant &v = sp.variants[i];
        if (finals(v.bwd) || (v.scatter && finals(*v.scatter))) return true;
        for (const plan::Transposed &t : v.transposed)
            if (finals(t.bwd)) return true;
    }
    return false;
}

// The variants of each forward for reverse mode of `d` (the one that loads what the forward saved
// first, where that needs guards).
void reverse_variants(plan::Specialization &sp, const Derived &d, const std::set<plan::TensorRef> &shared,
                      const std::string &name, bool atomic_fallback, std::string *report) {
    std::string closed;
    const std::vector<schedule::ReverseForward> fwds = schedule::forwards_for_reverse(
        d.forward, d.spec, schedule::closed_forms(std::getenv("TAD_CLOSED_FORM")), &closed);
    *report += closed;
    for (size_t k = 0; k < fwds.size(); ++k) {
        dump("closed-form", fwds[k].fn);
        const size_t first = sp.variants.size();
        std::string made;
        add_variants(sp, d, fwds[k].fn, fwds[k].guards, shared, name + (k == 0 ? "" : "_recompute"), atomic_fallback,
                     &made);
        // Where no backward kernel reads a buffer back after all (the value's derivatives needed
        // none of it: gae's advantage, whose factor is no input's), the guards the read-backs
        // brought, and the variant without them, are moot.
        if (k == 0 && !fwds[k].guards.empty() && !reads_back(sp, first)) {
            sp.variants.resize(first);
            made.clear();
            add_variants(sp, d, fwds[k].fn, {}, shared, name, atomic_fallback, &made);
            *report += made;
            return;
        }
        *report += made;
    }
}

// The loads of `f` whose gradient writes the access analysis could not classify.
int unproven_loads(const ir::Function &f, const std::vector<std::string> &wrt) {
    int n = 0;
    for (const passes::GradAccess &g : passes::analyze_access(f, wrt))
        for (const passes::LoadAccess &l : g.loads) n += l.cls == passes::LoadAccess::Unproven;
    return n;
}

// The forward rewritten on its tile coordinates (passes/remap_programs.h), where the access
// analysis leaves fewer of its loads unproven than on the forward as it is (a head split the
// analysis follows already gains nothing), unless TAD_REMAP=off; `report` gets why not, where the
// program ids are not affine and the analysis left loads unproven. Where some outputs are written
// once only on tile coordinates (GradSpec::mapped_once), the one rewrite that proves it
// (passes::once_on_tiles), always; where a program may write an element twice (GradSpec::rewritten),
// none: the loop iterations that write it become programs, whose order no zeroing can follow.
std::vector<passes::Remapped> remapped_forwards(const Derived &d, const std::string &name, std::string *report) {
    const std::vector<std::string> &mapped = d.spec.mapped_once;
    if (!d.spec.rewritten.empty()) return {};
    std::string why;
    if (!mapped.empty()) {
        std::vector<std::vector<passes::Inequality>> unless;
        const int form = passes::once_on_tiles(d.forward, mapped.front(), &unless);
        for (const std::string &p : mapped)
            if (form < 0 || passes::once_on_tiles(d.forward, p, &unless) != form)
                fail(TAD_ERR_UNSUPPORTED, d.kernel + ": no one choice of tile coordinates writes each element of " +
                                              join(mapped, ", ") + " once");
        return {passes::remap_programs(d.forward, &why).at(static_cast<size_t>(form))};
    }
    const char *env = std::getenv("TAD_REMAP");
    if (env && std::string(env) == "off") return {};
    const int unproven = unproven_loads(d.forward, d.spec.wrt);
    if (unproven == 0) return {};
    std::vector<passes::Remapped> out = passes::remap_programs(d.forward, &why);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const passes::Remapped &r) { return unproven_loads(r.fn, d.spec.wrt) >= unproven; }),
              out.end());
    if (out.empty() && why != "no program id" && why != "its program ids are used affinely already")
        *report +=
            name + ": programs not remapped: " + (why.empty() ? "no rewrite proves more of its loads" : why) + "\n";
    return out;
}

// The atomic adds a variant's kernels hold (its rest, transposed and scatter kernels).
int atomic_adds(const plan::KernelVariant &v) {
    const auto count = [](const ir::Function &f) {
        int n = 0;
        for (const ir::Op &op : f.ops) n += op.kind == ir::OpKind::AtomicAdd;
        return n;
    };
    int n = v.rest ? count(v.bwd.fn) : 0;
    for (const plan::Transposed &t : v.transposed) n += count(t.bwd.fn);
    if (v.scatter) n += count(v.scatter->fn);
    return n;
}

// Whether the variants of the forward whose loops run once are worth their place before the
// others': one of them sums a gradient in registers over a re-grid (what no loop allowed), and the
// first adds atomically no more than the best of the others.
std::string once_worth(const plan::Specialization &once, const plan::Specialization &others) {
    const bool regrid = std::any_of(once.variants.begin(), once.variants.end(),
                                    [](const plan::KernelVariant &v) { return v.regrid.has_value(); });
    if (!regrid) return "its backward re-grids nothing";
    int best = atomic_adds(others.variants.front());
    for (const plan::KernelVariant &v : others.variants) best = std::min(best, atomic_adds(v));
    const int first = atomic_adds(once.variants.front());
    if (first > best)
        return "its first variant adds atomically at " + std::to_string(first) + " places, another at " +
               std::to_string(best);
    return "";
}

// `d` on its forward with its loops run once, where which of the buffers a program may write twice
// (ad::GradSpec::rewritten) is asked again: one the loops no longer write twice needs no zeroing.
void rewritten_again(Derived &d) {
    std::set<std::string> still;
    for (const passes::Rewrite &r : passes::rewrites(d.forward)) still.insert(r.param);
    std::vector<std::string> &rw = d.spec.rewritten;
    rw.erase(std::remove_if(rw.begin(), rw.end(), [&](const std::string &p) { return !still.count(p); }), rw.end());
}

// The variants of the forward with its top-level loops run once (passes/run_once.h), guarded by
// their conditions, where once_worth() keeps them; unless TAD_RUN_ONCE=off.
std::vector<plan::KernelVariant> once_variants(const Derived &d, const plan::Specialization &others,
                                               const std::set<plan::TensorRef> &shared, const std::string &name,
                                               std::string *report) {
    if (!schedule::switched_on("TAD_RUN_ONCE", std::getenv("TAD_RUN_ONCE"))) return {};
    std::optional<passes::RunOnce> once = passes::run_loops_once(d.forward);
    if (!once) return {};
    Derived o = d;
    o.forward = dump("run-once", passes::cse(once->fn, true));  // the loops' copies of one load are one load
    rewritten_again(o);
    std::string where, derived;
    for (const passes::Inequality &g : once->guards) where += (where.empty() ? "" : " and ") + g.str();
    plan::Specialization sp{d.specialization.key, {}};
    reverse_variants(sp, o, shared, name + "_once", false, &derived);
    const std::string why = once_worth(sp, others);
    *report += name + "_once: " + std::to_string(once->loops) + " loop(s) run once where " + where;
    if (!why.empty()) return *report += ": not kept: " + why + "\n", std::vector<plan::KernelVariant>{};
    *report += "\n" + passes::print(o.forward, passes::analyze_access(o.forward, d.spec.wrt)) + derived;
    for (plan::KernelVariant &v : sp.variants)
        for (const passes::Inequality &g : once->guards) v.guards.push_back({plan::Guard::AtLeast, g.lhs, g.rhs, {}});
    return std::move(sp.variants);
}

// Reverse mode of one launch: where the kernel computes its tile coordinates from the program ids,
// the variants of the forward rewritten on each choice of them first (each applies where the
// launch maps its programs one to one onto a box of them), then those of the forward as it is.
plan::Specialization backward(const Derived &d, const std::set<plan::TensorRef> &shared, const std::string &name,
                              std::string *report) {
    plan::Specialization sp{d.specialization.key, {}};
    const std::vector<passes::Remapped> remapped = remapped_forwards(d, name, report);
    for (size_t i = 0; i < remapped.size(); ++i) {
        Derived r = d;
        r.forward = dump("remap-programs", remapped[i].fn);
        const std::string name_i = name + (i == 0 ? "_remapped" : "_remapped_split");
        *report += name_i + ": programs remapped onto tile coordinates " + remapped[i].map.str() + "\n" +
                   passes::print(r.forward, passes::analyze_access(r.forward, d.spec.wrt));
        const size_t first = sp.variants.size();
        reverse_variants(sp, r, shared, name_i, false, report);
        for (size_t v = first; v < sp.variants.size(); ++v) sp.variants[v].remap = remapped[i].map;
    }
    // The forward as it is may write an element of these twice: no variant of it is right.
    if (!d.spec.mapped_once.empty()) {
        if (sp.variants.empty())
            fail(TAD_ERR_UNSUPPORTED, d.kernel + ": a program may write an element of " + d.spec.mapped_once[0] +
                                          " twice, and no backward on its tile coordinates was derived");
        return sp;
    }
    plan::Specialization others{d.specialization.key, {}};
    std::string own;
    reverse_variants(others, d, shared, name, true, &own);
    for (plan::KernelVariant &v : once_variants(d, others, shared, name, report)) sp.variants.push_back(std::move(v));
    *report += own;
    for (plan::KernelVariant &v : others.variants) sp.variants.push_back(std::move(v));
    return sp;
}

// Forward mode of one launch, named like its backward. Forward mode is an extra: a kernel it cannot
// handle, or an internal error of the transform, leaves the module without it but never costs the
// backward.
plan::Tangent tangent(const Derived &d, const std::string &name) {
    plan::Tangent t;
    t.key = d.specialization.key;
    try {
        t.jvp = ad::jvp(d.forward, d.spec, name, cleanup);
    } catch (const Error &e) {
        if (e.status() != TAD_ERR_UNSUPPORTED && e.status() != TAD_ERR_INTERNAL) throw;
        t.unsupported = e.what();
    }
    return t;
}

}  // namespace

Chain derive_chain(const frontend::KernelFile &kf, JsonRef trace, ad::LoopPolicy loops, const std::string &tag) {
    JsonRef launches = trace.at("launches");
    Chain c;
    std::map<std::string, int> times_launched;
    for (size_t k = 0; k < launches.size(); ++k) {
        c.launches.push_back(lower_launch(kf, launches[k]));
        ++times_launched[c.launches.back().kernel];
    }
    flow::Flow f = analyze_flow(kf, trace, c.launches);
    c.shared = f.shared;
    c.first_writer = f.first_writer;
    c.aliases = f.aliases;
    bool any = false;
    for (size_t k = 0; k < c.launches.size(); ++k) {
        Derived &d = c.launches[k];
        d.saved_before = f.saved_before[k];
        if (f.specs[k].wrt.empty()) continue;
        any = true;
        d.spec = f.specs[k];
        d.spec.loops = loops;
        d.access = passes::print(d.forward, passes::analyze_access(d.forward, d.spec.wrt));
        dump_text("access", d.kernel, d.access);
        const std::string suffix =
            tag + (times_launched[d.kernel] > 1 ? "_" + std::to_string(k) : "") + suffix_of(d.specialization.key);
        std::string regridded;
        // The shadows this launch writes first are its own to store into (flow::first_writers).
        std::set<plan::TensorRef> shared = c.shared;
        for (const auto &[t, first] : c.first_writer)
            if (first == k) shared.erase(t);
        d.specialization = backward(d, shared, d.kernel + "_bwd" + suffix, &regridded);
        d.specialization.preconditions = single_write_preconditions(d.forward, d.spec, &d.access);
        d.access += regridded;
        d.tangent = tangent(d, d.kernel + "_jvp" + suffix);
    }
    if (!any)
        fail(TAD_ERR_INVALID_ARGUMENT, kf.file.path + ": no launch of stub '" + kf.stub.name +
                                           "' reads one of its grad_inputs and writes a tensor it returns (or one a "
                                           "later launch reads)");
    return c;
}

namespace {

plan::Derivation skeleton(const frontend::KernelFile &kf, const Chain &c, JsonRef first) {
    plan::Derivation d;
    d.num_inputs = kf.stub.params.size();
    d.num_outputs = first.at("outputs").size();
    for (const std::string &g : kf.stub.grad_inputs)
        for (size_t i = 0; i < kf.stub.params.size(); ++i)
            if (kf.stub.params[i] == g) d.grad_inputs.push_back(static_cast<int>(i));
    d.shared = c.shared;
    d.first_writer = c.first_writer;
    d.aliases = c.aliases;
    for (const Derived &l : c.launches) d.launches.push_back({l.kernel, l.tensors, {}, {}, l.saved_before});
    // Temporary i is reached through the first launch argument that points at it.
    JsonRef temps = first.at("temps");
    for (size_t i = 0; i < temps.size(); ++i) {
        bool found = false;
        for (size_t k = 0; k < d.launches.size() && !found; ++k)
            for (const auto &[param, t] : d.launches[k].tensors)
                if (!found && t == plan::TensorRef{plan::TensorRef::Temp, static_cast<int>(i)}) {
                    d.temps.emplace_back(k, param);
                    found = true;
                }
    }
    return d;
}

bool same_launches(const plan::Derivation &d, const Chain &c) {
    bool same = c.launches.size() == d.launches.size() && c.shared == d.shared && c.first_writer == d.first_writer &&
                c.aliases == d.aliases;
    for (size_t k = 0; same && k < c.launches.size(); ++k)
        same = c.launches[k].kernel == d.launches[k].kernel && c.launches[k].tensors == d.launches[k].tensors &&
               c.launches[k].saved_before == d.launches[k].saved_before;
    return same;
}

// Adds a chain's specializations that `d` has not seen, with their tangents (forward mode is
// attempted until one launch lacks it).
void add_specializations(plan::Derivation &d, const Chain &c) {
    for (size_t k = 0; k < c.launches.size(); ++k) {
        const plan::Specialization &sp = c.launches[k].specialization;
        if (sp.variants.empty()) continue;
        plan::LaunchDerivation &l = d.launches[k];
        bool seen = false;
        for (const plan::Specialization &s : l.specializations) seen = seen || s.key == sp.key;
        if (seen) continue;
        plan::Tangent t = d.jvp_unsupported.empty() ? c.launches[k].tangent : plan::Tangent{};
        if (d.jvp_unsupported.empty() && !t.jvp) d.jvp_unsupported = t.unsupported;
        l.tangents.push_back(std::move(t));
        l.specializations.push_back(sp);
    }
}

// The kernels a trace launches, in order.
std::vector<std::string> launched_kernels(JsonRef trace) {
    std::vector<std::string> out;
    for (size_t k = 0; k < trace.at("launches").size(); ++k) out.push_back(trace.at("launches")[k].at("kernel").str());
    return out;
}

// Whether every trace launches the same kernels in the same order: one backward plan serves them.
// Otherwise the stub chooses its kernels by shape or flags, and each launch becomes its own
// autograd node (launch_nodes.h), which serves any sequence of the launches it was traced with.
bool same_kernels(const std::vector<JsonRef> &traces) {
    for (JsonRef t : traces)
        if (launched_kernels(t) != launched_kernels(traces.front())) return false;
    return true;
}

// Whether one plan serves every chain: the same kernels with the same buffers in each.
bool mergeable(const frontend::KernelFile &kf, const std::vector<Chain> &chains, JsonRef first) {
    const plan::Derivation d = skeleton(kf, chains.front(), first);
    for (const Chain &c : chains)
        if (!same_launches(d, c)) return false;
    return true;
}

// The specialization key of every launch, launch index first.
plan::Key traced_key(const frontend::KernelFile &kf, JsonRef trace) {
    plan::Key key;
    JsonRef launches = trace.at("launches");
    for (size_t k = 0; k < launches.size(); ++k)
        for (auto &[name, value] :
             key_of(frontend::lower_kernel(kf, launches[k].at("kernel").str(), flow::bindings_of(kf, launches[k]))))
            key.emplace_back(std::to_string(k) + ":" + name, value);
    return key;
}

}  // namespace

plan::Derivation merge(const frontend::KernelFile &kf, const std::vector<Chain> &chains, JsonRef first) {
    plan::Derivation d = skeleton(kf, chains.front(), first);
    for (const Chain &c : chains) {
        if (!same_launches(d, c))
            fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": stub '" + kf.stub.name +
                                          "' launches different kernels, or passes them different buffers, for "
                                          "different dims; one backward cannot serve them");
        add_specializations(d, c);
    }
    return d;
}

std::string explain(const std::vector<Chain> &chains) {
    std::string s;
    for (const Chain &c : chains)
        for (size_t k = 0; k < c.launches.size(); ++k) {
            const Derived &d = c.launches[k];
            if (d.access.empty()) continue;
            std::string key;
            for (const auto &[name, value] : d.specialization.key)
                key += (key.empty() ? " (" : ", ") + name + "=" + value;
            s += "launch " + std::to_string(k) + " " + d.kernel + (key.empty() ? "" : key + ")") + ":\n";
            for (size_t at = 0, end; at < d.access.size(); at = end + 1) {
                end = d.access.find('\n', at);
                s += "  " + d.access.substr(at, end - at) + "\n";
            }
        }
    return s;
}

namespace {

// The module of one plan over `chains` (merge()), with forward mode where every launch has it.
// `original`: the file as written, where `kf` has residual stores inserted.
std::string emit_plan_module(const frontend::KernelFile &kf, const std::vector<Chain> &chains, JsonRef first,
                             const frontend::KernelFile *original = nullptr) {
    plan::Derivation d = merge(kf, chains, first);
    std::string why = plan::tangent_unsupported(d);
    std::optional<plan::Plan> tangent;
    if (why.empty()) tangent = plan::tangent(d);
    std::string module = emit::emit_module(kf, plan::backward(d), tangent ? &*tangent : nullptr, why, original);
    emit::check_module(kf, module);  // never hand out a module that does not parse or reads unbound names
    return module;
}

}  // namespace

std::string emit_backward_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                 ad::LoopPolicy loops, std::string *explanation) {
    if (has_torch_code(traces.front()) || !same_kernels(traces))
        return emit_launch_node_module(kf, traces, loops, explanation);
    const Derive derive = [loops](const frontend::KernelFile &f, const std::vector<JsonRef> &ts) {
        std::vector<Chain> out;
        for (JsonRef t : ts) out.push_back(derive_chain(f, t, loops));
        return out;
    };
    const std::vector<Chain> chains = derive(kf, traces);
    // The same kernels with other buffers (an optional bias passed as None in some entries): one
    // plan cannot serve them, a node per launch signature can.
    if (!mergeable(kf, chains, traces.front())) return emit_launch_node_module(kf, traces, loops, explanation);
    std::string saved;
    if (std::optional<Residuals> r = save_residuals(kf, traces, chains, derive, &saved)) {
        if (mergeable(r->kf, r->chains, r->traces.front())) {
            if (explanation) *explanation = explain(r->chains) + r->report;
            return emit_plan_module(r->kf, r->chains, r->traces.front(), &kf);
        }
        saved = "residuals not saved: with them, one plan no longer serves every trace\n";
    }
    if (explanation) *explanation = explain(chains) + saved;
    return emit_plan_module(kf, chains, traces.front());
}

bool has_specializations(const frontend::KernelFile &kf, JsonRef trace) { return !traced_key(kf, trace).empty(); }

bool new_specialization(const frontend::KernelFile &kf, JsonRef trace, const std::vector<JsonRef> &seen) {
    auto key = traced_key(kf, trace);
    for (JsonRef s : seen)
        if (traced_key(kf, s) == key && launched_kernels(s) == launched_kernels(trace)) return false;
    return true;
}

}  // namespace tad::driver
