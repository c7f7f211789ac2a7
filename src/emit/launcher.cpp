// The backward launcher: the backward plan's steps printed as Python, over one shadow variable per
// tensor of the call.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ad/tape.h"
#include "emit/module_internal.h"
#include "support/error.h"
#include "support/py_literal.h"

namespace tad::emit::detail {

namespace {

using plan::Alloc;
using plan::Arg;
using plan::Init;
using plan::TensorRef;

class LauncherWriter {
public:
    LauncherWriter(const frontend::KernelFile &kf, const plan::Plan &p) : p_(p), stub_(kf.stub), names_(stub_.params) {
        launches_ = names_.fresh("launches");
        temps_ = names_.fresh("temps");
        outs_ = names_.fresh("outs");
        layouts_ = names_.fresh("out_layouts");
        grads_ = names_.fresh("grads");
        a_ = names_.fresh("a");
        tape_ = names_.fresh("tape");
        tape_stride_ = names_.fresh("tape_stride");
        need_ = names_.fresh("tape_need");
        hits_ = names_.fresh("hits");
        sums_ = names_.fresh("partial_sums");
        programs_ = names_.fresh("programs");
        wide_block_ = names_.fresh("wide_block");
    }

    Launcher run() {
        Launcher out;
        out.name = stub_.name + "_backward";
        std::vector<std::string> args = {launches_, temps_};
        args.insert(args.end(), stub_.params.begin(), stub_.params.end());
        args.insert(args.end(), {outs_, layouts_, grads_});
        os_ << "def " << out.name << "(" << join(args) << "):\n";
        os_ << "    \"\"\"Gradients of the stub's inputs from the gradients of its outputs: the backward of each "
               "launch,\n    last to first.\"\"\"\n";
        for (const Alloc &a : p_.prologue) alloc(a, "    ");
        for (const plan::Step &s : p_.steps) step(s);
        std::vector<std::string> rets;
        for (size_t i = 0; i < p_.results.size(); ++i)
            rets.push_back(p_.results[i].present
                               ? "_as_dtype(" + grad_.at(p_.results[i].tensor) + ", " + stub_.params[i] + ")"
                               : "None");
        os_ << "    return " << py_tuple(rets, false) << "\n";
        out.source = os_.str();
        snapshot_tests(&out);
        out.inputs = inputs_;
        out.outputs = outputs_;
        out.temps = temps_used_;
        return out;
    }

private:
    const plan::Plan &p_;
    const frontend::StubInfo &stub_;
    Names names_;
    std::ostringstream os_;
    std::string launches_, temps_, outs_, layouts_, grads_, a_, tape_, tape_stride_, need_, hits_, sums_;
    std::map<TensorRef, std::string> grad_;  // the shadow variable of each tensor
    std::map<TensorRef, std::string> current_;  // where it was rebound (an incoming gradient's copy)
    std::map<TensorRef, std::string> partial_;  // a re-gridded run's partial buffer of each tensor's shadow
    std::map<std::string, std::string> stash_;  // the running branch's stash variable of each stash
    std::set<TensorRef> summed_;  // shadows that are their partial rows' sum (Init::Partials)
    std::string programs_, wide_block_;
    std::vector<std::string> box_names_;  // one per remapped branch of a case
    const plan::Branch *branch_ = nullptr;  // the branch being written
    std::string box_of_branch_;  // writing a remapped branch's condition: num_programs(k) is this box's
    std::set<std::string> inputs_;
    std::set<int> outputs_, temps_used_;

    std::string temp(int i) {
        temps_used_.insert(i);
        return temps_ + "[" + std::to_string(i) + "]";
    }

    // The forward's value of a tensor.
    std::string primal(TensorRef t) {
        switch (t.kind) {
        case TensorRef::Input:
            inputs_.insert(stub_.params.at(static_cast<size_t>(t.index)));
            return stub_.params.at(static_cast<size_t>(t.index));
        case TensorRef::Output: outputs_.insert(t.index); return outs_ + "[" + std::to_string(t.index) + "]";
        default: return temp(t.index);
        }
    }

    std::string grad_var(TensorRef t) {
        auto it = grad_.find(t);
        if (it != grad_.end()) return it->second;
        std::string base = t.kind == TensorRef::Input
                               ? "d_" + stub_.params.at(static_cast<size_t>(t.index))
                               : (t.kind == TensorRef::Output ? "g" : "d_temp") + std::to_string(t.index);
        return grad_[t] = current_[t] = names_.fresh(base);
    }

    // A coverage's digits and guards on a launch as Python: "((1, a["V"]), (a["stride_row"], ...)), a["V"] >= 4".
    std::string cover(const passes::Coverage &c, size_t launch) const {
        return cover(c, [&](const std::string &n) { return symbol(launch, n); });
    }

    static std::string cover(const passes::Coverage &c, const std::function<std::string(const std::string &)> &name) {
        std::string digits, guards;
        for (const auto &[coeff, size] : c.digits) digits += "(" + coeff.str(name) + ", " + size.str(name) + "), ";
        for (const passes::Inequality &g : c.guards)
            guards += (guards.empty() ? "" : " and ") + g.lhs.str(name) + " >= " + g.rhs.str(name);
        return "(" + digits + "), " + (guards.empty() ? "True" : guards);
    }

    std::string incoming(int j) const {
        return grads_ + "[" + std::to_string(j) + "], " + layouts_ + "[" + std::to_string(j) + "]";
    }

    void alloc(const Alloc &a, const std::string &indent) {
        if (a.init == Init::Incoming) {  // a copy for this branch alone
            std::string var = current_[a.tensor] = names_.fresh("g" + std::to_string(a.index));
            os_ << indent << var << " = _as_layout(" << incoming(a.index) << ")\n";
            return;
        }
        std::string var = grad_var(a.tensor);
        os_ << indent << var << " = ";
        switch (a.init) {
        case Init::Absent: os_ << "None\n"; return;
        case Init::Cotangent: os_ << "_cotangent_buffer(" << incoming(a.index) << ")\n"; return;
        case Init::Accumulator: os_ << "_atomic_buffer(" << primal(a.tensor) << ")\n"; return;
        case Init::Zeros: os_ << "_zero_buffer(" << primal(a.tensor) << (a.wide ? ", True" : "") << ")\n"; return;
        case Init::Partials:  // made by the re-gridded run (regrid(), call())
            os_ << "None\n";
            summed_.insert(a.tensor);
            return;
        case Init::Covered:
            if (a.run >= 0) {  // filled, if need be, before its run (call())
                os_ << "_empty_buffer(" << primal(a.tensor) << (a.wide ? ", True" : "") << ")\n";
                return;
            }
            os_ << "_covered_buffer(" << primal(a.tensor) << ", " << cover(*a.cover, a.launch)
                << (a.wide ? ", True" : "") << ")\n";
            return;
        default: fail(TAD_ERR_INTERNAL, "launcher: a forward-mode allocation in the backward plan");
        }
    }

    std::string arg(size_t launch, const Arg &a) {
        switch (a.kind) {
        case Arg::Scalar: return a_ + "[\"" + a.name + "\"]";
        case Arg::Tensor: return primal(a.tensor);
        case Arg::Saved: return launches_ + "[" + std::to_string(launch) + "].pre[\"" + a.name + "\"]";
        case Arg::Shadow: {
            auto it = current_.find(a.tensor);
            return it != current_.end() ? it->second : grad_var(a.tensor);
        }
        case Arg::Tape: return tape_;
        case Arg::TapeStride: return tape_stride_;
        case Arg::TapeNeed: return need_;
        case Arg::GridSize:
            return "_grid_size(" + launches_ + "[" + std::to_string(launch) + "].grid, " + std::to_string(a.axis) + ")";
        case Arg::Hits: return hits_;
        case Arg::Stash: return stash_.at(a.name);
        case Arg::Partial: return partial_.at(a.tensor);
        case Arg::PartialStride: return partial_.at(a.tensor) + ".shape[1]";
        }
        return "?";
    }

    // Before run `index` of the branch: the buffers whose cover is in its terms (Alloc::run) zeroed
    // unless it holds: its parameters by the arguments it gets, num_programs by its grid (named
    // `grid` on return where any).
    void fill_uncovered(int index, const ir::Function &fn, const std::vector<std::string> &args,
                        const std::function<std::string(const std::string &)> &value, std::string *grid,
                        const std::string &indent) {
        auto leaf = [&](const std::string &n) -> std::string {
            const std::string programs = "num_programs(";
            if (n.compare(0, programs.size(), programs) == 0)
                return "_grid_size(" + *grid + ", " + n.substr(programs.size(), n.size() - programs.size() - 1) + ")";
            for (size_t i = 0; i < fn.params.size(); ++i)
                if (fn.params[i].name == n) return args.at(i);
            return value(n);
        };
        auto name = [&](const std::string &n) { return spell(n, leaf); };
        bool named = false;
        for (const Alloc &a : branch_->allocs) {
            if (a.init != Init::Covered || a.run != index) continue;
            if (!named) {
                named = true;
                const std::string g = names_.fresh("grid_");
                os_ << indent << g << " = " << *grid << "\n";
                *grid = g;
            }
            // An empty grid writes nothing (as the oracle decides).
            os_ << indent << "_zero_unless_covered(" << grad_var(a.tensor) << ", " << cover(*a.cover, name)
                << " and 0 not in " << *grid << ")\n";
        }
    }

    void call(size_t launch, const plan::Run &r, const std::string &indent, int index = -1) {
        const ir::Function &fn = p_.kernels.at(static_cast<size_t>(r.kernel)).fn;
        const std::string l = launches_ + "[" + std::to_string(launch) + "]";
        std::vector<std::string> args;
        for (const Arg &a : r.args) args.push_back(arg(launch, a));
        // A widened run's constexpr, computed once before the launch (module_runtime.py's _widen).
        const std::string &wide = wide_block_;
        if (!r.widening.name.empty()) {
            std::vector<std::string> tiles;
            for (const std::vector<std::string> &tile : r.widening.tiles) {
                std::vector<std::string> dims;
                for (const std::string &d : tile) dims.push_back(symbol(launch, d));
                tiles.push_back("(" + join(dims) + (dims.size() == 1 ? ",)" : ")"));
            }
            os_ << indent << wide << " = _widen(" << symbol(launch, r.widening.name) << ", " << r.widening.most << ", ("
                << join(tiles) << (tiles.size() == 1 ? ",))" : "))") << "\n";
        }
        auto value = [&](const std::string &n) { return n == r.widening.name ? wide : symbol(launch, n); };
        for (const ir::Constexpr &c : fn.constexprs) args.push_back(c.name + "=" + value(c.name));
        std::string grid = l + ".grid";
        if (!r.regrid_axes.empty()) grid = "_regrid(" + grid + ", " + axes(r.regrid_axes) + ", " + programs_ + ")";
        if (r.transposed_axis >= 0)
            grid = "_regrid(" + grid + ", " + std::to_string(r.transposed_axis) + ", " + r.trips.str(value) + ")";
        if (index >= 0) fill_uncovered(index, fn, args, value, &grid, indent);
        os_ << indent << fn.name << "[" << grid << "](" << join(args) << tiles(r, fn) << ", **" << l << ".options)\n";
    }

    // `_tiles=((name, where, target), ...)` for the block sizes the kernel's wrapper may set
    // (module_runtime.py's _retile): `where` is the grid axis, or the name of the argument that
    // receives G.
    static std::string tiles(const plan::Run &r, const ir::Function &fn) {
        std::vector<std::string> items;
        std::string g;
        for (size_t i = 0; i < r.args.size(); ++i)
            if (r.args[i].kind == Arg::GridSize) g = fn.params[i].name;
        for (const passes::FreeTile &t : r.tiles) {
            if (t.axis < 0 && g.empty()) continue;
            const std::string where = t.axis < 0 ? "\"" + g + "\"" : std::to_string(t.axis);
            items.push_back("(\"" + t.name + "\", " + where + ", " + std::to_string(t.target) + ")");
        }
        if (items.empty()) return "";
        return ", _tiles=(" + join(items) + (items.size() == 1 ? ",)" : ")");
    }

    // The tape: its elements per program from the launch's arguments where every program needs the
    // same (ad::host_need); otherwise only once each program's trip counts are known, which the
    // sizing kernel writes, the largest setting the stride between programs' tapes (a host
    // synchronization).
    void tape(size_t launch, const plan::Run &sizing, const std::string &indent) {
        const std::string grid = launches_ + "[" + std::to_string(launch) + "].grid", device = layouts_ + "[0][3]";
        if (std::optional<passes::HostExpr> need =
                ad::host_need(p_.kernels.at(static_cast<size_t>(sizing.kernel)).fn)) {
            os_ << indent << tape_stride_ << " = max("
                << need->str([&](const std::string &n) { return symbol(launch, n); }) << ", 1)\n";
        } else {
            os_ << indent << need_ << " = torch.empty(math.prod(" << grid << "), dtype=torch.int64, device=" << device
                << ")\n";
            call(launch, sizing, indent);
            os_ << indent << tape_stride_ << " = max(int(" << need_ << ".max().item()), 1)\n";
        }
        os_ << indent << tape_ << " = torch.empty(math.prod(" << grid << ") * " << tape_stride_
            << ", dtype=torch.float32, device=" << device << ")\n";
    }

    void branch(size_t launch, const plan::Branch &b, const std::string &indent) {
        if (b.sizing) tape(launch, *b.sizing, indent);
        summed_.clear();
        for (const Alloc &a : b.allocs) alloc(a, indent);
        if (plan::takes_hits(b))  // every program of the folding kernel writes its word: no fill
            os_ << indent << hits_ << " = torch.empty(math.prod(" << launches_ << "[" << launch
                << "].grid), dtype=torch.int32, device=" << layouts_ << "[0][3])\n";
        for (const plan::StashBuffer &s : b.stashes) {  // the rest stores every program's tile: no fill
            std::vector<std::string> dims;
            for (const std::string &d : s.dims) dims.push_back(symbol(launch, d));
            stash_[s.param] = names_.fresh(s.param);
            os_ << indent << stash_[s.param] << " = _stash_buffer(math.prod(" << launches_ << "[" << launch << "].grid)"
                << (dims.empty() ? "" : " * " + join(dims, " * ")) << ", " << layouts_ << "[0]"
                << (s.like ? ", " + primal(*s.like) + ".dtype" : "") << ")\n";
        }
        branch_ = &b;
        for (size_t i = 0; i < b.runs.size(); ++i) {
            const plan::Run &r = b.runs[i];
            if (!r.regrid_axes.empty()) regrid(launch, r, indent);
            call(launch, r, indent, static_cast<int>(i));
            if (r.partials.empty()) continue;
            std::vector<std::string> partials;
            for (const TensorRef &t : r.partials) partials.push_back(partial_.at(t));
            os_ << indent << sums_ << " = _row_sums(" << join(partials) << ")\n";
            for (size_t i = 0; i < r.partials.size(); ++i) {
                const TensorRef &t = r.partials[i];
                const std::string sum = sums_ + "[" + std::to_string(i) + "]";
                if (summed_.count(t))
                    os_ << indent << grad_var(t) << " = _partial_sum(" << primal(t) << ", " << sum << ")\n";
                else
                    os_ << indent << "_sum_partial(" << grad_var(t) << ", " << sum << ")\n";
            }
        }
    }

    // `0`, or `(0, 2)`: module_runtime.py's _grid_size and _regrid take either.
    static std::string axes(const std::vector<int> &v) {
        std::vector<std::string> s;
        for (int a : v) s.push_back(std::to_string(a));
        return s.size() == 1 ? s[0] : "(" + join(s) + ")";
    }

    // A re-gridded run: G is the product of the recorded grid's sizes along its axes, P programs
    // loop over it; each partial gradient gets P rows of per-program sums.
    void regrid(size_t launch, const plan::Run &r, const std::string &indent) {
        const std::string grid = launches_ + "[" + std::to_string(launch) + "].grid";
        os_ << indent << programs_ << " = _regrid_programs(" << grid << ", " << axes(r.regrid_axes) << ", " << layouts_
            << "[0][3], " << largest_tile(launch, p_.kernels.at(static_cast<size_t>(r.kernel)).fn) << ")\n";
        std::vector<std::string> names, likes;
        for (size_t i = 0; i < r.partials.size(); ++i) {
            const TensorRef &t = r.partials[i];
            names.push_back(partial_[t] = names_.fresh(grad_var(t) + "_partial"));
            const bool summed = summed_.count(t) > 0;
            const bool covered = i < r.partial_covers.size() && r.partial_covers[i];
            // No program runs on an empty grid: the rows then stay as allocated.
            likes.push_back("(" + (summed ? primal(t) : grad_var(t)) + (summed ? ", True" : ", False") +
                            (covered ? ", " + cover(*r.partial_covers[i], launch) + " and 0 not in " + grid : "") +
                            ")");
        }
        if (!names.empty())
            os_ << indent << join(names) << (names.size() == 1 ? "," : "") << " = _partial_buffers(" << programs_
                << ", " << join(likes) << ")\n";
    }

    // The element count of fn's largest tile (by its traced sizes), spelled with the launch's
    // constexprs where its dims are named by one.
    std::string largest_tile(size_t launch, const ir::Function &fn) const {
        std::string out;
        for (const std::string &d : plan::largest_tile(fn)) out += (out.empty() ? "" : " * ") + symbol(launch, d);
        return out.empty() ? "1" : out;
    }

    // A guard's symbol: a recorded scalar, or `num_programs(k)`, the recorded grid's size along k.
    // A plan symbol as Python: n//d truncated as the kernel divides, a literal as is, any other name
    // as `leaf` spells it.
    static std::string spell(const std::string &name, const std::function<std::string(const std::string &)> &leaf) {
        const size_t div = name.find("//");
        if (div != std::string::npos)
            return "_tdiv(" + spell(name.substr(0, div), leaf) + ", " + spell(name.substr(div + 2), leaf) + ")";
        if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) return name;
        return leaf(name);
    }

    std::string symbol(size_t launch, const std::string &name) const {
        return spell(name, [&](const std::string &n) { return launch_leaf(launch, n); });
    }

    std::string launch_leaf(size_t launch, const std::string &name) const {
        const std::string grid = "num_programs(";
        if (name.compare(0, grid.size(), grid) == 0)
            return "(" +
                   (box_of_branch_.empty() ? launches_ + "[" + std::to_string(launch) + "].grid" : box_of_branch_) +
                   " + (1, 1))[" + name.substr(grid.size(), name.size() - grid.size() - 1) + "]";
        const std::string program = "program_id(";
        if (name.compare(0, program.size(), program) == 0)
            return "p[" + name.substr(program.size(), name.size() - program.size() - 1) + "]";
        return a_ + "[\"" + name + "\"]";
    }

    // `box = _program_box(...)`: the box the launch's programs map onto one to one for a remapped
    // branch (module_runtime.py), None where they do not.
    std::string box_assignment(size_t launch, const passes::ProgramMap &m, const std::string &box) const {
        auto spell = [&](const std::string &n) { return symbol(launch, n); };
        std::vector<std::string> coords, key;
        for (const passes::HostExpr &c : m.coords) coords.push_back(c.str(spell));
        for (const std::string &n : m.names()) key.push_back(spell(n));
        std::string tiles;
        if (m.tiles)
            tiles = ", tiles=(" + std::to_string(m.tiles->axis) + ", lambda p: (" + m.tiles->lo.str(spell) + ", " +
                    m.tiles->hi.str(spell) + ", " + m.tiles->step.str(spell) + "))";
        return box + " = _program_box(" + launches_ + "[" + std::to_string(launch) +
               "].grid, lambda p: " + py_tuple(coords, false) + ", " + py_tuple(key, false) + tiles + ")";
    }

    // Whether a branch reads a copy the forward saved (Arg::Saved).
    static bool reads_saved(const plan::Branch &b) {
        auto saved = [](const plan::Run &r) {
            return std::any_of(r.args.begin(), r.args.end(),
                               [](const plan::Arg &a) { return a.kind == plan::Arg::Saved; });
        };
        return (b.sizing && saved(*b.sizing)) || std::any_of(b.runs.begin(), b.runs.end(), saved);
    }

    // For each launch whose snapshots some branches of its backward do not read, a function of the
    // recorded launches telling whether the branch taken reads them (the guards as the backward
    // tests them), so that the forward copies only what the backward will read.
    void snapshot_tests(Launcher *out) {
        std::set<size_t> snapped;
        for (const plan::Snapshot &sn : p_.snapshots) snapped.insert(sn.launch);
        for (const plan::Step &s : p_.steps) {
            if (!snapped.count(s.launch)) continue;
            bool all = true;
            for (const plan::Case &c : s.cases)
                for (const plan::Branch &b : c.branches) all = all && reads_saved(b);
            if (all) continue;
            const std::string name = "_snapshots_read_" + std::to_string(s.launch);
            std::ostringstream body;
            body << "def " << name << "(" << launches_ << "):\n";
            body << "    \"\"\"Whether the backward of launch " << s.launch
                 << " takes a branch that reads the copies the forward saves.\"\"\"\n";
            std::swap(os_, body);
            write_step(
                os_, s, launches_, a_,
                [&](const plan::Case &c, const std::string &indent) { tests(s.launch, c, indent); },
                [](const std::string &, const std::string &) { return std::string(); }, "return True");
            std::swap(os_, body);
            out->tests += body.str() + "\n\n";
            out->snapshot_tests[s.launch] = name;
        }
    }

    // A case's branches as tests: `return` whether the first whose guards hold reads a snapshot.
    void tests(size_t launch, const plan::Case &c, const std::string &indent) {
        const std::vector<plan::Branch> &bs = c.branches;
        std::map<std::string, std::string> computed;
        for (const plan::Branch &b : bs) {
            std::string cond;
            if (b.remap) {
                const std::string expr = box_assignment(launch, *b.remap, "");
                auto [it, fresh] = computed.emplace(expr, "box" + std::to_string(computed.size()));
                if (fresh) os_ << indent << it->second << expr << "\n";
                box_of_branch_ = it->second;
                cond = it->second + " is not None";
            }
            for (const plan::Guard &g : b.guards)
                cond += (cond.empty() ? "" : " and ") + g.str([&](const std::string &n) { return symbol(launch, n); });
            box_of_branch_.clear();
            const std::string ret = std::string("return ") + (reads_saved(b) ? "True" : "False");
            if (cond.empty()) {
                os_ << indent << ret << "\n";
                return;
            }
            os_ << indent << "if " << cond << ":\n" << indent << "    " << ret << "\n";
        }
        os_ << indent << "return True\n";
    }

    // The case's preconditions, each raising its refusal where it fails; a `mapped` one fails where
    // no branch's box exists (`boxes`: per branch, the name of its box, "" where none).
    void preconditions(size_t launch, const plan::Case &c, const std::vector<std::string> &boxes,
                       const std::string &indent) {
        std::string any;
        for (const std::string &b : std::set<std::string>(boxes.begin(), boxes.end()))
            if (!b.empty()) any += (any.empty() ? "" : " or ") + b + " is not None";
        for (const plan::Precondition &p : c.preconditions) {
            std::string cond = !p.mapped ? "" : any.empty() ? "False" : any;
            if (p.mapped && !p.guards.empty()) cond = "(" + cond + ")";
            for (const plan::Guard &g : p.guards)
                cond += (cond.empty() ? "" : " and ") + g.str([&](const std::string &n) { return symbol(launch, n); });
            os_ << indent << "if not (" << cond << "):\n"
                << indent << "    raise RuntimeError(" << py_literal(p.refusal, PyQuotes::Double) << ")\n";
        }
    }

    // A case's variants, tried by their guards (conditions on recorded scalars); a remapped one
    // where its box exists, its guards read on the box.
    void branches(size_t launch, const plan::Case &c, const std::string &indent) {
        const std::vector<plan::Branch> &bs = c.branches;
        std::vector<std::string> boxes(bs.size());
        std::map<std::string, std::string> computed;  // a box's expression -> its name: computed once
        for (size_t i = 0, n = 0; i < bs.size(); ++i)
            if (bs[i].remap) {
                std::string expr = box_assignment(launch, *bs[i].remap, "");
                auto [it, fresh] = computed.emplace(expr, "");
                if (fresh) {
                    while (box_names_.size() <= n) box_names_.push_back(names_.fresh("box"));
                    it->second = box_names_[n++];
                    os_ << indent << it->second << expr << "\n";
                }
                boxes[i] = it->second;
            }
        preconditions(launch, c, boxes, indent);
        for (size_t i = 0; i < bs.size(); ++i) {
            std::string inner = indent;
            if (bs.size() > 1) {
                box_of_branch_ = boxes[i];
                std::string cond = boxes[i].empty() ? "" : boxes[i] + " is not None";
                for (size_t g = 0; g < bs[i].guards.size(); ++g)
                    cond += (cond.empty() ? "" : " and ") +
                            bs[i].guards[g].str([&](const std::string &n) { return symbol(launch, n); });
                box_of_branch_.clear();
                os_ << indent << (cond.empty() ? "else:" : (i ? "elif " : "if ") + cond + ":") << "\n";
                inner += "    ";
            }
            // The remapped kernels run on the box: every later use of the launch's grid is its.
            if (bs[i].remap)
                os_ << inner << launches_ << " = _with_grid(" << launches_ << ", " << launch << ", " << boxes[i]
                    << ")\n";
            branch(launch, bs[i], inner);
        }
    }

    void step(const plan::Step &s) {
        write_step(
            os_, s, launches_, a_,
            [&](const plan::Case &c, const std::string &indent) { branches(s.launch, c, indent); },
            [&](const std::string &shown, const std::string &names) {
                return "no backward of " + s.kernel + " was generated for " + shown +
                       " (its backward is specialized on " + names +
                       "); regenerate with a SWEEP entry or a call that uses these values";
            });
    }
};

// Whether the recorded launch's `name` has the key's `value`. A tensor argument is not among the
// recorded scalars: it is not None, and it is not any literal.
std::string key_test(const std::string &args, const std::string &name, const std::string &value) {
    const std::string at = args + "[\"" + name + "\"]", in = "\"" + name + "\" in " + args;
    if (value == plan::kNotNone) return "(\"" + name + "\" not in " + args + " or " + at + " is not None)";
    if (value == "None") return "(" + in + " and " + at + " is None)";
    return at + " == " + value;
}

}  // namespace

void write_step(std::ostream &os, const plan::Step &s, const std::string &launches, const std::string &args,
                const std::function<void(const plan::Case &, const std::string &)> &body,
                const std::function<std::string(const std::string &, const std::string &)> &missing,
                const std::string &otherwise) {
    os << "    # launch " << s.launch << ": " << s.kernel << "\n";
    os << "    " << args << " = " << launches << "[" << s.launch << "].args\n";
    // A backward specialized on constexpr values (a static `if`, an unrolled loop, a value baked in)
    // serves those values only: dispatch on them.
    const bool keyed = !s.cases.front().key.empty();
    for (size_t c = 0; c < s.cases.size(); ++c) {
        if (!keyed) {
            body(s.cases[c], "    ");
            continue;
        }
        std::string cond;
        for (const auto &[name, value] : s.cases[c].key)
            cond += (cond.empty() ? "" : " and ") + key_test(args, name, value);
        os << "    " << (c == 0 ? "if " : "elif ") << cond << ":\n";
        body(s.cases[c], "        ");
    }
    if (!keyed) return;
    if (!otherwise.empty()) {
        os << "    else:\n        " << otherwise << "\n";
        return;
    }
    // Every name some case is keyed on (a case may be keyed on more: a constexpr that only the branch
    // it took reads).
    // A parameter keyed on not being None may be a tensor, which is not among the recorded scalars.
    std::vector<std::string> keyed_on;
    std::set<std::string> maybe_tensor;
    for (const plan::Case &c : s.cases)
        for (const auto &[name, value] : c.key) {
            if (std::find(keyed_on.begin(), keyed_on.end(), name) == keyed_on.end()) keyed_on.push_back(name);
            if (value == plan::kNotNone) maybe_tensor.insert(name);
        }
    std::string names, shown;
    for (const std::string &name : keyed_on) {
        names += (names.empty() ? "" : ", ") + name;
        const std::string value =
            maybe_tensor.count(name) ? args + ".get('" + name + "', '<tensor>')" : args + "['" + name + "']";
        shown += (shown.empty() ? "" : ", ") + name + "={" + value + "!r}";
    }
    os << "    else:\n        raise RuntimeError(f\"" << missing(shown, names) << "\")\n";
}

Launcher emit_launcher(const frontend::KernelFile &kf, const plan::Plan &p) { return LauncherWriter(kf, p).run(); }

}  // namespace tad::emit::detail
