// The plan builders: from a derivation to the steps every executor follows.
#include <algorithm>
#include <map>
#include <set>

#include "plan/plan.h"
#include "support/error.h"

namespace tad::plan {

namespace {

// Aggregates spelled out field by field would be long; these name what each case sets.
Alloc alloc(TensorRef t, Init init, int index = -1) {
    Alloc a;
    a.tensor = t;
    a.init = init;
    a.index = index;
    return a;
}

Arg arg(Arg::Kind kind, const std::string &name = "", TensorRef t = {}, size_t before = 0) {
    Arg a;
    a.kind = kind;
    a.name = name;
    a.tensor = t;
    a.before = before;
    return a;
}

Plan common(const Derivation &d, Mode mode) {
    Plan p;
    p.mode = mode;
    p.num_inputs = d.num_inputs;
    p.num_outputs = d.num_outputs;
    p.grad_inputs = d.grad_inputs;
    p.temps = d.temps;
    p.aliases = d.aliases;
    for (const LaunchDerivation &l : d.launches) p.launched.push_back(l.kernel);
    return p;
}

bool is_grad_input(const Plan &p, int input) {
    return std::find(p.grad_inputs.begin(), p.grad_inputs.end(), input) != p.grad_inputs.end();
}

// Builds the plan of one mode; shared by both: how a launch's primal arguments are bound.
class Builder {
public:
    Builder(const Derivation &d, Plan &p) : d_(d), p_(p) {}

protected:
    const Derivation &d_;
    Plan &p_;
    std::set<TensorRef> shadowed_;  // tensors that have a shadow (allocated, or Absent for now)
    std::set<Snapshot> snapshots_;
    std::vector<std::string> texts_;  // per kernel of p_, its printed IR

    // A primal argument of launch k: a scalar, or a tensor as the launch saw it (a saved copy where
    // this or a later launch overwrote it), or, for a Final origin, as the launch left it (the flow
    // analysis made sure that no later launch writes it).
    Arg primal(size_t k, const ir::Param &param, const ad::ParamOrigin &origin) {
        const LaunchDerivation &l = d_.launches[k];
        if (param.kind != ir::ParamKind::Pointer) return arg(Arg::Scalar, param.name);
        if (origin.kind == ad::ParamOrigin::Final) return arg(Arg::Tensor, origin.primal, l.tensors.at(origin.primal));
        TensorRef t = l.tensors.at(param.name);
        auto saved = l.saved_before.find(param.name);
        if (saved == l.saved_before.end()) return arg(Arg::Tensor, param.name, t);
        snapshots_.insert({saved->second, k, param.name});
        return arg(Arg::Saved, param.name, t, saved->second);
    }

    // A kernel several variants run (a split's rest beside each form of its sums kernel) is added
    // once: the same name, role and text.
    int add_kernel(Kernel k) {
        const std::string text = ir::print(k.fn);
        for (size_t i = 0; i < p_.kernels.size(); ++i)
            if (p_.kernels[i].fn.name == k.fn.name && p_.kernels[i].role == k.role && texts_[i] == text)
                return static_cast<int>(i);
        p_.kernels.push_back(std::move(k));
        texts_.push_back(text);
        return static_cast<int>(p_.kernels.size()) - 1;
    }

    void finish() { p_.snapshots.assign(snapshots_.begin(), snapshots_.end()); }
};

class BackwardBuilder : Builder {
public:
    using Builder::Builder;

    void run() {
        add_kernels();
        allocate_shared();
        for (size_t k = d_.launches.size(); k-- > 0;)
            if (!d_.launches[k].specializations.empty()) p_.steps.push_back(step(k));
        for (size_t i = 0; i < d_.num_inputs; ++i) {
            TensorRef t{TensorRef::Input, static_cast<int>(i)};
            // An input that is not a grad input may still have a shadow (a buffer it updates in place).
            bool present = shadowed_.count(t) && is_grad_input(p_, static_cast<int>(i));
            p_.results.push_back({present, t});
        }
        finish();
    }

private:
    // Kernel indices of each variant's backward, tape sizing and transposed kernels.
    std::map<const KernelVariant *, int> backward_, sizing_, scatter_;
    std::map<const Transposed *, int> transposed_;

    // In the forward's launch order, each variant's kernel followed by its tape sizing kernel, its
    // transposed kernels and its scatter kernel.
    void add_kernels() {
        for (const LaunchDerivation &l : d_.launches)
            for (const Specialization &sp : l.specializations)
                for (const KernelVariant &v : sp.variants) {
                    if (v.rest)
                        backward_[&v] =
                            add_kernel({Kernel::Backward, v.bwd.fn, l.kernel, sp.key, v.bwd.writes, "", v.regrid});
                    if (v.bwd.tape)
                        sizing_[&v] =
                            add_kernel({Kernel::TapeSizing, v.bwd.tape->fn, l.kernel, sp.key, {}, v.bwd.fn.name, {}});
                    for (const Transposed &t : v.transposed)
                        transposed_[&t] = add_kernel({Kernel::Backward,
                                                      t.bwd.fn,
                                                      l.kernel,
                                                      sp.key,
                                                      t.bwd.writes,
                                                      "",
                                                      {},
                                                      t.split ? -1 : t.axis,
                                                      t.split ? t.axis : -1});
                    if (v.scatter)
                        scatter_[&v] =
                            add_kernel({Kernel::Backward, v.scatter->fn, l.kernel, sp.key, v.scatter->writes, "", {}});
                }
    }

    // Shadows several launches add to exist before the first of them runs; a stub input's gradient
    // that one launch writes is allocated there, as that launch's variant wants it (Absent until then).
    void allocate_shared() {
        for (const TensorRef &t : d_.shared) {
            if (d_.first_writer.count(t)) {  // its first writer's branch allocates it
                p_.prologue.push_back(alloc(t, Init::Absent));
                shadowed_.insert(t);
                continue;
            }
            int alias = -1;
            for (const auto &[j, i] : d_.aliases)
                if (t.kind == TensorRef::Input && i == t.index) alias = j;
            Alloc a = alloc(t, Init::Accumulator);
            // An input updated in place: its shadow starts as the cotangent of its final contents.
            if (alias >= 0)
                a = alloc(t, Init::Cotangent, alias);
            else if (t.kind == TensorRef::Output)
                a = alloc(t, Init::Cotangent, t.index);
            p_.prologue.push_back(a);
            shadowed_.insert(t);
        }
        for (const LaunchDerivation &l : d_.launches)
            for (const Specialization &sp : l.specializations)
                for (const KernelVariant &v : sp.variants) {
                    declare_shadows(l, v.bwd);
                    for (const Transposed &t : v.transposed) declare_shadows(l, t.bwd);
                }
    }

    // The stub inputs whose gradients kernel `b` writes: absent until a branch allocates them.
    void declare_shadows(const LaunchDerivation &l, const ad::Backward &b) {
        for (const ad::ParamOrigin &o : b.origins) {
            if (o.kind != ad::ParamOrigin::Shadow) continue;
            TensorRef t = l.tensors.at(o.primal);
            if (t.kind == TensorRef::Input && shadowed_.insert(t).second) p_.prologue.push_back(alloc(t, Init::Absent));
        }
    }

    Step step(size_t k) {
        const LaunchDerivation &l = d_.launches[k];
        Step s{k, l.kernel, {}};
        for (const Specialization &sp : l.specializations) {
            Case c{sp.key, {}, sp.preconditions};
            for (const KernelVariant &v : sp.variants) c.branches.push_back(branch(k, v));
            s.cases.push_back(std::move(c));
        }
        return s;
    }

    Branch branch(size_t k, const KernelVariant &v) {
        Branch b;
        b.guards = v.guards;
        b.remap = v.remap;
        for (const passes::Stash &s : v.stashes)
            b.stashes.push_back(
                {s.param, s.dims,
                 s.like.empty() ? std::nullopt : std::optional<TensorRef>(d_.launches[k].tensors.at(s.like))});
        if (v.bwd.tape) {
            // The tape's size is known only once each program's trip counts are: a sizing kernel
            // writes them, the largest sets the stride between programs' tapes.
            const ad::TapeSizing &ts = *v.bwd.tape;
            Run sizing;
            sizing.kernel = sizing_.at(&v);
            for (size_t i = 0; i < ts.fn.params.size(); ++i)
                sizing.args.push_back(ts.origins[i].kind == ad::ParamOrigin::TapeNeed
                                          ? arg(Arg::TapeNeed)
                                          : primal(k, ts.fn.params[i], ts.origins[i]));
            b.sizing = std::move(sizing);
        }
        if (v.rest) {
            b.runs.push_back(run(k, v.bwd, backward_.at(&v), v.regrid ? grid_sizes(*v.regrid) : GridSizes{}, b.allocs));
            if (v.regrid) regrid(k, d_.launches[k], v, b.runs.back());
        }
        for (const Transposed &t : v.transposed) {
            const int index = static_cast<int>(b.runs.size());  // its stores' cover is in its own terms
            b.runs.push_back(run(k, t.bwd, transposed_.at(&t), {{t.grid_param, t.axis}}, b.allocs, index));
            b.runs.back().transposed_axis = t.axis;
            b.runs.back().trips = t.trips;
            b.runs.back().widening = t.widening;
            b.runs.back().tiles = t.tiles;
        }
        // After the kernels that allocated its buffers (a split gradient's: in the input's dtype).
        if (v.scatter) b.runs.push_back(run(k, *v.scatter, scatter_.at(&v), {}, b.allocs));
        from_partials(b);
        return b;
    }

    // An accumulator only a re-gridded run's partial rows write is their sum: no zero fill, no add.
    static void from_partials(Branch &b) {
        for (Alloc &a : b.allocs) {
            if (a.init != Init::Accumulator) continue;
            bool partial = false, other = false;
            for (const Run &r : b.runs) {
                partial = partial || std::find(r.partials.begin(), r.partials.end(), a.tensor) != r.partials.end();
                for (const Arg &x : r.args) other = other || (x.kind == Arg::Shadow && x.tensor == a.tensor);
            }
            if (partial && !other) a.init = Init::Partials;
        }
    }

    // Scalar parameters that receive the recorded grid's size along an axis.
    using GridSizes = std::vector<std::pair<std::string, int>>;

    static GridSizes grid_sizes(const Regrid &g) {
        GridSizes out;
        for (size_t i = 0; i < g.axes.size(); ++i) out.emplace_back(g.grid_params.at(i), g.axes[i]);
        return out;
    }

    // A run of kernel `kernel` (derived as `bwd`): each parameter bound; each of `grid` receives the
    // recorded grid's size along a re-gridded or transposed axis. `index`: the run's index in its
    // branch where its writes' covers are in the run's terms (Alloc::run), else -1.
    Run run(size_t k, const ad::Backward &bwd, int kernel, const GridSizes &grid, std::vector<Alloc> &allocs,
            int index = -1) {
        Run r;
        r.kernel = kernel;
        for (size_t i = 0; i < bwd.fn.params.size(); ++i) {
            const ir::Param &param = bwd.fn.params[i];
            const ad::ParamOrigin &o = bwd.origins[i];
            if (o.kind == ad::ParamOrigin::Tape)
                r.args.push_back(arg(Arg::Tape));
            else if (o.kind == ad::ParamOrigin::TapeStride)
                r.args.push_back(arg(Arg::TapeStride));
            else if (o.kind == ad::ParamOrigin::Hits)
                r.args.push_back(arg(Arg::Hits));
            else if (o.kind == ad::ParamOrigin::Stash)
                r.args.push_back(arg(Arg::Stash, param.name));
            else if (auto g =
                         std::find_if(grid.begin(), grid.end(), [&](const auto &x) { return x.first == param.name; });
                     g != grid.end()) {
                r.args.push_back(arg(Arg::GridSize));
                r.args.back().axis = g->second;
            } else if (param.kind != ir::ParamKind::Pointer || o.kind == ad::ParamOrigin::Primal ||
                       o.kind == ad::ParamOrigin::Final)
                r.args.push_back(primal(k, param, o));
            else
                r.args.push_back(shadow(k, o.primal, bwd, allocs, index));
        }
        return r;
    }

    // A re-gridded run: each partial gradient's argument becomes its partial buffer, its row stride
    // parameter that buffer's row length (both parameters were bound above as placeholders).
    void regrid(size_t k, const LaunchDerivation &l, const KernelVariant &v, Run &run) {
        run.regrid_axes = v.regrid->axes;
        run.partial_covers = v.regrid->covers;
        const std::vector<ir::Param> &params = v.bwd.fn.params;
        for (const auto &[grad, stride] : v.regrid->partial) {
            TensorRef t;
            for (size_t i = 0; i < params.size(); ++i)
                if (params[i].name == grad) {
                    t = l.tensors.at(v.bwd.origins[i].primal);
                    run.args[i] = arg(Arg::Partial, "", t);
                }
            for (size_t i = 0; i < params.size(); ++i)
                if (params[i].name == stride) run.args[i] = arg(Arg::PartialStride, "", t);
            // One partial buffer per tensor: two parameters' plain-store flushes into it would overwrite
            // each other's rows.
            for (size_t j = 0; j < run.partials.size(); ++j)
                if (run.partials[j] == t)
                    fail(TAD_ERR_UNSUPPORTED, "plan: launch " + std::to_string(k) + " (" + l.kernel +
                                                  "): its re-gridded backward " + v.bwd.fn.name + " sums " +
                                                  v.regrid->partial[j].first + " and " + grad +
                                                  ", bound to one tensor, in partial rows; regenerate with "
                                                  "TAD_GRID_REDUCTION=atomic");
            run.partials.push_back(t);
        }
    }

    // The shadow of a launch's pointer parameter: shared ones exist already; an output read by this
    // launch alone takes the incoming gradient; an input's gradient is allocated for the variant.
    Arg shadow(size_t k, const std::string &param, const ad::Backward &bwd, std::vector<Alloc> &allocs, int run) {
        const LaunchDerivation &l = d_.launches[k];
        TensorRef t = l.tensors.at(param);
        Arg a{Arg::Shadow, "", t, 0};
        auto first = d_.first_writer.find(t);
        const bool first_writer = first != d_.first_writer.end() && first->second == k;
        if (d_.shared.count(t) && !first_writer) return a;
        // A branch's kernels share its shadows.
        if (std::any_of(allocs.begin(), allocs.end(), [&](const Alloc &x) { return x.tensor == t; })) return a;
        if (t.kind == TensorRef::Output) {
            allocs.push_back(alloc(t, Init::Incoming, t.index));
            return a;
        }
        if (t.kind != TensorRef::Input && !first_writer)
            fail(TAD_ERR_INTERNAL,
                 "plan: the cotangent of temporary " + std::to_string(t.index) + " is not a shared buffer");
        auto w = bwd.writes.find(param);
        bool store = w != bwd.writes.end() && w->second.kind == passes::GradWrite::Store;
        if (!store) {
            allocs.push_back(alloc(t, Init::Accumulator));
            return a;
        }
        allocs.push_back(alloc(t, w->second.cover ? Init::Covered : Init::Zeros));
        if (w->second.cover) {
            allocs.back().cover = w->second.cover;
            allocs.back().launch = k;
            allocs.back().run = run;
        }
        // A split gradient's scatter adds onto the stored values: kept in float32 until the end,
        // unless the stores added what lands on them themselves (folded); so are the stores of a
        // shared shadow's first writer, which later launches add to.
        allocs.back().wide = (w->second.split && !w->second.folded) || first_writer;
        return a;
    }
};

class TangentBuilder : Builder {
public:
    using Builder::Builder;

    void run() {
        for (const LaunchDerivation &l : d_.launches)
            for (const Tangent &t : l.tangents) add_kernel({Kernel::Tangent, t.jvp->fn, l.kernel, t.key, {}, "", {}});
        allocate_tangents();
        int kernel = 0;
        for (size_t k = 0; k < d_.launches.size(); ++k) {
            const LaunchDerivation &l = d_.launches[k];
            if (l.tangents.empty()) continue;
            Step s{k, l.kernel, {}};
            // Static ifs were resolved per specialization: dispatch on those constexprs, as the backward.
            for (const Tangent &t : l.tangents) s.cases.push_back({t.key, {branch(k, *t.jvp, kernel++)}});
            p_.steps.push_back(std::move(s));
        }
        for (size_t j = 0; j < d_.num_outputs; ++j) {
            // An output that is a stub input updated in place has that input's tangent buffer.
            auto alias = d_.aliases.find(static_cast<int>(j));
            TensorRef t = alias == d_.aliases.end() ? TensorRef{TensorRef::Output, static_cast<int>(j)}
                                                    : TensorRef{TensorRef::Input, alias->second};
            p_.results.push_back({shadowed_.count(t) > 0, t});
        }
        finish();
    }

private:
    // One tangent buffer per tensor, made before the launches: an input's from its tangent, an
    // output's or a temporary's zeroed. The tangent kernels update them in the forward's order, as
    // the forward updates the tensors.
    void allocate_tangents() {
        std::set<TensorRef> written;  // tensors whose tangent some tangent kernel stores or adds to
        for (const LaunchDerivation &l : d_.launches)
            for (const Tangent &t : l.tangents) {
                passes::MemoryParams m = passes::memory_params(t.jvp->fn);
                for (size_t i = 0; i < t.jvp->fn.params.size(); ++i) {
                    const std::string &p = t.jvp->fn.params[i].name;
                    if (t.jvp->origins[i].kind == ad::ParamOrigin::Shadow &&
                        (m.stored.count(p) || m.accumulated.count(p)))
                        written.insert(l.tensors.at(t.jvp->origins[i].primal));
                }
            }
        for (size_t k = 0; k < d_.launches.size(); ++k)
            for (const Tangent &t : d_.launches[k].tangents)
                for (const ad::ParamOrigin &o : t.jvp->origins) {
                    if (o.kind != ad::ParamOrigin::Shadow) continue;
                    TensorRef ref = d_.launches[k].tensors.at(o.primal);
                    if (!shadowed_.insert(ref).second) continue;
                    Alloc a = alloc(ref, Init::ZeroTangent);
                    a.launch = k;
                    a.param = o.primal;
                    if (ref.kind == TensorRef::Input) {
                        auto g = std::find(d_.grad_inputs.begin(), d_.grad_inputs.end(), ref.index);
                        a.init = Init::Tangent;
                        // A stub input written by a launch but not a grad input: its tangent starts at zero.
                        if (g != d_.grad_inputs.end()) {
                            a.index = static_cast<int>(g - d_.grad_inputs.begin());
                            a.written = written.count(ref) > 0;
                        }
                    }
                    p_.prologue.push_back(a);
                }
    }

    Branch branch(size_t k, const ad::Forward &f, int kernel) {
        Branch b;
        Run r;
        r.kernel = kernel;
        for (size_t i = 0; i < f.fn.params.size(); ++i) {
            const ad::ParamOrigin &o = f.origins[i];
            if (o.kind == ad::ParamOrigin::Shadow)
                r.args.push_back(arg(Arg::Shadow, "", d_.launches[k].tensors.at(o.primal)));
            else
                r.args.push_back(primal(k, f.fn.params[i], o));
        }
        b.runs.push_back(std::move(r));
        return b;
    }
};

}  // namespace

Plan backward(const Derivation &d) {
    Plan p = common(d, Mode::Backward);
    BackwardBuilder(d, p).run();
    return p;
}

std::string tangent_unsupported(const Derivation &d) {
    std::string why = d.jvp_unsupported;
    bool any = false;
    for (const LaunchDerivation &l : d.launches)
        for (const Tangent &t : l.tangents) {
            any = true;
            if (!t.jvp && why.empty()) why = t.unsupported;
        }
    if (why.empty() && !any) why = "no tangent kernel was derived";
    return why;
}

Plan tangent(const Derivation &d) {
    std::string why = tangent_unsupported(d);
    if (!why.empty()) fail(TAD_ERR_INTERNAL, "plan: no forward mode: " + why);
    Plan p = common(d, Mode::Tangent);
    TangentBuilder(d, p).run();
    return p;
}

bool takes_hits(const Branch &b) {
    return std::any_of(b.runs.begin(), b.runs.end(), [](const Run &r) {
        return std::any_of(r.args.begin(), r.args.end(), [](const Arg &a) { return a.kind == Arg::Hits; });
    });
}

}  // namespace tad::plan
