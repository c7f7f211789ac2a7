// build(): the plan's one step over the caller's launch, as src/emit/launcher.cpp prints it and
// module_runtime.py runs it (each helper below names the Python function it mirrors).
#include "aot/launch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "passes/widen.h"
#include "support/error.h"

namespace tad::aot {

namespace {

constexpr uint64_t kAlign = 256;

using plan::Init;
using plan::TensorRef;

// Elements of a tensor's storage span (module_runtime.py's _partial_buffers row length).
int64_t span(const TensorArg &t) {
    int64_t n = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] == 0) return 0;
        n += (t.shape[d] - 1) * t.strides[d];
    }
    return n;
}

std::string tensor_name(const TensorRef &t) {
    static const char *const kinds[] = {"input", "output", "temp"};
    return std::string(kinds[t.kind]) + " " + std::to_string(t.index);
}

std::string literal(const Value &v) {
    switch (v.kind) {
    case Value::Int: return std::to_string(v.i);
    case Value::Bool: return v.i ? "True" : "False";
    case Value::Literal: return v.literal;
    case Value::Float: break;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v.f);
    return buf;
}

struct Buffer {
    Ptr ptr;
    const DType *dtype = nullptr;
};

class Builder {
public:
    Builder(const Manifest &m, const Request &r, int sm_count) : m_(m), r_(r), sm_count_(sm_count), grid_(r.grid) {}

    Program run() {
        check_request();
        for (const plan::Alloc &a : m_.plan.prologue) alloc(a);
        const plan::Branch &b = choose(m_.plan.steps.at(0));
        for (const plan::Alloc &a : b.allocs) alloc(a);
        if (plan::takes_hits(b))  // every program of the folding kernel writes its word: no fill
            hits_ = workspace(static_cast<uint64_t>(grid_[0] * grid_[1] * grid_[2]) * 4);
        for (const plan::StashBuffer &s : b.stashes) stash(s);
        branch_ = &b;
        for (size_t i = 0; i < b.runs.size(); ++i) launch(b.runs[i], static_cast<int>(i));
        results();
        return std::move(out_);
    }

private:
    const Manifest &m_;
    const Request &r_;
    const int sm_count_;
    // The grid the chosen branch runs on: the launch's, or a remapped branch's box (plan.h).
    std::array<int64_t, 3> grid_;
    const plan::Branch *branch_ = nullptr;  // the chosen branch
    Program out_;
    std::map<TensorRef, const TensorArg *> tensors_;  // the caller's tensor of each stub tensor
    std::map<TensorRef, std::string> names_;  // the forward parameter it is given by
    std::map<TensorRef, Buffer> shadows_;
    std::set<TensorRef> summed_;  // Init::Partials shadows: made by their re-gridded run
    std::map<TensorRef, Buffer> partials_;
    std::set<uint64_t> taken_;  // caller buffers serving as a shadow
    Ptr hits_;
    std::map<std::string, Buffer> stashes_;

    // ---- the caller's description of the launch
    [[noreturn]] static void invalid(const std::string &what) { fail(TAD_ERR_INVALID_ARGUMENT, what); }

    void check_tensor(const ForwardParam &p) {
        auto t = r_.tensors.find(p.name);
        if (t == r_.tensors.end())
            invalid("no tensor for parameter " + p.name + " of " + m_.kernel +
                    " (the forward launch's pointer argument)");
        if (r_.values.count(p.name)) invalid("parameter " + p.name + " of " + m_.kernel + " is a tensor, not a value");
        dtype(t->second.dtype, "tensor " + p.name);
        if (t->second.shape.size() != static_cast<size_t>(p.ndim) || t->second.strides.size() != t->second.shape.size())
            invalid("tensor " + p.name + " has " + std::to_string(t->second.shape.size()) + " dims; the export's has " +
                    std::to_string(p.ndim));
        tensors_.emplace(p.tensor, &t->second);
        names_.emplace(p.tensor, p.name);
    }

    void check_request() {
        if (!r_.kernel.empty() && r_.kernel != m_.kernel)
            invalid("the kernels were exported for the backward of " + m_.kernel + ", not " + r_.kernel);
        std::set<std::string> known;
        for (const ForwardParam &p : m_.params) {
            known.insert(p.name);
            if (p.kind == "tensor")
                check_tensor(p);
            else if (!r_.values.count(p.name))
                invalid("no value for parameter " + p.name + " of " + m_.kernel);
        }
        for (const auto &[name, t] : r_.tensors)
            if (!known.count(name)) invalid(m_.kernel + " has no parameter " + name);
        for (const auto &[name, v] : r_.values)
            if (!known.count(name)) invalid(m_.kernel + " has no parameter " + name);
    }

    const TensorArg &tensor(const TensorRef &t) const {
        auto it = tensors_.find(t);
        if (it == tensors_.end())
            fail(TAD_ERR_INTERNAL, "the plan names " + tensor_name(t) + ", which no parameter is");
        return *it->second;
    }

    // A caller pointer of tensor `t`, kept symbolic in the program (its slot) with its value now.
    Ptr caller(const TensorRef &t, CallerPointer::Field f) {
        const TensorArg &ta = tensor(t);
        const uint64_t value = f == CallerPointer::Data ? ta.data : f == CallerPointer::Grad ? ta.grad : ta.saved;
        const std::string &name = names_.at(t);
        for (size_t i = 0; i < out_.callers.size(); ++i)
            if (out_.callers[i].tensor == name && out_.callers[i].field == f) return Ptr{Ptr::Caller, value, i};
        out_.callers.push_back(CallerPointer{f, name});
        return Ptr{Ptr::Caller, value, out_.callers.size() - 1};
    }

    // ---- symbols (guards, trip counts, coverage, tiles): the launch's integers
    bool named(const std::string &name, int64_t *out) const {
        auto v = r_.values.find(name);
        if (v == r_.values.end() || v->second.kind == Value::Float) return false;
        if (v->second.kind != Value::Literal) return *out = v->second.i, true;
        char *end = nullptr;
        *out = std::strtoll(v->second.literal.c_str(), &end, 10);
        return !v->second.literal.empty() && *end == '\0';
    }

    std::function<bool(const std::string &, int64_t *)> symbols() const {
        return [this](const std::string &n, int64_t *v) {
            return plan::launch_symbol(
                n, grid_, [this](const std::string &x, int64_t *w) { return named(x, w); }, v);
        };
    }

    int64_t symbol(const std::string &name, const std::string &what) const {
        int64_t v = 0;
        if (!symbols()(name, &v)) invalid(what + " needs the integer " + name + ", which the launch does not give");
        return v;
    }

    // ---- the step's case and branch (launcher.cpp's write_step and branches())
    bool matches(const plan::Key &key) const {
        for (const auto &[name, value] : key) {
            auto v = r_.values.find(name);
            if (v == r_.values.end()) return false;
            char *end = nullptr;
            const double x = std::strtod(value.c_str(), &end);
            if (v->second.kind == Value::Float && *end == '\0' ? x != v->second.f : literal(v->second) != value)
                return false;
        }
        return true;
    }

    const plan::Branch &choose(const plan::Step &s) {
        std::string shown, names;
        for (const plan::Case &c : s.cases) {
            if (matches(c.key)) return branch(c);
            for (const auto &[name, value] : c.key) {
                if (names.find(name) != std::string::npos) continue;
                names += (names.empty() ? "" : ", ") + name;
                auto v = r_.values.find(name);
                shown += (shown.empty() ? "" : ", ") + name + "=" + (v == r_.values.end() ? "?" : literal(v->second));
            }
        }
        invalid("no backward of " + s.kernel + " was exported for " + shown + " (its backward is specialized on " +
                names + "); export with dims that use these values");
    }

    const plan::Branch &branch(const plan::Case &c) {
        grid_ = r_.grid;
        for (const plan::Precondition &p : c.preconditions)
            if ((p.mapped && !mapped(c)) || !holds(p.guards)) invalid(p.refusal);
        for (const plan::Branch &b : c.branches) {
            grid_ = r_.grid;
            if (b.remap) {
                std::optional<std::vector<int64_t>> box = b.remap->box(
                    {r_.grid.begin(), r_.grid.end()}, [this](const std::string &x, int64_t *w) { return named(x, w); });
                if (!box) continue;
                grid_ = {1, 1, 1};
                std::copy(box->begin(), box->end(), grid_.begin());
            }
            if (holds(b.guards)) return b;
        }
        fail(TAD_ERR_INTERNAL, "no branch of the plan applies (its last has no guards)");
    }

    // Whether the launch's programs map one to one onto the box of some remapped branch of `c`.
    bool mapped(const plan::Case &c) {
        return std::any_of(c.branches.begin(), c.branches.end(), [this](const plan::Branch &b) {
            return b.remap && b.remap->box({r_.grid.begin(), r_.grid.end()},
                                           [this](const std::string &x, int64_t *w) { return named(x, w); });
        });
    }

    bool holds(const plan::Guards &guards) {
        bool all = true;
        for (const plan::Guard &g : guards) {
            bool h = false;
            if (!g.eval(symbols(), &h))
                invalid("the plan's guard " + g.str() + " names a value the launch does not give");
            all = all && h;
        }
        return all;
    }

    // ---- buffers
    // _stash_buffer: uninitialised (the rest stores every element), typed like its tensor, else
    // float32 unless the first output is float64.
    void stash(const plan::StashBuffer &s) {
        int64_t n = grid_[0] * grid_[1] * grid_[2];
        for (const std::string &d : s.dims) n *= symbol(d, "stash " + s.param);
        const DType &d = s.like ? dtype(tensor(*s.like).dtype, "")
                                : wide(dtype(tensor(plan::TensorRef{plan::TensorRef::Output, 0}).dtype, ""));
        stashes_[s.param] = Buffer{workspace(static_cast<uint64_t>(n) * static_cast<uint64_t>(d.bytes)), &d};
    }

    Ptr workspace(uint64_t bytes) {
        out_.workspace = (out_.workspace + kAlign - 1) / kAlign * kAlign;
        Ptr p{Ptr::Workspace, out_.workspace};
        out_.workspace += bytes;
        return p;
    }

    void memset(Ptr p, uint64_t bytes) {
        if (!bytes) return;
        Action a;
        a.kind = Action::Memset;
        a.dst = p;
        a.bytes = bytes;
        out_.actions.push_back(a);
    }

    // The shadow of `t` in `d`: the caller's gradient buffer of a stub input where it has that
    // dtype, else workspace laid out as the tensor; zero-filled when `zero`.
    Buffer shadow(const TensorRef &t, const DType &d, bool zero) {
        const TensorArg &ta = tensor(t);
        const uint64_t bytes = static_cast<uint64_t>(span(ta)) * static_cast<uint64_t>(d.bytes);
        Buffer b{{}, &d};
        const bool own = t.kind == TensorRef::Input && ta.grad && &dtype(ta.dtype, "") == &d && !taken_.count(ta.grad);
        if (own) {
            taken_.insert(ta.grad);
            b.ptr = caller(t, CallerPointer::Grad);
        } else {
            b.ptr = workspace(bytes);
        }
        if (zero) memset(b.ptr, bytes);
        return shadows_[t] = b;
    }

    // The incoming gradient of an output, in its dtype and strides (_as_layout; zeros when none).
    void incoming(const TensorRef &t) {
        const TensorArg &ta = tensor(t);
        const DType &d = dtype(ta.dtype, "");
        if (ta.grad) {
            shadows_[t] = Buffer{caller(t, CallerPointer::Grad), &d};
            return;
        }
        const Ptr p = workspace(static_cast<uint64_t>(span(ta)) * static_cast<uint64_t>(d.bytes));
        memset(p, static_cast<uint64_t>(span(ta)) * static_cast<uint64_t>(d.bytes));
        shadows_[t] = Buffer{p, &d};
    }

    void alloc(const plan::Alloc &a) {
        if (a.init == Init::Absent) return;
        if (a.init == Init::Incoming) return incoming(a.tensor);
        if (a.init == Init::Partials) {
            summed_.insert(a.tensor);
            return;
        }
        const TensorArg &ta = tensor(a.tensor);
        const DType &d = dtype(ta.dtype, "");
        switch (a.init) {
        case Init::Accumulator: shadow(a.tensor, wide(d), true); return;
        case Init::Zeros: shadow(a.tensor, a.wide ? wide(d) : d, true); return;
        case Init::Covered:  // _covered_buffer; _empty_buffer where its run fills it (fill_uncovered)
            if (a.run >= 0) {
                shadow(a.tensor, a.wide ? wide(d) : d, false);
                return;
            }
            shadow(a.tensor, a.wide ? wide(d) : d, !plan::covers(*a.cover, symbols(), ta.shape, ta.strides));
            return;
        default: fail(TAD_ERR_INTERNAL, "an allocation the manifest check refuses");
        }
    }

    // ---- one kernel run (launcher.cpp's call(), module_runtime.py's _fit_shared_memory)
    struct Call {
        std::array<int64_t, 3> grid;
        int64_t g = 1;  // a re-gridded or transposed run's G
        int64_t programs = 1;  // a re-gridded run's P
        int g_axis = -1;  // a transposed run's axis: its G argument is `g`, as retile() leaves it
        std::vector<CallArg> args;
    };

    // _regrid_programs: with the `kept` programs of the other axes, as many per SM as stay resident
    // (about 16 registers per element of the largest tile, an SM's 64K), at most the forward's G.
    int64_t regrid_programs(const plan::Kernel &k, int64_t g, int64_t kept) const {
        int64_t tile = 1;
        for (const std::string &d : m_.kernels.at(k.fn.name).largest_tile) tile *= symbol(d, k.fn.name + "'s tile");
        const int64_t per_sm = std::max<int64_t>(1, std::min<int64_t>(4, 4096 / std::max<int64_t>(tile, 1)));
        return std::max<int64_t>(1, std::min<int64_t>(g, per_sm * sm_count_ / std::max<int64_t>(kept, 1)));
    }

    int64_t widened(const plan::Run &run) const {
        int64_t v = 0;
        if (!passes::widened_value(run.widening, symbols(), &v))
            invalid("the widened " + run.widening.name + " needs a value the launch does not give");
        return v;
    }

    // A value of the run's launch: a widened run's constexpr widened, as _widen does.
    std::function<bool(const std::string &, int64_t *)> run_values(const plan::Run &run) const {
        return [this, &run](const std::string &n, int64_t *v) {
            if (n == run.widening.name && !n.empty()) return *v = widened(run), true;
            return symbols()(n, v);
        };
    }

    CallArg value_arg(const std::string &param, const std::string &name) const {
        auto v = r_.values.find(name);
        if (v == r_.values.end()) invalid("no value for parameter " + name + " of " + m_.kernel);
        CallArg a = CallArg::integer(param, v->second.i);
        if (v->second.kind == Value::Float) {
            a.kind = CallArg::Float;
            a.f = v->second.f;
        } else if (v->second.kind == Value::Bool) {
            a.kind = CallArg::Bool;
        } else if (v->second.kind == Value::Literal) {
            a.kind = CallArg::Constexpr;
            a.literal = v->second.literal;
        }
        return a;
    }

    const Buffer &shadow_of(const TensorRef &t) const {
        auto it = shadows_.find(t);
        if (it == shadows_.end())
            fail(TAD_ERR_INTERNAL, "the plan reads the shadow of " + tensor_name(t) + " before making it");
        return it->second;
    }

    CallArg buffer_arg(const std::string &param, const Buffer &b) const {
        return CallArg::pointer(param, b.ptr, *b.dtype);
    }

    CallArg arg(const plan::Arg &a, const std::string &param, const Call &c) {
        switch (a.kind) {
        case plan::Arg::Scalar: return value_arg(param, a.name);
        case plan::Arg::Tensor: {
            const TensorArg &t = tensor(a.tensor);
            return CallArg::pointer(param, caller(a.tensor, CallerPointer::Data), dtype(t.dtype, ""));
        }
        case plan::Arg::Saved: {
            const TensorArg &t = tensor(a.tensor);
            if (!t.saved)
                invalid("tensor " + a.name +
                        " needs `saved`, a copy taken before the forward launch (which overwrites it)");
            return CallArg::pointer(param, caller(a.tensor, CallerPointer::Saved), dtype(t.dtype, ""));
        }
        case plan::Arg::Shadow: return buffer_arg(param, shadow_of(a.tensor));
        case plan::Arg::Hits: return CallArg::pointer(param, hits_, dtype("int32", ""));
        case plan::Arg::Stash: return buffer_arg(param, stashes_.at(a.name));
        case plan::Arg::GridSize:
            return CallArg::integer(param, a.axis == c.g_axis ? c.g : grid_[static_cast<size_t>(a.axis)]);
        case plan::Arg::Partial: return buffer_arg(param, partials_.at(a.tensor));
        case plan::Arg::PartialStride: return CallArg::integer(param, span(tensor(a.tensor)));
        default: fail(TAD_ERR_INTERNAL, "an argument the manifest check refuses");
        }
    }

    CallArg constexpr_arg(const plan::Run &run, const std::string &name) const {
        if (name == run.widening.name) return CallArg::constexpr_int(name, widened(run));
        CallArg a = value_arg(name, name);
        if (a.kind == CallArg::Constexpr) return a;
        CallArg c = CallArg::constexpr_int(name, a.i);
        const auto v = r_.values.at(name);
        if (v.kind != Value::Int) c.literal = literal(v);
        return c;
    }

    // _default_targets: the compiler's block sizes apply where every float tensor has 16 bits.
    static bool sixteen_bit(const std::vector<CallArg> &args) {
        bool any = false;
        for (const CallArg &a : args)
            if (a.kind == CallArg::Pointer && a.dtype->floating) {
                if (a.dtype->bytes != 2) return false;
                any = true;
            }
        return any;
    }

    // _retile: each free block size set to its target where it divides the work exactly.
    static void retile(const plan::Run &run, Call &c, const std::string &g_param) {
        if (!sixteen_bit(c.args)) return;
        for (const passes::FreeTile &t : run.tiles) {
            if (!t.target || (t.axis < 0 && g_param.empty())) continue;
            auto value = std::find_if(c.args.begin(), c.args.end(), [&](const CallArg &a) { return a.name == t.name; });
            if (value == c.args.end() || value->kind != CallArg::Constexpr || !value->literal.empty()) continue;
            auto g = std::find_if(c.args.begin(), c.args.end(), [&](const CallArg &a) { return a.name == g_param; });
            int64_t &count = t.axis >= 0 ? c.grid[static_cast<size_t>(t.axis)] : g->i;
            if ((value->i * count) % t.target) continue;
            count = value->i * count / t.target;
            value->i = t.target;
        }
    }

    Call call(const plan::Run &run, const plan::Kernel &k) {
        Call c{grid_, 1, 1, -1, {}};
        if (!run.regrid_axes.empty()) {
            for (int a : run.regrid_axes) c.g *= grid_[static_cast<size_t>(a)];
            c.programs = regrid_programs(k, c.g, grid_[0] * grid_[1] * grid_[2] / std::max<int64_t>(c.g, 1));
            if (c.g + c.programs >= (int64_t{1} << 31))  // the kernel's loop counter, r < G by P, is an int32
                invalid("a re-gridded backward loops over " + std::to_string(c.g) + " programs by " +
                        std::to_string(c.programs) + ": past int32");
            for (size_t i = 0; i < run.regrid_axes.size(); ++i)
                c.grid[static_cast<size_t>(run.regrid_axes[i])] = i ? 1 : c.programs;
        }
        if (run.transposed_axis >= 0) {
            c.g_axis = run.transposed_axis;
            c.g = grid_[static_cast<size_t>(run.transposed_axis)];
            int64_t trips = 0;
            if (!run.trips.eval(run_values(run), &trips))
                invalid("the trip count " + run.trips.str() + " needs a value the launch does not give");
            c.grid[static_cast<size_t>(run.transposed_axis)] = std::max<int64_t>(trips, 0);
        }
        return c;
    }

    // _zero_unless_covered before run `index`: its shadows whose cover (in its terms, Alloc::run)
    // does not hold on its arguments and grid.
    void fill_uncovered(int index, const Call &c) {
        auto value = [&](const std::string &n, int64_t *v) {
            auto a = std::find_if(c.args.begin(), c.args.end(), [&](const CallArg &x) { return x.name == n; });
            const bool integer =
                a != c.args.end() && (a->kind == CallArg::Int || (a->kind == CallArg::Constexpr && a->literal.empty()));
            return integer && (*v = a->i, true);
        };
        auto symbols = [&](const std::string &n, int64_t *v) { return plan::launch_symbol(n, c.grid, value, v); };
        for (const plan::Alloc &a : branch_->allocs) {
            if (a.init != Init::Covered || a.run != index) continue;
            const TensorArg &ta = tensor(a.tensor);
            const bool launched = c.grid[0] > 0 && c.grid[1] > 0 && c.grid[2] > 0;  // as the oracle decides
            if (!launched || !plan::covers(*a.cover, symbols, ta.shape, ta.strides))
                memset(shadow_of(a.tensor).ptr,
                       static_cast<uint64_t>(span(ta)) * static_cast<uint64_t>(shadow_of(a.tensor).dtype->bytes));
        }
    }

    void launch(const plan::Run &run, int index) {
        const plan::Kernel &k = m_.plan.kernels.at(static_cast<size_t>(run.kernel));
        Call c = call(run, k);
        if (!run.regrid_axes.empty()) allocate_partials(run, c.programs);
        std::string g_param;
        for (size_t i = 0; i < run.args.size(); ++i) {
            c.args.push_back(arg(run.args[i], k.fn.params.at(i).name, c));
            if (run.args[i].kind == plan::Arg::GridSize) g_param = k.fn.params[i].name;
        }
        for (const ir::Constexpr &ce : k.fn.constexprs) c.args.push_back(constexpr_arg(run, ce.name));
        retile(run, c, g_param);
        fill_uncovered(index, c);
        kernel(k.fn.name, c.grid, c.args, r_.num_warps, r_.num_stages);
        if (!run.regrid_axes.empty()) sum_partials(run, c.programs);
    }

    void kernel(const std::string &name, const std::array<int64_t, 3> &grid, std::vector<CallArg> args, int warps,
                int stages) {
        if (grid[0] * grid[1] * grid[2] == 0) return;  // triton launches nothing on an empty grid
        const KernelInfo &info = m_.kernels.at(name);
        Pick p = pick(info, std::move(args), warps, stages);
        const uint64_t programs = static_cast<uint64_t>(grid[0] * grid[1] * grid[2] * p.cubin->num_ctas);
        Action a;
        a.kind = Action::Launch;
        a.kernel = name;
        a.cubin = p.cubin;
        for (size_t d = 0; d < 3; ++d) a.grid[d] = static_cast<unsigned>(grid[d]);
        a.params =
            pack(*p.cubin, p.args, scratch(p.cubin->global_scratch_size, p.cubin->global_scratch_align, programs),
                 scratch(p.cubin->profile_scratch_size, p.cubin->profile_scratch_align, programs));
        out_.actions.push_back(std::move(a));
    }

    // Triton's per-launch scratch: `size` bytes per program (and CTA), aligned; none when 0.
    Ptr scratch(int64_t size, int64_t align, uint64_t programs) {
        if (size <= 0) return Ptr{};
        const uint64_t a = static_cast<uint64_t>(std::max<int64_t>(align, 1));
        out_.workspace = (out_.workspace + a - 1) / a * a;
        return workspace(programs * static_cast<uint64_t>(size));
    }

    // ---- re-gridded runs' partial rows (_partial_buffers, _row_sums, _partial_sum, _sum_partial)
    void allocate_partials(const plan::Run &run, int64_t programs) {
        for (size_t i = 0; i < run.partials.size(); ++i) {
            const TensorRef &t = run.partials[i];
            const TensorArg &ta = tensor(t);
            const DType &d = summed_.count(t) ? wide(dtype(ta.dtype, "")) : *shadow_of(t).dtype;
            const uint64_t bytes = static_cast<uint64_t>(programs * span(ta) * d.bytes);
            partials_[t] = Buffer{workspace(bytes), &d};
            const bool launched = grid_[0] > 0 && grid_[1] > 0 && grid_[2] > 0;  // an empty grid writes no row
            const bool covered = launched && i < run.partial_covers.size() && run.partial_covers[i] &&
                                 plan::covers(*run.partial_covers[i], symbols(), ta.shape, ta.strides);
            if (!covered) memset(partials_[t].ptr, bytes);  // _partial_buffers: every row written whole needs none
        }
    }

    void sum_partials(const plan::Run &run, int64_t programs) {
        for (const TensorRef &t : run.partials) {
            const TensorArg &ta = tensor(t);
            const bool become = summed_.erase(t) > 0;
            const Buffer out = become ? shadow(t, wide(dtype(ta.dtype, "")), false) : shadow_of(t);
            CallArg rows = CallArg::integer("rows", programs), n = CallArg::integer("n", span(ta));
            CallArg part = buffer_arg("Partial", partials_.at(t)), dst = buffer_arg("Out", out);
            for (CallArg *a : {&rows, &n, &part, &dst}) a->specialize = false;
            CallArg add = CallArg::constexpr_int("ADD", 0);
            add.literal = become ? "False" : "True";
            support(kRowSum, span(ta), {part, dst, rows, n, add});
        }
    }

    void support(const char *name, int64_t n, std::vector<CallArg> args) {
        if (!m_.kernels.count(name))
            invalid(std::string("the export has no ") + name + " (the support kernel this backward needs)");
        args.push_back(CallArg::constexpr_int("BLOCK", kSupportBlock));
        kernel(name, {(n + kSupportBlock - 1) / kSupportBlock, 1, 1}, std::move(args), kSupportWarps, 3);
    }

    // ---- what the backward returns (_as_dtype): each gradient in its input's buffer and dtype
    void results() {
        for (size_t i = 0; i < m_.plan.results.size(); ++i) {
            const plan::Result &res = m_.plan.results[i];
            auto dest = tensors_.find(TensorRef{TensorRef::Input, static_cast<int>(i)});
            if (!res.present || dest == tensors_.end() || !dest->second->grad) continue;
            auto from = shadows_.find(res.tensor);
            if (from != shadows_.end()) {
                finish(from->second, dest->first);
                continue;
            }
            const TensorArg &to = *dest->second;  // no gradient flowed into it: zeros, as autograd reads None
            memset(caller(dest->first, CallerPointer::Grad),
                   static_cast<uint64_t>(span(to) * dtype(to.dtype, "").bytes));
        }
    }

    void finish(const Buffer &from, const TensorRef &dest) {
        const TensorArg &to = tensor(dest);
        const DType &d = dtype(to.dtype, "");
        const Ptr grad = caller(dest, CallerPointer::Grad);
        if (from.ptr.base == Ptr::Caller && from.ptr.slot == grad.slot) return;
        const int64_t n = span(to);
        if (from.dtype == &d) {
            Action a;
            a.kind = Action::Copy;
            a.dst = grad;
            a.src = from.ptr;
            a.bytes = static_cast<uint64_t>(n * d.bytes);
            out_.actions.push_back(a);
            return;
        }
        CallArg src = buffer_arg("Src", from), dst = CallArg::pointer("Dst", grad, d), count = CallArg::integer("n", n);
        for (CallArg *a : {&src, &dst, &count}) a->specialize = false;
        support(kCast, n, {src, dst, count});
    }
};

}  // namespace

Program build(const Manifest &m, const Request &r, int sm_count) { return Builder(m, r, sm_count).run(); }

namespace {

// 'z' for 0, 'a' for a 16-byte aligned pointer, 'u' for another.
char pointer_class(uint64_t p) { return p == 0 ? 'z' : p % 16 == 0 ? 'a' : 'u'; }

}  // namespace

std::string program_key(const Request &r) {
    std::string k = r.kernel;
    for (int64_t g : r.grid) k += "|" + std::to_string(g);
    k += "|" + std::to_string(r.num_warps) + "|" + std::to_string(r.num_stages);
    std::map<uint64_t, std::string> grads;  // which gradient buffers coincide
    for (const auto &[name, t] : r.tensors) {
        k += "|" + name + ":" + t.dtype + ":";
        for (size_t d = 0; d < t.shape.size(); ++d)
            k += std::to_string(t.shape[d]) + "/" + std::to_string(t.strides[d]) + ",";
        k += {pointer_class(t.data), pointer_class(t.grad), pointer_class(t.saved)};
        if (t.grad) k += "=" + grads.emplace(t.grad, name).first->second;
    }
    for (const auto &[name, v] : r.values)
        k += "|" + name + "=" + std::to_string(static_cast<int>(v.kind)) + literal(v);
    return k;
}

std::vector<uint64_t> caller_addresses(const Program &p, const Request &r) {
    std::vector<uint64_t> out;
    for (const CallerPointer &c : p.callers) {
        const TensorArg &t = r.tensors.at(c.tensor);
        out.push_back(c.field == CallerPointer::Data ? t.data : c.field == CallerPointer::Grad ? t.grad : t.saved);
    }
    return out;
}

}  // namespace tad::aot
