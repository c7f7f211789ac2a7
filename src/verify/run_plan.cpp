#include "verify/run_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "ad/tape.h"
#include "passes/pipeline_loops.h"
#include "support/error.h"

namespace tad::verify {

namespace {

const double kNaN = std::nan("");

frontend::ArgBinding binding(const Recorded &r, const std::string &name) {
    for (const frontend::ArgBinding &b : r.bindings)
        if (b.name == name) return b;
    fail(TAD_ERR_INTERNAL, "plan runner: the recorded launch has no argument '" + name + "'");
}

frontend::ArgBinding tensor_binding(const std::string &name, ir::DType dtype) {
    frontend::ArgBinding b;
    b.kind = frontend::ArgBinding::Tensor;
    b.name = name;
    b.dtype = dtype;
    return b;
}

int64_t programs(const Recorded &r) { return r.grid[0] * r.grid[1] * r.grid[2]; }

bool holds(const plan::Guard &g, const Recorded &r) {
    bool h = false;
    if (!g.eval([&](const std::string &n, int64_t *v) { return symbol_value(r, n, v); }, &h))
        fail(TAD_ERR_INTERNAL, "plan runner: guard '" + g.str() + "' names a value the launch does not record");
    return h;
}

// A symbol's value for a run: a widened run's constexpr widened as the module widens it.
bool run_value(const Recorded &r, const plan::Run &run, const std::string &name, int64_t *out) {
    if (name != run.widening.name) return symbol_value(r, name, out);
    const auto recorded = [&](const std::string &n, int64_t *v) { return symbol_value(r, n, v); };
    return passes::widened_value(run.widening, recorded, out);
}

// A transposed run's grid size along its axis: the loop's trip count on the recorded arguments.
int64_t trips(const Recorded &r, const plan::Run &run) {
    int64_t n = 0;
    if (!run.trips.eval([&](const std::string &name, int64_t *v) { return run_value(r, run, name, v); }, &n))
        fail(TAD_ERR_INTERNAL,
             "plan runner: trip count '" + run.trips.str() + "' names a value the launch does not record");
    return std::max<int64_t>(n, 0);
}

// A run's free block sizes as module_runtime.py's _retile sets them (plan.h: Run::tiles): their
// values, and the grid and G they leave. A tile without a target (the module keeps it unless the
// tuner chooses) runs at twice its value, or half, whichever divides the work: the tier checks the
// proof that any value computes the same gradient, not just the launcher's default.
struct Retiled {
    std::map<std::string, int64_t> values;
    std::array<int64_t, 3> grid;
    int64_t g;
};

Retiled retile(const Recorded &r, const plan::Run &run, const std::array<int64_t, 3> &grid, int64_t g) {
    Retiled out{{}, grid, g};
    for (const passes::FreeTile &t : run.tiles) {
        int64_t value = 0;
        if (!symbol_value(r, t.name, &value)) continue;
        int64_t &count = t.axis < 0 ? out.g : out.grid.at(static_cast<size_t>(t.axis));
        const std::vector<int64_t> tries =
            t.target > 0 ? std::vector<int64_t>{t.target} : std::vector<int64_t>{value * 2, value / 2};
        for (int64_t to : tries)
            if (to > 0 && (value * count) % to == 0) {
                count = value * count / to;
                out.values[t.name] = to;
                break;
            }
    }
    return out;
}

// G: the product of a re-gridded run's recorded sizes, or a transposed run's size along its axis.
int64_t grid_size(const Recorded &r, const plan::Run &run) {
    int64_t g = 1;
    for (int a : run.regrid_axes) g *= r.grid[a];
    return run.transposed_axis >= 0 ? r.grid[run.transposed_axis] : g;
}

// A re-gridded kernel runs on fewer programs than the forward's G (when G > 1), so that programs
// loop over several of the forward's and the loop's tail (r < G) matters.
int64_t regrid_programs(int64_t grid) { return std::max<int64_t>(1, std::min<int64_t>(grid, 3)); }

bool matches(const plan::Key &key, const Recorded &r) {
    for (const std::pair<std::string, std::string> &k : key) {
        if (k.second == plan::kNotNone) {
            auto a = std::find_if(r.bindings.begin(), r.bindings.end(),
                                  [&](const frontend::ArgBinding &x) { return x.name == k.first; });
            if (a == r.bindings.end() || a->kind == frontend::ArgBinding::None) return false;
            continue;
        }
        auto c = std::find_if(r.constexprs.begin(), r.constexprs.end(),
                              [&](const ir::Constexpr &x) { return x.name == k.first; });
        if (c == r.constexprs.end() || c->literal != k.second) return false;
    }
    return true;
}

}  // namespace

bool symbol_value(const Recorded &r, const std::string &name, int64_t *out) {
    return plan::launch_symbol(
        name, r.grid,
        [&](const std::string &n, int64_t *v) {
            auto a = r.args.find(n);
            if (a != r.args.end()) {
                if (a->second.kind == interp::ArgValue::Float) return false;
                return *v = a->second.ival, true;
            }
            for (const ir::Constexpr &c : r.constexprs)
                if (c.name == n) {
                    char *end = nullptr;
                    *v = std::strtoll(c.literal.c_str(), &end, 10);
                    return !c.literal.empty() && *end == '\0';
                }
            return false;
        },
        out);
}

SavedCopies run_forward(const std::vector<ir::Function> &kernels, const std::vector<Recorded> &launches,
                        const std::vector<plan::Snapshot> &snapshots, interp::Memory &mem) {
    SavedCopies saved;
    for (size_t m = 0; m < launches.size(); ++m) {
        for (const plan::Snapshot &s : snapshots)
            if (s.before == m && !saved.count({s.launch, s.param}))
                saved[{s.launch, s.param}] =
                    mem.add(interp::Buffer(mem.at(launches[s.launch].args.at(s.param).buffer)));
        std::vector<interp::ArgValue> args;
        for (const ir::Param &p : kernels[m].params) args.push_back(launches[m].args.at(p.name));
        interp::run(kernels[m], args, launches[m].grid, mem);
    }
    return saved;
}

// A kernel's bindings (for lowering its emitted text) and arguments, by parameter name.
struct PlanRunner::Call {
    std::vector<frontend::ArgBinding> bind;
    std::map<std::string, interp::ArgValue> args;
};

void PlanRunner::alloc(const plan::Alloc &a) {
    int id = allocate_(a);
    if (id < 0) return;
    shadows_[a.tensor] = id;
    // Uninitialised exactly where the launcher leaves it so, judged on the grid the branch runs on
    // (a remapped branch's box, set before its allocations).
    if (a.init == plan::Init::Covered && a.run < 0 && covered_ &&
        covered_(*a.cover, launches_.at(a.launch), a.tensor)) {
        std::vector<double> &data = mem_.at(id).data;
        std::fill(data.begin(), data.end(), poison_);
    }
}

// The box a remapped branch's launch runs on (its programs map onto it one to one), or nullopt.
std::optional<std::array<int64_t, 3>> box_of(const passes::ProgramMap &m, const Recorded &r) {
    std::optional<std::vector<int64_t>> box =
        m.box({r.grid.begin(), r.grid.end()},
              [&](const std::string &name, int64_t *out) { return symbol_value(r, name, out); });
    if (!box) return std::nullopt;
    std::array<int64_t, 3> grid{1, 1, 1};
    std::copy(box->begin(), box->end(), grid.begin());
    return grid;
}

const plan::Branch &PlanRunner::choose(const plan::Step &s, std::array<int64_t, 3> *box) const {
    const Recorded &r = launches_.at(s.launch);
    for (const plan::Case &c : s.cases) {
        if (!matches(c.key, r)) continue;
        const bool mapped = std::any_of(c.branches.begin(), c.branches.end(),
                                        [&](const plan::Branch &b) { return b.remap && box_of(*b.remap, r); });
        for (const plan::Precondition &p : c.preconditions) {
            bool ok = !p.mapped || mapped;
            for (const plan::Guard &g : p.guards) ok = ok && holds(g, r);
            if (!ok) fail(TAD_ERR_INVALID_ARGUMENT, p.refusal);
        }
        for (const plan::Branch &b : c.branches) {
            Recorded on = r;
            if (b.remap) {
                std::optional<std::array<int64_t, 3>> grid = box_of(*b.remap, r);
                if (!grid) continue;
                on.grid = *grid;
            }
            bool ok = true;
            for (const plan::Guard &g : b.guards) ok = ok && holds(g, on);
            if (!ok) continue;
            *box = on.grid;
            return b;
        }
    }
    fail(TAD_ERR_INTERNAL, "plan runner: no case of launch " + std::to_string(s.launch) + " (" + s.kernel +
                               ") applies to the recorded launch");
}

int64_t PlanRunner::size_tape(const plan::Plan &p, size_t launch, const plan::Run &sizing) {
    const Recorded &r = launches_.at(launch);
    const ir::Function &fn = p.kernels.at(static_cast<size_t>(sizing.kernel)).fn;
    const std::string &name = fn.name;
    // As the module sizes it: on the host where every program needs the same (no sizing kernel).
    if (std::optional<passes::HostExpr> host = ad::host_need(fn)) {
        int64_t n = 0;
        if (!host->eval([&](const std::string &v, int64_t *out) { return symbol_value(r, v, out); }, &n))
            fail(TAD_ERR_INTERNAL,
                 "plan runner: tape need '" + host->str() + "' names a value the launch does not record");
        return std::max<int64_t>(n, 1);
    }
    int need = -1;
    for (const plan::Arg &a : sizing.args)
        if (a.kind == plan::Arg::TapeNeed)
            need = mem_.add(interp::Buffer{"tape_need", ir::DType::I64, std::vector<double>(programs(r), kNaN)});
    this->launch(p, launch, sizing, 0, need);
    int64_t stride = 1;
    for (double n : mem_.at(need).data) {
        if (std::isnan(n)) fail(TAD_ERR_INTERNAL, "tape sizing kernel '" + name + "' left a program's need unwritten");
        stride = std::max(stride, static_cast<int64_t>(n));
    }
    return stride;
}

void PlanRunner::poison_run_covered(int index, const std::vector<frontend::ArgBinding> &bind,
                                    const std::array<int64_t, 3> &grid) {
    if (!covered_ || index < 0) return;
    Recorded on;  // the run's own values: its arguments and constexprs as bound, its grid
    on.grid = grid;
    for (const frontend::ArgBinding &b : bind)
        if (b.kind == frontend::ArgBinding::Int) on.args[b.name] = interp::ArgValue::integer(b.ival);
    for (const plan::Alloc &a : branch_->allocs)
        if (a.init == plan::Init::Covered && a.run == index && covered_(*a.cover, on, a.tensor)) {
            std::vector<double> &data = mem_.at(shadows_.at(a.tensor)).data;
            std::fill(data.begin(), data.end(), poison_);
        }
}

void PlanRunner::launch(const plan::Plan &p, size_t launch, const plan::Run &run, int64_t tape_stride, int need,
                        int index) {
    const Recorded &r = launches_.at(launch);
    const ir::Function &fn = p.kernels.at(static_cast<size_t>(run.kernel)).fn;
    std::array<int64_t, 3> grid = r.grid;
    for (size_t i = 0; i < run.regrid_axes.size(); ++i)
        grid[run.regrid_axes[i]] = i ? 1 : regrid_programs(grid_size(r, run));
    if (run.transposed_axis >= 0) grid[run.transposed_axis] = trips(r, run);
    const Retiled tiles = retile(r, run, grid, grid_size(r, run));
    Call c{{}, r.args};
    for (size_t i = 0; i < run.args.size(); ++i) {
        const plan::Arg &a = run.args[i];
        const ir::Param &param = fn.params[i];
        switch (a.kind) {
        case plan::Arg::Scalar: c.bind.push_back(binding(r, a.name)); break;
        case plan::Arg::Tensor:  // a saved value's final buffer is a parameter of its own name
            c.bind.push_back(binding(r, a.name));
            c.bind.back().name = param.name;
            // The recorded buffer: the kernel may also take a's copy from before the launch (Saved).
            c.args[param.name] = r.args.at(a.name);
            break;
        case plan::Arg::Saved:
            c.bind.push_back(binding(r, a.name));
            c.args[param.name] = interp::ArgValue::pointer(saved_.at({launch, a.name}));
            break;
        case plan::Arg::Shadow:
            c.bind.push_back(tensor_binding(param.name, fn.type(param.value).elem));
            c.args[param.name] = interp::ArgValue::pointer(shadows_.at(a.tensor));
            break;
        case plan::Arg::Tape:
            c.bind.push_back(tensor_binding(param.name, ir::DType::F32));
            // Poisoned: the backward must read only what its replay recorded.
            c.args[param.name] = interp::ArgValue::pointer(mem_.add(
                interp::Buffer{param.name, ir::DType::F32, std::vector<double>(programs(r) * tape_stride, kNaN)}));
            break;
        case plan::Arg::TapeStride: {
            frontend::ArgBinding b;
            b.kind = frontend::ArgBinding::Int;
            b.name = param.name;
            b.ival = tape_stride;
            c.bind.push_back(b);
            c.args[param.name] = interp::ArgValue::integer(tape_stride);
            break;
        }
        case plan::Arg::TapeNeed:
            c.bind.push_back(tensor_binding(param.name, ir::DType::I64));
            c.args[param.name] = interp::ArgValue::pointer(need);
            break;
        case plan::Arg::Hits:
            c.bind.push_back(tensor_binding(param.name, ir::DType::I32));
            c.args[param.name] = interp::ArgValue::pointer(hits_);
            break;
        case plan::Arg::Stash:
            c.bind.push_back(tensor_binding(param.name, ir::DType::F64));
            c.args[param.name] = interp::ArgValue::pointer(stashes_.at(a.name));
            break;
        case plan::Arg::GridSize:  // a transposed run's G as its tiles leave it
            bind_regrid(a, param, fn, a.axis == run.transposed_axis ? tiles.g : r.grid[a.axis], c);
            break;
        case plan::Arg::Partial:
        case plan::Arg::PartialStride: bind_regrid(a, param, fn, 0, c); break;
        }
    }
    for (const ir::Constexpr &ce : fn.constexprs) {
        c.bind.push_back(binding(r, ce.name));
        if (ce.name == run.widening.name && !run_value(r, run, ce.name, &c.bind.back().ival))
            fail(TAD_ERR_INTERNAL, "plan runner: the widened " + ce.name + " names a value the launch does not record");
        if (tiles.values.count(ce.name)) c.bind.back().ival = tiles.values.at(ce.name);
    }
    if (passes::has_pipelined_loop(fn)) {  // the module sets it from num_stages; it changes no value
        frontend::ArgBinding stages;
        stages.kind = frontend::ArgBinding::Int;
        stages.name = passes::kLoopStages;
        stages.ival = 3;
        c.bind.push_back(stages);
    }
    poison_run_covered(index, c.bind, tiles.grid);
    ir::Function kernel = frontend::lower_kernel(module_, fn.name, c.bind);
    std::vector<interp::ArgValue> args;
    for (const ir::Param &q : kernel.params) args.push_back(c.args.at(q.name));
    interp::run(kernel, args, tiles.grid, mem_);
}

void PlanRunner::bind_regrid(const plan::Arg &a, const ir::Param &param, const ir::Function &fn, int64_t grid,
                             Call &c) {
    frontend::ArgBinding b;
    b.kind = frontend::ArgBinding::Int;
    b.name = param.name;
    if (a.kind == plan::Arg::Partial) {
        c.bind.push_back(tensor_binding(param.name, fn.type(param.value).elem));
        c.args[param.name] = interp::ArgValue::pointer(partials_.at(a.tensor));
        return;
    }
    b.ival = a.kind == plan::Arg::GridSize ? grid : static_cast<int64_t>(mem_.at(shadows_.at(a.tensor)).data.size());
    c.bind.push_back(b);
    c.args[param.name] = interp::ArgValue::integer(b.ival);
}

// Poisoned: the transposed kernels must load only what the rest stored. float64: the oracle computes
// in float64.
void PlanRunner::allocate_stashes(const plan::Branch &b, const Recorded &r) {
    stashes_.clear();
    for (const plan::StashBuffer &s : b.stashes) {
        int64_t elements = programs(r);
        for (const std::string &d : s.dims) {
            int64_t n = 0;
            if (!symbol_value(r, d, &n))
                fail(TAD_ERR_INTERNAL,
                     "plan runner: stash " + s.param + " is sized by " + d + ", which the launch does not record");
            elements *= n;
        }
        stashes_[s.param] =
            mem_.add(interp::Buffer{s.param, ir::DType::F64, std::vector<double>(static_cast<size_t>(elements), kNaN)});
    }
}

// Partial buffers of a re-gridded run: P rows as long as the shadow's storage, zeroed, or poisoned
// where the run writes every element of each row (poison_covered).
void PlanRunner::allocate_partials(const plan::Run &run, size_t launch, int64_t programs) {
    for (size_t i = 0; i < run.partials.size(); ++i) {
        const plan::TensorRef &t = run.partials[i];
        const interp::Buffer &shadow = mem_.at(shadows_.at(t));
        const bool covered = covered_ && i < run.partial_covers.size() && run.partial_covers[i] &&
                             covered_(*run.partial_covers[i], launches_.at(launch), t);
        partials_[t] =
            mem_.add(interp::Buffer{shadow.name + "_partial", shadow.dtype,
                                    std::vector<double>(programs * shadow.data.size(), covered ? poison_ : 0.0)});
    }
}

// Each partial's rows summed in row order, added into its shadow (as the launcher's torch sum).
void PlanRunner::sum_partials(const plan::Run &run) {
    for (const plan::TensorRef &t : run.partials) {
        const std::vector<double> &part = mem_.at(partials_.at(t)).data;
        std::vector<double> &shadow = mem_.at(shadows_.at(t)).data;
        for (size_t i = 0; i < shadow.size(); ++i) {
            double sum = 0;
            for (size_t row = 0; row * shadow.size() < part.size(); ++row) sum += part[row * shadow.size() + i];
            shadow[i] += sum;
        }
    }
}

void PlanRunner::run(const plan::Plan &p) {
    for (const plan::Alloc &a : p.prologue) alloc(a);
    for (const plan::Step &s : p.steps) {
        std::array<int64_t, 3> grid{};
        const plan::Branch &b = choose(s, &grid);
        launches_.at(s.launch).grid = grid;
        const int64_t stride = b.sizing ? size_tape(p, s.launch, *b.sizing) : 1;
        for (const plan::Alloc &a : b.allocs) alloc(a);
        // Poisoned: the folding kernel must write every program's word before the scatter reads it.
        if (plan::takes_hits(b))
            hits_ = mem_.add(
                interp::Buffer{"hits", ir::DType::I32, std::vector<double>(programs(launches_.at(s.launch)), kNaN)});
        allocate_stashes(b, launches_.at(s.launch));
        branch_ = &b;
        for (size_t i = 0; i < b.runs.size(); ++i) {
            const plan::Run &run = b.runs[i];
            if (!run.regrid_axes.empty())
                allocate_partials(run, s.launch, regrid_programs(grid_size(launches_.at(s.launch), run)));
            launch(p, s.launch, run, stride, -1, static_cast<int>(i));
            sum_partials(run);
        }
    }
}

}  // namespace tad::verify
