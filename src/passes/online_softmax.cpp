// Recognition of the online softmax and the proof that its gradient has the closed form
// (online_softmax.h); the rewrite is in online_softmax_rewrite.cpp.
#include "passes/online_softmax_internal.h"

#include <algorithm>
#include <functional>

#include "passes/passes.h"

namespace tad::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

bool in_body(const ir::Function &f, const ir::Loop &l, ValueId v) {
    const int d = f.values[v].def_op;
    return d > l.begin && d < l.end;
}

// Where row axis `axis` of `root` is in v, when v is root through broadcasts and expand_dims only
// (-1 for a scalar root: its factor applies to every element).
bool row_axis_through(const ir::Function &f, ValueId v, ValueId root, int root_axis, int *axis) {
    if (v == root) {
        *axis = root_axis;
        return true;
    }
    const ir::Op &op = f.def(v);
    if (op.kind != OpKind::Broadcast && op.kind != OpKind::ExpandDims) return false;
    int a = 0;
    if (!row_axis_through(f, op.operands[0], root, root_axis, &a)) return false;
    *axis = row_axis_after(f, op, a);
    return true;
}

class Matcher {
public:
    Matcher(const ir::Function &f, const ir::Loop &l) : f_(f), l_(l) {}

    // "" and `out` filled when the loop is an online softmax; else why not.
    std::string match(OnlineSoftmax *out) {
        p_ = out;
        p_->loop = l_;
        if (!find_alpha()) return "";
        state_ = state_dependent();
        std::string why = find_probabilities();
        if (why.empty()) why = find_rescaled();
        if (why.empty()) why = check_uses();
        return why;
    }

    bool matched_alpha() const { return alpha_found_; }

private:
    const ir::Function &f_;
    const ir::Loop &l_;
    OnlineSoftmax *p_ = nullptr;
    bool alpha_found_ = false;
    std::set<ValueId> state_;  // body values that depend on the carried floats
    std::map<ValueId, int> probs_;  // p -> its row axis
    std::set<ValueId> alphas_;
    std::set<int> pattern_;  // body ops the recognized computation consists of

    ValueId arg(size_t k) const { return f_.ops[l_.args[k]].result; }
    ValueId yield(size_t k) const { return f_.ops[l_.end].operands[k]; }
    int def(ValueId v) const { return f_.values[v].def_op; }

    // alpha = b^(m - m') for a carried float m with yield m'.
    bool find_alpha() {
        for (int i = l_.begin + 1; i < l_.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != OpKind::Exp && op.kind != OpKind::Exp2) continue;
            const ir::Op &d = f_.def(op.operands[0]);
            if (d.kind != OpKind::Sub) continue;
            for (size_t k = 0; k < l_.args.size(); ++k) {
                if (d.operands[0] != arg(k) || d.operands[1] != yield(k) || !f_.type(arg(k)).is_float()) continue;
                if (alpha_found_ && (k != p_->m || op.kind != p_->exp)) continue;
                alpha_found_ = true;
                p_->m = k;
                p_->exp = op.kind;
                alphas_.insert(op.result);
                pattern_.insert({i, def(op.operands[0])});
                p_->dropped.insert({i, def(op.operands[0])});
            }
        }
        return alpha_found_;
    }

    std::set<ValueId> state_dependent() const {
        std::set<ValueId> s;
        for (size_t k = 0; k < l_.args.size(); ++k)
            if (f_.type(arg(k)).is_float()) s.insert(arg(k));
        for (int i = l_.begin + 1; i < l_.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.result != ir::kNoValue &&
                std::any_of(op.operands.begin(), op.operands.end(), [&](ValueId v) { return s.count(v) > 0; }))
                s.insert(op.result);
        }
        return s;
    }

    // p = b^(s - m'[broadcast]) with s independent of the state.
    std::string find_probabilities() {
        const ValueId mn = yield(p_->m);
        if (f_.type(mn).rank() > 1) return "its running maximum has more than one dim";
        const int root_axis = f_.type(mn).rank() == 1 ? 0 : -1;
        for (int i = l_.begin + 1; i < l_.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != p_->exp || alphas_.count(op.result)) continue;
            const ir::Op &d = f_.def(op.operands[0]);
            int axis = 0;
            if (d.kind != OpKind::Sub || state_.count(d.operands[0]) ||
                !row_axis_through(f_, d.operands[1], mn, root_axis, &axis))
                continue;
            probs_[op.result] = axis;
            pattern_.insert({i, def(op.operands[0])});
            mark_chain(d.operands[1], mn);
        }
        if (probs_.empty()) return "no p = " + exp_name() + "(s - m') in its body";
        // The running maximum's own computation: whatever the body derives it from.
        std::function<void(ValueId)> cone = [&](ValueId v) {
            if (!in_body(f_, l_, v) || !state_.count(v) || !pattern_.insert(def(v)).second) return;
            if (f_.ops[def(v)].kind == OpKind::LoopArg) return;
            p_->dropped.insert(def(v));
            for (ValueId o : f_.ops[def(v)].operands) cone(o);
        };
        cone(mn);
        return "";
    }

    void mark_chain(ValueId v, ValueId root, bool drop = false) {
        while (v != root) {
            pattern_.insert(def(v));
            if (drop) p_->dropped.insert(def(v));
            v = f_.def(v).operands[0];
        }
    }

    std::string exp_name() const { return p_->exp == OpKind::Exp ? "exp" : "exp2"; }

    // Every other carried float: c' = c·alpha[broadcast] + T(p), or a plain sum (where they start:
    // match_start).
    std::string find_rescaled() {
        for (size_t k = 0; k < l_.args.size(); ++k) {
            if (k == p_->m || !f_.type(arg(k)).is_float()) continue;
            const std::string why = match_rescaled(k);
            if (!why.empty()) return "carried value " + name(arg(k)) + " " + why;
        }
        return "";
    }

    std::string match_rescaled(size_t k) {
        if (plain_sum(k)) return "";
        const ir::Op &add = f_.def(yield(k));
        if (add.kind != OpKind::Add || !in_body(f_, l_, yield(k))) return "is not updated as c·alpha + T(p)";
        for (int side = 0; side < 2; ++side) {
            const ValueId x = add.operands[side], t = add.operands[1 - side];
            int alpha_axis = 0, t_axis = 0;
            if (!rescaled_by_alpha(x, arg(k), &alpha_axis)) continue;
            std::string why = row_linear(t, &t_axis);
            if (!why.empty()) return "has " + why;
            if (t_axis != alpha_axis) return "adds T(p) with p's rows in another dim than alpha scales";
            pattern_.insert({def(x), def(yield(k))});
            p_->dropped.insert(def(x));
            p_->rescaled.push_back({k, x, alpha_axis});
            return uses_only(arg(k), def(x)) ? "" : "is read elsewhere in the loop";
        }
        return "is not updated as c·alpha + T(p)";
    }

    // c' = c + U with U independent of the state and c read by nothing else: a sum whose
    // iterations do not depend on each other, whatever the maxima.
    bool plain_sum(size_t k) {
        const ir::Op &add = f_.def(yield(k));
        if (add.kind != OpKind::Add || !in_body(f_, l_, yield(k))) return false;
        for (int side = 0; side < 2; ++side) {
            if (add.operands[side] != arg(k) || state_.count(add.operands[1 - side])) continue;
            if (!uses_only(arg(k), def(yield(k)))) return false;
            pattern_.insert(def(yield(k)));
            p_->sums.push_back(k);
            return true;
        }
        return false;
    }

    bool rescaled_by_alpha(ValueId x, ValueId c, int *axis) {
        const ir::Op &mul = f_.def(x);
        if (mul.kind != OpKind::Mul || !in_body(f_, l_, x)) return false;
        for (int side = 0; side < 2; ++side) {
            if (mul.operands[side] != c) continue;
            for (ValueId a : alphas_) {
                const int root_axis = f_.type(a).rank() == 1 ? 0 : -1;
                if (!row_axis_through(f_, mul.operands[1 - side], a, root_axis, axis)) continue;
                mark_chain(mul.operands[1 - side], a, true);
                return true;
            }
        }
        return false;
    }

    bool uses_only(ValueId v, int user) const {
        for (int i = l_.begin + 1; i <= l_.end; ++i)
            if (i != user && std::count(f_.ops[i].operands.begin(), f_.ops[i].operands.end(), v)) return false;
        return true;
    }

    // T(p): linear in the p values, row by row; `axis`: where p's rows are in it.
    std::string row_linear(ValueId v, int *axis) {
        if (probs_.count(v)) {
            *axis = probs_.at(v);
            return "";
        }
        const ir::Op &op = f_.def(v);
        if (!in_body(f_, l_, v) || !state_.count(v)) return "a term of T(p) that does not depend on p";
        auto independent = [&](ValueId w) { return !state_.count(w); };
        std::string why;
        switch (op.kind) {
        case OpKind::Cast: why = row_linear(op.operands[0], axis); break;
        case OpKind::Broadcast:
        case OpKind::ExpandDims:  // p[:, None]: its rows move with the new dims
            why = row_linear(op.operands[0], axis);
            if (why.empty()) *axis = row_axis_after(f_, op, *axis);
            break;
        case OpKind::Dot:
            if (!independent(op.operands[1])) return "a dot whose right operand depends on p (" + at(def(v)) + ")";
            why = row_linear(op.operands[0], axis);
            if (why.empty() && *axis != 0) return "a dot that contracts p's rows (" + at(def(v)) + ")";
            break;
        case OpKind::ReduceSum:
            why = row_linear(op.operands[0], axis);
            if (!why.empty()) break;
            if (*axis < 0) break;  // a scalar maximum scales every element alike: any sum is linear
            if (op.axis < 0 || op.axis == *axis) return "a sum over p's rows (" + at(def(v)) + ")";
            if (op.axis < *axis && !op.keep_dims) --*axis;
            break;
        case OpKind::Mul:
            if (independent(op.operands[0]) == independent(op.operands[1]))
                return "a product of two state-dependent values (" + at(def(v)) + ")";
            why = row_linear(op.operands[independent(op.operands[0]) ? 1 : 0], axis);
            break;
        case OpKind::Where:
            if (!independent(op.operands[0]) || !zero_constant(f_, op.operands[2]))
                return "a select that is not p or zero (" + at(def(v)) + ")";
            why = row_linear(op.operands[1], axis);
            break;
        case OpKind::Add: {
            int other = 0;
            why = row_linear(op.operands[0], axis);
            if (why.empty()) why = row_linear(op.operands[1], &other);
            if (why.empty() && other != *axis) return "a sum of terms with p's rows in different dims";
            break;
        }
        default: return "a term of T(p) computed by " + at(def(v)) + ", not linear in p";
        }
        if (why.empty()) pattern_.insert(def(v));
        return why;
    }

    // The state may reach nothing but the recognized computation and the yields.
    std::string check_uses() const {
        for (int i = l_.begin + 1; i < l_.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::ForBegin) return "it holds a loop";
            if (op.kind == OpKind::LoopArg || pattern_.count(i)) continue;
            for (ValueId o : op.operands)
                if (state_.count(o)) return at(i) + " reads the carried state outside the recognized computation";
        }
        const ir::Op &end = f_.ops[l_.end];
        for (size_t k = 0; k < end.operands.size(); ++k)
            if (!f_.type(arg(k)).is_float() && state_.count(end.operands[k]))
                return "carried value " + name(arg(k)) + " depends on the state";
        return "";
    }

    std::string at(int i) const { return op_at(f_, i); }
    std::string name(ValueId v) const {
        return f_.values[v].name.empty() ? "%" + std::to_string(v) : "'" + f_.values[v].name + "'";
    }
};

}  // namespace

int row_axis_after(const ir::Function &f, const ir::Op &op, int axis) {
    if (axis < 0) return axis;
    if (op.kind == OpKind::Broadcast)  // numpy aligns right
        return axis + static_cast<int>(f.type(op.result).rank() - f.type(op.operands[0]).rank());
    return op.axis <= axis ? axis + 1 : axis;
}

bool match_online_softmax(const ir::Function &f, const ir::Loop &l, OnlineSoftmax *out, std::string *why) {
    Matcher m(f, l);
    *why = m.match(out);
    return m.matched_alpha();
}

}  // namespace tad::passes::detail
