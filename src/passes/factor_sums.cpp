#include "passes/factor_sums.h"

#include <map>

#include "passes/carried_rewrite.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// How a value of the loop depends on the factor s.
enum class Dep { Free, Zero, Linear, Other };

bool same_shape(const ir::Type &a, const ir::Type &b) {
    if (a.shape.size() != b.shape.size()) return false;
    for (size_t k = 0; k < a.shape.size(); ++k)
        if (a.shape[k].value != b.shape[k].value) return false;
    return true;
}

// One running sum to rewrite: `acc + e` at op `combine`, e linear in s.
struct Factor {
    int combine = -1;
    ValueId e = ir::kNoValue, s = ir::kNoValue;
    int arg = -1, result = -1;  // loop_arg / loop_result op indices
    int begin = -1, end = -1;  // the loop's for_begin / for_end op indices
};

// The dependence on s of the values of one loop body.
class Linearity {
public:
    Linearity(const ir::Function &f, const ir::Loop &l, ValueId s) : f_(f), l_(l), s_(s) {}

    Dep of(ValueId v) {
        auto it = memo_.find(v);
        if (it != memo_.end()) return it->second;
        return memo_[v] = compute(v);
    }

private:
    const ir::Function &f_;
    const ir::Loop &l_;
    ValueId s_;
    std::map<ValueId, Dep> memo_;

    static bool free(Dep d) { return d == Dep::Free || d == Dep::Zero; }
    static bool linear(Dep d) { return d == Dep::Linear || d == Dep::Zero; }

    Dep compute(ValueId v) {
        if (v == s_) return Dep::Linear;
        const int at = f_.values[v].def_op;
        if (zero_constant(f_, v)) return Dep::Zero;
        if (at < l_.begin || at > l_.end) return Dep::Free;
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        std::vector<Dep> d;
        for (ValueId o : op.operands) d.push_back(of(o));
        bool all_free = true;
        for (Dep x : d) all_free = all_free && free(x);
        if (all_free) return Dep::Free;
        switch (op.kind) {
        case OpKind::Add:
        case OpKind::Sub: return linear(d[0]) && linear(d[1]) ? Dep::Linear : Dep::Other;
        case OpKind::Neg:
        case OpKind::Broadcast: return d[0];
        case OpKind::Mul:
            return (d[0] == Dep::Linear && free(d[1])) || (free(d[0]) && d[1] == Dep::Linear) ? Dep::Linear
                                                                                              : Dep::Other;
        case OpKind::Div: return d[0] == Dep::Linear && free(d[1]) ? Dep::Linear : Dep::Other;
        case OpKind::Where: return free(d[0]) && linear(d[1]) && linear(d[2]) ? Dep::Linear : Dep::Other;
        case OpKind::Cast:  // to a fixed dtype, the same (`x.to(like.dtype)` may round at run time)
            return op.operands.size() == 1 && f_.type(v).elem == f_.type(op.operands[0]).elem ? d[0] : Dep::Other;
        default: return Dep::Other;
        }
    }
};

class Factorer : public CarriedRewrite<FactoredSums> {
public:
    explicit Factorer(const ir::Function &f) : CarriedRewrite(f) {}

private:
    int found() override { return out_.factored = static_cast<int>(factors_.size()); }
    std::map<int, Factor> factors_;  // by combine op index
    std::map<int, const Factor *> by_result_;  // loop_result op index -> its factor
    std::vector<ValueId> map_;
    std::vector<std::pair<int, ValueId>> pending_;  // this loop's factored results: (op index, sum)

    // Carried value k of loop l, when it is a zero-started `acc + e` with e linear in a factor.
    void find(const ir::Loop &l, size_t k) override {
        const ir::Op &arg = f_.ops[static_cast<size_t>(l.args[k])];
        const ir::Type &t = f_.type(arg.result);
        if (t.scalar() || t.is_ptr || (t.elem != ir::DType::F32 && t.elem != ir::DType::F64) ||
            !zero_constant(f_, arg.operands[0]))
            return;
        const ValueId y = f_.ops[static_cast<size_t>(l.end)].operands[k];
        const int combine = f_.values[y].def_op;
        const ir::Op &c = f_.ops[static_cast<size_t>(combine)];
        if (c.kind != OpKind::Add || !only_user(arg.result, combine) || !only_user(y, l.end)) return;
        const ValueId e = c.operands[0] == arg.result ? c.operands[1] : c.operands[0];
        if (e == arg.result || f_.type(e).shape.size() != t.shape.size()) return;
        for (ValueId s : candidates(l, e)) {
            Linearity lin(f_, l, s);
            if (lin.of(e) != Dep::Linear) continue;
            factors_[combine] = Factor{combine, e, s, l.args[k], l.results[k], l.begin, l.end};
            by_result_[l.results[k]] = &factors_[combine];
            return;
        }
    }

    // The operands of e's multiplications defined before loop l, or broadcast inside it from a value
    // defined before it, not constants, first met first.
    std::vector<ValueId> candidates(const ir::Loop &l, ValueId e) const {
        std::vector<ValueId> out, stack = {e};
        std::vector<bool> seen(f_.values.size(), false);
        while (!stack.empty()) {
            const ValueId v = stack.back();
            stack.pop_back();
            const int at = f_.values[v].def_op;
            if (seen[v] || at < l.begin || at > l.end) continue;
            seen[v] = true;
            const ir::Op &op = f_.ops[static_cast<size_t>(at)];
            for (ValueId o : op.operands) {
                const int d = f_.values[o].def_op;
                const ir::Op &od = f_.ops[static_cast<size_t>(d)];
                const bool constant = od.kind == OpKind::Const ||
                                      (od.kind == OpKind::Broadcast && f_.def(od.operands[0]).kind == OpKind::Const);
                if (op.kind == OpKind::Mul && d < l.begin && !constant && !f_.type(o).is_ptr) out.push_back(o);
                // A scalar factor broadcast inside the loop (`dvar * xc`, batch norm's): its scalar.
                if (op.kind == OpKind::Mul && d > l.begin && od.kind == OpKind::Broadcast && !constant) {
                    const ValueId src = od.operands[0];
                    if (f_.values[src].def_op < l.begin && !f_.type(src).is_ptr) out.push_back(src);
                }
                stack.push_back(o);
            }
        }
        return out;
    }

    void rebuild() override {
        out_.fn = empty_like(f_);
        map_.assign(f_.values.size(), ir::kNoValue);
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b_.loc = op.loc;
            const int at = static_cast<int>(i);
            if (op.kind == OpKind::Param) {
                map_[op.result] = b_.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
                continue;
            }
            auto it = factors_.find(at);
            if (it != factors_.end()) {
                std::map<ValueId, ValueId> memo;
                const ValueId e1 = at_one(it->second, it->second.e, memo);
                const ValueId acc = map_.at(f_.ops[static_cast<size_t>(it->second.arg)].result);
                map_[op.result] =
                    op.operands[0] == it->second.e ? b_.binary(OpKind::Add, e1, acc) : b_.binary(OpKind::Add, acc, e1);
                continue;
            }
            copy_op(b_, f_, op, map_);
            if (by_result_.count(at)) pending_.emplace_back(at, map_[op.result]);
            const bool last_result =
                op.kind == OpKind::LoopResult && (i + 1 >= f_.ops.size() || f_.ops[i + 1].kind != OpKind::LoopResult);
            if (last_result) scale_results();
        }
    }

    // After a loop's results: each factored sum times its factor.
    void scale_results() {
        for (const auto &[at, sum] : pending_) {
            const Factor &fc = *by_result_.at(at);
            const ir::Type t = out_.fn.type(sum);
            ValueId s = map_.at(fc.s);
            if (!same_shape(out_.fn.type(s), t)) s = b_.broadcast(s, t.shape);  // f32[1, N] times f32[M, N]
            map_[f_.ops[static_cast<size_t>(at)].result] = b_.binary(OpKind::Mul, s, sum);
        }
        pending_.clear();
    }

    // The ones tile of v's type.
    ValueId one(ValueId v) {
        const ir::Type t = f_.type(v);
        const ValueId c = b_.constant(1, t.elem);
        return t.scalar() ? c : b_.broadcast(c, t.shape);
    }

    // Value v of the loop with the factor set to 1 (kNoValue: v is the factor itself).
    ValueId at_one(const Factor &fc, ValueId v, std::map<ValueId, ValueId> &memo) {
        if (v == fc.s) return ir::kNoValue;
        auto it = memo.find(v);
        if (it != memo.end()) return it->second;
        const int at = f_.values[v].def_op;
        if (at < fc.begin || at > fc.end) return map_.at(v);  // another value than s: a constant here
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        bool depends = false;
        std::vector<ValueId> x;
        for (ValueId o : op.operands) {
            const ValueId r = at_one(fc, o, memo);
            depends = depends || r != map_.at(o);
            x.push_back(r);
        }
        if (!depends) return memo[v] = map_.at(v);
        return memo[v] = rebuilt(op, v, x);
    }

    ValueId rebuilt(const ir::Op &op, ValueId v, std::vector<ValueId> x) {
        if (op.kind == OpKind::Mul && (x[0] == ir::kNoValue || x[1] == ir::kNoValue)) {
            const ValueId r = x[0] == ir::kNoValue ? x[1] : x[0];
            return r == ir::kNoValue ? one(v) : r;
        }
        if (op.kind == OpKind::Broadcast && x[0] == ir::kNoValue) return ir::kNoValue;
        for (size_t k = 0; k < x.size(); ++k)
            if (x[k] == ir::kNoValue) x[k] = one(op.operands[k]);
        switch (op.kind) {
        case OpKind::Neg: return b_.unary(op.kind, x[0]);
        case OpKind::Broadcast: return b_.broadcast(x[0], f_.type(v).shape);
        case OpKind::Where: return b_.where(x[0], x[1], x[2]);
        case OpKind::Cast: return b_.cast(x[0], f_.type(v).elem);
        default: return b_.binary(op.kind, x[0], x[1]);
        }
    }
};

}  // namespace

FactoredSums factor_sums(const ir::Function &f) { return Factorer(f).run(); }

}  // namespace tad::passes
