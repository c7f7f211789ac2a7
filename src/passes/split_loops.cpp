// split_loops (split_loops.h): which kernels split, and the two kernels they split into.
#include "passes/split_loops.h"

#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

constexpr const char *kStash = "split_sums";

// Whether value v (a tile) is read only as a total: reduce_sum to a scalar, through negations and
// products with a scalar's broadcast.
bool read_as_total(const ir::Function &f, const std::vector<std::vector<int>> &users, ValueId v) {
    for (int u : users[v]) {
        const ir::Op &op = f.ops[u];
        if (op.kind == OpKind::ReduceSum && f.type(op.result).scalar()) continue;
        // v times a scalar's broadcast (v · v is no total's product).
        const bool scaled =
            op.kind == OpKind::Mul && (op.operands[0] == v) != (op.operands[1] == v) &&
            std::all_of(op.operands.begin(), op.operands.end(), [&](ValueId o) {
                return o == v || (f.def(o).kind == OpKind::Broadcast && f.type(f.def(o).operands[0]).scalar());
            });
        if (!(scaled || op.kind == OpKind::Neg) || !read_as_total(f, users, op.result)) return false;
    }
    return true;
}

class Check {
public:
    Check(const ir::Function &f, std::string *why) : f_(f), why_(why), users_(ir::users(f)), from_(from_loops(f)) {}

    // The top-level loops, the last one the loop that writes; empty where f does not split.
    std::vector<ir::Loop> run() {
        std::string problem;
        const std::vector<ir::Loop> all = ir::loops(f_, &problem);
        std::vector<ir::Loop> top;
        for (const ir::Loop &l : all) {
            if (l.parent >= 0) return fail("a loop is nested in another (" + op_at(f_, l.begin) + ")");
            top.push_back(l);
        }
        if (top.size() < 2) return fail("");  // nothing to split: not worth a line of --explain
        for (size_t k = 0; k < top.size(); ++k)
            if (!step_ok(top[k]) || !(k + 1 < top.size() ? sums_ok(top[k]) : last_ok(top[k]))) return {};
        if (!top_ok(top) || !loads_ok()) return {};
        return top;
    }

private:
    const ir::Function &f_;
    std::string *why_;
    std::vector<std::vector<int>> users_;
    std::vector<bool> from_;

    std::vector<ir::Loop> fail(const std::string &w) {
        *why_ = w;
        return {};
    }
    bool no(const std::string &w) {
        *why_ = w;
        return false;
    }

    bool step_ok(const ir::Loop &l) {
        const ir::Op &step = f_.def(f_.ops[l.begin].operands[2]);
        if (step.kind != OpKind::Const || step.fval <= 0)
            return no("the step of the " + op_at(f_, l.begin) + " is not a positive constant");
        return true;
    }

    // Its carried values are sums, its body writes by atomic adds only, and what it reads from
    // outside is computed before any loop ends.
    bool sums_ok(const ir::Loop &l) {
        const ir::Op &end = f_.ops[l.end];
        if (l.args.empty()) return no("the " + op_at(f_, l.begin) + " carries nothing and is not the last loop");
        for (size_t j = 0; j < l.args.size(); ++j) {
            const ir::Op &arg = f_.ops[l.args[j]];
            const ValueId next = end.operands[j];
            const ir::Op &add = f_.def(next);
            const bool sum =
                add.kind == OpKind::Add && (add.operands[0] == arg.result) != (add.operands[1] == arg.result);
            // The running sum read only by the next iteration: a share starts it at zero.
            if (!zero_constant(f_, arg.operands[0]) || !sum || users_[arg.result].size() != 1 ||
                users_[next].size() != 1)
                return no("the " + op_at(f_, l.begin) + " carries a value that is not a sum from zero");
            const ir::Type &t = f_.type(arg.result);
            if (t.elem != ir::DType::F32)
                return no("the " + op_at(f_, l.begin) + " sums a value that is not float32 (the stash's type)");
            if (t.rank() > 1 || !t.is_float() ||
                (t.rank() == 1 && !read_as_total(f_, users_, f_.ops[l.results[j]].result)))
                return no("the " + op_at(f_, l.begin) + " sums a tile read other than as its total");
        }
        for (int i = l.begin + 1; i < l.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::Store || op.kind == OpKind::Barrier)
                return no("the " + op_at(f_, l.begin) + " writes by a " + ir::op_info(op.kind).name);
            for (ValueId o : op.operands)
                if (f_.values[o].def_op < l.begin && from_[o])
                    return no("the " + op_at(f_, l.begin) + " reads a value computed after another loop");
        }
        for (ValueId o : f_.ops[l.begin].operands)
            if (from_[o]) return no("the bounds of the " + op_at(f_, l.begin) + " are computed after another loop");
        for (size_t j = 0; j < l.args.size(); ++j)
            if (reads_carried(l, f_.def(end.operands[j]).operands, f_.ops[l.args[j]].result))
                return no("the " + op_at(f_, l.begin) + " adds a term that reads a carried value");
        return true;
    }

    // Whether any of `values` (the operands of a sum's add) other than `own` reads a carried value of l.
    bool reads_carried(const ir::Loop &l, const std::vector<ValueId> &values, ValueId own) {
        std::set<ValueId> carried;
        for (int a : l.args) carried.insert(f_.ops[a].result);
        std::vector<ValueId> work;
        for (ValueId v : values)
            if (v != own) work.push_back(v);
        std::set<ValueId> seen;
        while (!work.empty()) {
            const ValueId v = work.back();
            work.pop_back();
            if (carried.count(v)) return true;
            if (f_.values[v].def_op < l.begin || !seen.insert(v).second) continue;
            for (ValueId o : f_.def(v).operands) work.push_back(o);
        }
        return false;
    }

    bool last_ok(const ir::Loop &l) {
        if (!l.args.empty()) return no("the last loop (" + op_at(f_, l.begin) + ") carries values");
        if (l.end + 1 != static_cast<int>(f_.ops.size())) return no("ops follow the last loop");
        return true;
    }

    // The top level outside loops has no side effects (it would run S times).
    bool top_ok(const std::vector<ir::Loop> &top) {
        std::vector<bool> inside(f_.ops.size(), false);
        for (const ir::Loop &l : top)
            for (int i = l.begin; i <= l.last(); ++i) inside[static_cast<size_t>(i)] = true;
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            const ir::OpClass c = ir::op_info(op.kind).cls;
            if (!inside[i] && ((c == ir::OpClass::Memory && op.kind != OpKind::Load) || c == ir::OpClass::Barrier))
                return no("the " + op_at(f_, static_cast<int>(i)) + " is outside the loops");
        }
        return true;
    }

    // No load reads a buffer the kernel writes: the programs that split an iteration range run in
    // any order.
    bool loads_ok() {
        std::set<std::string> written;
        for (const ir::Op &op : f_.ops)
            if (op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd)
                written.insert(pointer_base(f_, op.operands[0]));
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (f_.ops[i].kind == OpKind::Load && written.count(pointer_base(f_, f_.ops[i].operands[0])))
                return no("the " + op_at(f_, static_cast<int>(i)) + " reads a buffer the kernel writes");
        return true;
    }
};

// The first grid axis f reads no program id or program count of; -1 where it reads all three.
int free_axis(const ir::Function &f) {
    std::set<int64_t> used;
    for (const ir::Op &op : f.ops)
        if (op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms) used.insert(op.axis);
    for (int a = 0; a < 3; ++a)
        if (!used.count(a)) return a;
    return -1;
}

// Builds both kernels: the shared parts (a loop's share, the stash's rows) and each kernel's walk.
class Split {
public:
    Split(const ir::Function &f, const std::vector<ir::Loop> &top, int axis, int ways)
        : f_(f), top_(top), axis_(axis), ways_(ways) {
        for (size_t k = 0; k + 1 < top.size(); ++k) count_ += static_cast<int>(top[k].args.size());
    }

    int count() const { return count_; }

    ir::Function sums() {
        Kernel k(f_, "_share_sums");
        const ir::Loop &last = top_.back();
        const std::vector<bool> after = from_loops(f_);
        int slot = 0;
        for (int i = 0; i < last.begin; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != OpKind::Param) rows(k);
            const ir::Loop *l = loop_at(i);
            if (l) {
                share(k, *l);
                continue;
            }
            if (op.result != ir::kNoValue && after[op.result] && !in_loop(i)) continue;
            copy_op(k.b, f_, op, k.map);
            const ir::Loop *ended = ending(i);
            if (!ended) continue;
            for (int r : ended->results) {
                ValueId v = k.map[f_.ops[r].result];
                if (k.out.type(v).rank() == 1) v = k.b.reduce(OpKind::ReduceSum, v, 0, false);
                k.b.store(word(k, ways_id(k), slot++), v, ir::kNoValue);
            }
        }
        return k.finish(f_);
    }

    ir::Function rest() {
        Kernel k(f_, "_shares");
        for (int i = 0; i < static_cast<int>(f_.ops.size()); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != OpKind::Param) rows(k);
            const ir::Loop *l = loop_at(i);
            if (l && l != &top_.back()) {
                if (l == &top_.front()) totals(k);
                i = l->last();
                continue;
            }
            if (l) {
                share(k, *l);
                continue;
            }
            copy_op(k.b, f_, op, k.map);
        }
        return k.finish(f_);
    }

private:
    struct Kernel {
        Kernel(const ir::Function &f, const std::string &suffix) : out(empty_like(f)), b(out), map(f.values.size()) {
            out.name += suffix;
        }
        ir::Function out;
        ir::Builder b;
        std::vector<ValueId> map;
        ValueId base = ir::kNoValue, first = ir::kNoValue, s = ir::kNoValue;
        std::vector<ir::Param> params;

        ir::Function finish(const ir::Function &f) { return with_params(std::move(out), f, map, params); }
    };

    const ir::Function &f_;
    const std::vector<ir::Loop> &top_;
    int axis_, ways_, count_ = 0;

    const ir::Loop *loop_at(int i) const {
        for (const ir::Loop &l : top_)
            if (l.begin == i) return &l;
        return nullptr;
    }
    const ir::Loop *ending(int i) const {
        for (const ir::Loop &l : top_)
            if (l.last() == i) return &l;
        return nullptr;
    }
    bool in_loop(int i) const {
        return std::any_of(top_.begin(), top_.end(), [&](const ir::Loop &l) { return l.begin <= i && i <= l.last(); });
    }

    ValueId i32(Kernel &k, int64_t v) { return k.b.constant(static_cast<double>(v), ir::DType::I32); }

    ValueId ways_id(Kernel &k) {
        if (k.s == ir::kNoValue) k.s = k.b.program_id(axis_);
        return k.s;
    }

    // The loop's for_begin over share s of its iterations: k0 = s·⌈n/S⌉, k1 = min(n, k0 + ⌈n/S⌉),
    // from lo + k0·step to min(hi, lo + k1·step) (n <= 0 gives an empty share).
    void share(Kernel &k, const ir::Loop &l) {
        const ir::Op &begin = f_.ops[l.begin];
        const ValueId lo = k.map[begin.operands[0]], hi = k.map[begin.operands[1]], step = k.map[begin.operands[2]];
        auto bin = [&](OpKind o, ValueId a, ValueId c) { return k.b.binary(o, a, c); };
        const ValueId one = i32(k, 1);
        const ValueId n =
            bin(OpKind::Div, bin(OpKind::Sub, bin(OpKind::Add, bin(OpKind::Sub, hi, lo), step), one), step);
        const ValueId per = bin(OpKind::Div, bin(OpKind::Add, n, i32(k, ways_ - 1)), i32(k, ways_));
        const ValueId k0 = bin(OpKind::Mul, ways_id(k), per);
        const ValueId k1 = bin(OpKind::Minimum, n, bin(OpKind::Add, k0, per));
        const ValueId from = bin(OpKind::Add, lo, bin(OpKind::Mul, k0, step));
        const ValueId to = bin(OpKind::Minimum, hi, bin(OpKind::Add, lo, bin(OpKind::Mul, k1, step)));
        ir::Op op = begin;
        op.operands = {from, to, step};
        k.map[begin.result] = k.b.append(op, f_.type(begin.result));
        k.out.values[k.map[begin.result]].name = f_.values[begin.result].name;
    }

    // The stash's parameter and this program's first row (int64), made once at the top level.
    void rows(Kernel &k) {
        if (k.base != ir::kNoValue) return;
        ir::Op p(OpKind::Param, {});
        p.ival = static_cast<int64_t>(f_.params.size());
        p.name = kStash;
        k.base = k.b.append(p, ir::Type{ir::DType::F32, true, {}});
        k.out.values[k.base].name = kStash;
        k.params.push_back(ir::Param{kStash, ir::ParamKind::Pointer, k.base, ""});
        std::array<ValueId, 3> ids{}, counts{};
        const std::vector<int> axes = program_axes(f_);
        for (int a : axes) {
            ids[a] = k.b.program_id(a);
            counts[a] = k.b.num_programs(a);
        }
        k.first = k.b.binary(OpKind::Mul, k.b.cast(linear_program(k.b, ids, counts, axes), ir::DType::I64),
                             k.b.constant(static_cast<double>(ways_), ir::DType::I64));
    }

    // The address of word `slot` of row `s` of this program's rows of the stash.
    ValueId word(Kernel &k, ValueId s, int slot) {
        const ValueId at = k.b.binary(OpKind::Add, k.first, k.b.cast(s, ir::DType::I64));
        const ValueId in = k.b.binary(OpKind::Add, k.b.binary(OpKind::Mul, at, k.b.constant(count_, ir::DType::I64)),
                                      k.b.constant(slot, ir::DType::I64));
        return k.b.add_ptr(k.base, in);
    }

    // The sums of every word over this program's S rows, in order, standing in for the summing loops'
    // results: a scalar, or a tile with the total in its first lane.
    void totals(Kernel &k) {
        const ValueId zero = k.b.constant(0, ir::DType::F32);
        const ValueId s = k.b.for_begin(i32(k, 0), i32(k, ways_), i32(k, 1), "range");
        std::vector<ValueId> acc, next;
        for (int j = 0; j < count_; ++j) acc.push_back(k.b.loop_arg(zero, j));
        for (int j = 0; j < count_; ++j)
            // The stash is float64 on float64 launches: each word cast back to the float32 sum.
            next.push_back(
                k.b.binary(OpKind::Add, acc[j],
                           k.b.cast(k.b.load(word(k, s, j), ir::kNoValue, ir::kNoValue), ir::DType::F32, true)));
        k.b.for_end(next);
        std::vector<ValueId> sums;
        for (int j = 0; j < count_; ++j) sums.push_back(k.b.loop_result(j, ir::Type{ir::DType::F32, false, {}}));
        int j = 0;
        for (size_t l = 0; l + 1 < top_.size(); ++l)
            for (int r : top_[l].results) k.map[f_.ops[r].result] = stand_in(k, f_.ops[r].result, sums[j++]);
    }

    ValueId stand_in(Kernel &k, ValueId v, ValueId total) {
        const ir::Type &t = f_.type(v);
        const ValueId sum = k.b.cast(total, t.elem);
        if (t.scalar()) return sum;
        const ValueId first =
            k.b.binary(OpKind::Eq, k.b.arange(0, t.shape[0].value, t.shape[0].expr), k.b.broadcast(i32(k, 0), t.shape));
        return k.b.where(first, k.b.broadcast(sum, t.shape), k.b.broadcast(k.b.constant(0, t.elem), t.shape));
    }
};

}  // namespace

std::optional<SplitLoops> split_loops(const ir::Function &f, int ways, std::string *why) {
    const int axis = free_axis(f);
    if (axis < 0) {
        *why = "it reads every grid axis";
        return std::nullopt;
    }
    const std::vector<ir::Loop> top = Check(f, why).run();
    if (top.empty()) return std::nullopt;
    Affine affine(f);
    const ir::Op &last = f.ops[top.back().begin];
    const Form &lo = affine.of(last.operands[0]), &hi = affine.of(last.operands[1]),
               &step = affine.of(last.operands[2]);
    if (!lo.invariant() || !hi.invariant() || !step.invariant()) {
        *why = "the trip count of the " + op_at(f, top.back().begin) + " is not a polynomial of the arguments";
        return std::nullopt;
    }
    Split split(f, top, axis, ways);
    SplitLoops out;
    out.sums = split.sums();
    out.rest = split.rest();
    out.axis = axis;
    out.ways = ways;
    out.stash = Stash{kStash, {std::to_string(ways), std::to_string(split.count())}, ""};
    Poly programs = Poly::constant(1);
    for (int a : program_axes(f)) programs = programs * Poly::symbol("num_programs(" + std::to_string(a) + ")");
    out.when = {{Poly::constant(1), Poly::symbol("num_programs(" + std::to_string(axis) + ")")},
                {hi.offset - lo.offset, Poly::constant(2 * ways) * step.offset},
                {Poly::constant(2048), programs}};
    return out;
}

}  // namespace tad::passes
