// The closed form of online_softmax.h: the proof that what follows the loop ignores the choice of M,
// and the rewrite that adds the loop's closed-form copy.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "passes/online_softmax.h"
#include "passes/online_softmax_internal.h"
#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace detail {

namespace {

// A tracked reduction's row axis afterwards; false when it sums or takes the maximum across rows
// that change differently (then the result is no row-wise shift or scale of anything).
bool reduced_row_axis(const ir::Function &f, const ir::Op &op, int axis, int *out) {
    if (axis < 0) return *out = -1, true;
    const int rank = static_cast<int>(f.type(op.operands[0]).rank());
    if (op.axis < 0 || op.axis == axis || rank <= 1) return false;
    *out = op.axis < axis && !op.keep_dims ? axis - 1 : axis;
    return true;
}

// x + y, zero where the two cancel to within rounding (log2(e) times ln(2) is 1 only so).
double combine(double x, double y) {
    const double r = x + y;
    return std::abs(r) <= 1e-12 * std::max(std::abs(x), std::abs(y)) ? 0 : r;
}

// A product or quotient: scaled values multiply their factors; a shifted value times a literal
// (exp2(z * log2(e))) is shifted by as much times it.
std::optional<Shift> product(const ir::Function &f, const ir::Op &op, const Shift &a, const Shift &b) {
    const bool mul = op.kind == OpKind::Mul, additive = a.shift != 0 || b.shift != 0;
    const std::optional<double> k0 = literal_value(f, op.operands[0]), k1 = literal_value(f, op.operands[1]);
    if (a.w == 0 && b.w == 0 && !b.tracked() && k1 && *k1 != 0)
        return Shift{0, mul ? a.shift * *k1 : a.shift / *k1, a.axis};
    if (a.w == 0 && b.w == 0 && mul && !a.tracked() && k0) return Shift{0, b.shift * *k0, b.axis};
    if (additive || (a.tracked() && b.tracked() && a.axis != b.axis)) return std::nullopt;
    return Shift{combine(a.w, mul ? b.w : -b.w), 0, a.tracked() ? a.axis : b.axis};
}

// exp, exp2, log, log2 of a tracked value: e^(z + s·d) = e^z · e^(s·d), 2^(z + s·d) = 2^z ·
// e^(s·ln2·d), log(c · e^(-w·d)) = log(c) - w·d, log2 likewise over ln 2.
std::optional<Shift> transcendental(const ir::Op &op, const Shift &a) {
    const double ln2 = std::log(2.0);
    const bool of_shift = a.shift != 0 && a.w == 0, of_scale = a.w != 0 && a.shift == 0;
    if (op.kind == OpKind::Exp && of_shift) return Shift{-a.shift, 0, a.axis};
    if (op.kind == OpKind::Exp2 && of_shift) return Shift{-a.shift * ln2, 0, a.axis};
    if (op.kind == OpKind::Log && of_scale) return Shift{0, -a.w, a.axis};
    if (op.kind == OpKind::Log2 && of_scale) return Shift{0, -a.w / ln2, a.axis};
    return std::nullopt;
}

}  // namespace

int varying_axis(const ir::Type &t) {
    int axis = -1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d].value == 1) continue;
        if (axis >= 0) return -2;
        axis = static_cast<int>(d);
    }
    return axis;
}

Shift propagate(const ir::Function &f, const ir::Op &op, const std::map<ValueId, Shift> &t, std::string *why) {
    auto get = [&](size_t j) {
        auto it = j < op.operands.size() ? t.find(op.operands[j]) : t.end();
        return it == t.end() ? Shift{} : it->second;
    };
    const Shift a = get(0), b = get(1);
    std::optional<Shift> r;
    int axis = -1;
    switch (op.kind) {
    case OpKind::Broadcast:
    case OpKind::ExpandDims: return {a.w, a.shift, row_axis_after(f, op, a.axis)};
    case OpKind::Cast:  // between floats (a second operand gives only the dtype); to an integer it truncates
        if (f.type(op.result).is_float() && f.type(op.operands[0]).is_float()) return a;
        break;
    case OpKind::Neg: return {a.w, -a.shift, a.axis};
    case OpKind::Mul:
    case OpKind::Div: r = product(f, op, a, b); break;
    case OpKind::Add:
    case OpKind::Sub:
        if (a.w != 0 || b.w != 0 || (a.tracked() && b.tracked() && a.axis != b.axis)) break;
        return {0, combine(a.shift, op.kind == OpKind::Add ? b.shift : -b.shift), a.tracked() ? a.axis : b.axis};
    case OpKind::ReduceSum:  // of values scaled row by row: the sum scales alike
        if (a.shift == 0 && reduced_row_axis(f, op, a.axis, &axis)) return {a.w, 0, axis};
        break;
    case OpKind::ReduceMax:  // of values shifted, or scaled by a positive factor, row by row
        if (reduced_row_axis(f, op, a.axis, &axis)) return {a.w, a.shift, axis};
        break;
    default: r = transcendental(op, a); break;
    }
    if (r) return *r;
    *why = "it reads a value that changes with the running maximum's final value";
    return {};
}

std::string shift_invariant_uses(const ir::Function &f, const OnlineSoftmax &s,
                                 const std::vector<std::string> &outputs) {
    const ir::Loop &l = s.loop;
    auto result = [&](size_t k) { return f.ops[l.results[k]].result; };
    std::map<ValueId, Shift> t;
    const int axis = varying_axis(f.type(result(s.m)));
    if (axis < -1) return "the running maximum varies along more than one dim";
    t[result(s.m)] = {0, 1, axis};
    // Rescaled by b^(m - m'): multiplied by b^(-d) = e^(-ln(b)·d) when M becomes M + d.
    const double ln_b = s.exp == OpKind::Exp ? 1.0 : std::log(2.0);
    for (const OnlineSoftmax::Rescaled &r : s.rescaled) t[result(r.k)] = {ln_b, 0, r.axis};
    for (int i = l.last() + 1; i < static_cast<int>(f.ops.size()); ++i) {
        const ir::Op &op = f.ops[i];
        bool reads = false;
        for (ValueId o : op.operands) reads = reads || t.count(o);
        if (!reads) continue;
        if (op.kind == OpKind::Store &&
            std::find(outputs.begin(), outputs.end(), pointer_base(f, op.operands[0])) == outputs.end())
            continue;  // a saved statistic: no gradient comes back from it
        std::string why;
        Shift r = propagate(f, op, t, &why);
        if (!why.empty()) return op_at(f, i) + ": " + why;
        if (r.tracked()) t[op.result] = r;
    }
    return "";
}

namespace {

class Rewrite {
public:
    Rewrite(const ir::Function &f, const OnlineSoftmax &s, const Saved *saved)
        : f_(f), s_(s), saved_(saved), out_(empty_like(f)), b_(out_), map_(f.values.size(), ir::kNoValue) {}

    ir::Function run() {
        const ir::Loop &l = s_.loop;
        int i = 0;
        for (; i < static_cast<int>(f_.ops.size()) && f_.ops[i].kind == OpKind::Param; ++i) copy(i);
        if (saved_) final_params();
        for (; i <= l.last(); ++i) copy(i);
        b_.loc = f_.ops[l.begin].loc;
        const ValueId m_T = f_.ops[l.results[s_.m]].result;
        const ValueId m = saved_ ? load_saved(saved_->lse, f_.type(m_T), INFINITY) : map_[m_T];
        const ValueId M = b_.append(ir::Op(OpKind::StopGradient, {m}), f_.type(m_T));
        out_.values[M].name = f_.values[m_T].name;
        closed_form_loops(M);
        map_[m_T] = M;
        for (i = l.last() + 1; i < static_cast<int>(f_.ops.size()); ++i) copy(i);
        return with_params(std::move(out_), f_, map_, finals_);
    }

private:
    const ir::Function &f_;
    const OnlineSoftmax &s_;
    const Saved *saved_;
    ir::Function out_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::vector<ir::Param> finals_;  // a pointer to each saved value's buffer as the launch left it
    std::map<ValueId, ValueId> clones_;  // for the saved loads: f_'s address values -> out_'s

    // After the kernel's own parameters, one per buffer a saved value is loaded from.
    void final_params() {
        std::vector<int> stores = {saved_->lse.store};
        for (const auto &[k, v] : saved_->ratios) stores.push_back(v.store);
        for (int st : stores) {
            const std::string base = pointer_base(f_, f_.ops[st].operands[0]);
            if (std::any_of(finals_.begin(), finals_.end(), [&](const ir::Param &p) { return p.final_of == base; }))
                continue;
            finals_.push_back(final_param(b_, f_, base, f_.params.size() + finals_.size()));
            clones_[f_.params[static_cast<size_t>(f_.param_index(base))].value] = finals_.back().value;
        }
    }

    // What the store of `v` wrote, as the carried value's type `as`; `other` in the lanes its mask
    // leaves out.
    ValueId load_saved(const SavedValue &v, const ir::Type &as, double other) {
        const ir::Op &st = f_.ops[v.store];
        const ValueId ptr = clone(st.operands[0]);
        const ValueId mask = st.has_mask ? clone(st.operands[2]) : ir::kNoValue;
        ValueId fill = ir::kNoValue;
        if (mask != ir::kNoValue) {
            fill = b_.constant(other, out_.type(ptr).elem);
            if (out_.type(ptr).rank() > 0) fill = b_.broadcast(fill, out_.type(ptr).shape);
        }
        // Kept although the traced dtypes agree: the buffer may be float16 on another launch.
        ValueId x = b_.cast(b_.load(ptr, mask, fill), as.elem, true);
        if (v.scale == 1) return x;
        ValueId k = b_.constant(v.scale, as.elem);
        if (as.rank() > 0) k = b_.broadcast(k, as.shape);
        return b_.binary(OpKind::Div, x, k);
    }

    // The address computation of a saved store again, after the loop, through the final buffer.
    ValueId clone(ValueId v) {
        auto it = clones_.find(v);
        if (it != clones_.end()) return it->second;
        const ir::Op &op = f_.def(v);
        ir::Op c = op;
        bool changed = f_.values[v].def_op > s_.loop.last();
        for (ValueId &o : c.operands) {
            const ValueId n = clone(o);
            changed = changed || n != map_[o];
            o = n;
        }
        if (!changed) return clones_[v] = map_[v];
        return clones_[v] = b_.append(c, f_.type(v));
    }

    void copy(int i) { copy_op(b_, f_, f_.ops[i], map_); }

    // The chain's loops again without m, first first: p = b^(s - M), c' = c + T(p), each loop's c
    // starting from its copy before. Then the code after the last loop reads grad_via(c_T, the
    // copy's c_T), and a plain sum's result from the copy (the same value).
    void closed_form_loops(ValueId M) {
        std::map<ValueId, ValueId> ends;  // a loop's result -> its copy's
        for (const OnlineSoftmax &link : s_.before) closed_form_loop(link, M, &ends);
        closed_form_loop(s_, M, &ends);
        const ir::Loop &l = s_.loop;
        for (size_t k : s_.sums) map_[f_.ops[l.results[k]].result] = ends.at(f_.ops[l.results[k]].result);
        for (const OnlineSoftmax::Rescaled &r : s_.rescaled) {
            const ValueId res = f_.ops[l.results[r.k]].result;
            const ValueId g =
                b_.append(ir::Op(OpKind::GradVia, {value_of(r.k, map_[res]), ends.at(res)}), f_.type(res));
            out_.values[g].name = f_.values[res].name;
            map_[res] = g;
        }
    }

    // Where the copy of `link` starts carried value k: the copy before's result where the loop
    // continues one, zero for a value the first alpha zeroes, else where the loop starts it.
    ValueId copy_start(const OnlineSoftmax &link, size_t k, const std::map<ValueId, ValueId> &ends) {
        const ir::Op &arg = f_.ops[link.loop.args[k]];
        auto it = ends.find(arg.operands[0]);
        if (it != ends.end()) return it->second;
        if (!link.killed.count(k)) return map_[arg.operands[0]];
        const ir::Type &t = f_.type(arg.result);
        const ValueId zero = b_.constant(0.0, t.elem);
        return t.rank() > 0 ? b_.broadcast(zero, t.shape) : zero;
    }

    // One loop of the chain again; `ends` gets its carried results' copies. map_ keeps the copy's
    // values for the loop's own (its variable, its body's): nothing after the chain's last loop
    // reads those, and each later copy sets its own.
    void closed_form_loop(const OnlineSoftmax &link, ValueId M, std::map<ValueId, ValueId> *ends) {
        const ir::Loop &l = link.loop;
        const ir::Op &begin = f_.ops[l.begin];
        b_.loc = begin.loc;
        std::vector<ValueId> starts(l.args.size(), ir::kNoValue);
        for (size_t k = 0; k < l.args.size(); ++k)
            if (k != link.m) starts[k] = copy_start(link, k, *ends);
        const ValueId iv =
            b_.for_begin(map_[begin.operands[0]], map_[begin.operands[1]], map_[begin.operands[2]], begin.name);
        out_.values[iv].name = f_.values[begin.result].name;
        map_[begin.result] = iv;
        std::vector<ValueId> loop_results(l.args.size(), ir::kNoValue);
        int index = 0;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ir::Op &arg = f_.ops[l.args[k]];
            loop_results[k] = map_[f_.ops[l.results[k]].result];
            if (k == link.m) {
                map_[arg.result] = M;
                continue;
            }
            b_.loc = arg.loc;
            map_[arg.result] = b_.loop_arg(starts[k], index++);
            out_.values[map_[arg.result]].name = f_.values[arg.result].name;
        }
        map_[f_.ops[l.end].operands[link.m]] = M;
        for (const OnlineSoftmax::Rescaled &r : link.rescaled) map_[r.product] = map_[f_.ops[l.args[r.k]].result];
        for (int i = l.args.empty() ? l.begin + 1 : l.args.back() + 1; i < l.end; ++i)
            if (!link.dropped.count(i)) copy(i);
        std::vector<ValueId> yields;
        for (size_t k = 0; k < l.args.size(); ++k)
            if (k != link.m) yields.push_back(map_[f_.ops[l.end].operands[k]]);
        b_.loc = f_.ops[l.end].loc;
        b_.for_end(yields);
        index = 0;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ValueId r = f_.ops[l.results[k]].result;
            map_[r] = loop_results[k];
            if (k == link.m) continue;
            (*ends)[r] = b_.loop_result(index++, f_.type(r));
            out_.values[(*ends)[r]].name = f_.values[r].name;
        }
    }

    // The value the code after the loop reads for carried value k: the loop's result, or with M the
    // saved logsumexp, c_k / c_l: 1 for c_l, else its saved ratio.
    ValueId value_of(size_t k, ValueId loop_result) {
        if (!saved_) return loop_result;
        const ir::Type &t = f_.type(f_.ops[s_.loop.results[k]].result);
        if (k != saved_->l) return load_saved(saved_->ratios.at(k), t, 0.0);
        const ValueId one = b_.constant(1.0, t.elem);
        return t.rank() > 0 ? b_.broadcast(one, t.shape) : one;
    }
};

}  // namespace

}  // namespace detail

namespace {

std::string saved_text(const ir::Function &f, const detail::OnlineSoftmax &s, const detail::Saved &saved) {
    auto base = [&](const detail::SavedValue &v) { return pointer_base(f, f.ops[v.store].operands[0]); };
    auto name = [&](size_t k) {
        const std::string n = f.values[f.ops[s.loop.results[k]].result].name;
        return n.empty() ? "%" + std::to_string(f.ops[s.loop.results[k]].result) : "'" + n + "'";
    };
    std::string t = "M the logsumexp it saves to " + base(saved.lse);
    for (const auto &[k, v] : saved.ratios) t += ", " + name(k) + " / " + name(saved.l) + " from " + base(v);
    return t + "; the loop is not run again";
}

// ", continuing the loop at A" for a chain (", the loop at B" for each further link).
std::string chain_text(const ir::Function &f, const detail::OnlineSoftmax &s) {
    std::string t;
    for (const detail::OnlineSoftmax &link : s.before)
        t += (t.empty() ? ", continuing the " : ", the ") + op_at(f, link.loop.begin);
    return t;
}

}  // namespace

ClosedForm closed_form_online_softmax(const ir::Function &f, const std::vector<std::string> &outputs,
                                      const std::vector<std::string> &kept, std::string *report) {
    ClosedForm out{f, {}};
    std::vector<ir::Loop> loops = ir::loops(f);
    std::set<size_t> links;  // indices in `loops` of loops rewritten with the chain they start
    // Last loop first: a rewrite adds parameters and changes ops after the loop, not the loops before
    // (which keep their places in `loops`).
    for (size_t n = loops.size(); n-- > 0;) {
        const ir::Loop &l = loops[n];
        if (links.count(n)) continue;
        detail::OnlineSoftmax s;
        std::string why;
        if (!detail::match_online_softmax(out.fn, l, &s, &why)) continue;
        if (why.empty() && l.parent >= 0) why = "it is nested in another loop";
        if (why.empty()) why = detail::match_start(out.fn, &s);
        if (why.empty()) why = detail::shift_invariant_uses(out.fn, s, outputs);
        const std::string at = op_at(out.fn, l.begin) + ": online softmax";
        if (!why.empty()) {
            *report += at + " not differentiated in closed form: " + why + "\n";
            continue;
        }
        detail::Saved saved;
        const std::string unsaved = kept.empty() ? "" : detail::find_saved(out.fn, s, outputs, kept, &saved);
        const bool load = !kept.empty() && unsaved.empty();
        const std::string m = out.fn.values[out.fn.ops[l.args[s.m]].result].name;
        const std::string exp = s.exp == OpKind::Exp ? "exp" : "exp2";
        *report += at + " (running maximum " + (m.empty() ? "" : "'" + m + "', ") + exp + ")" + chain_text(out.fn, s) +
                   ": differentiated in closed form, p = " + exp + "(s - M) for " +
                   (load ? saved_text(out.fn, s, saved)
                         : "its final maximum M" + (unsaved.empty() ? "" : " (no saved values: " + unsaved + ")")) +
                   "\n";
        for (const detail::OnlineSoftmax &link : s.before)
            for (size_t j = 0; j < n; ++j)
                if (loops[j].begin == link.loop.begin) links.insert(j);
        out.fn = detail::Rewrite(out.fn, s, load ? &saved : nullptr).run();
        if (load) out.guards.insert(out.guards.end(), saved.guards.begin(), saved.guards.end());
        loops = ir::loops(out.fn);
    }
    return out;
}

namespace {

// Whether carried value k is updated as c·alpha + sum(b^x): the sum of the p it adds.
bool sums_p(const ir::Function &f, const detail::OnlineSoftmax &s, const detail::OnlineSoftmax::Rescaled &r) {
    const ir::Op &add = f.def(f.ops[s.loop.end].operands[r.k]);
    if (add.kind != ir::OpKind::Add) return false;
    const ir::ValueId t = add.operands[0] == r.product ? add.operands[1] : add.operands[0];
    const ir::Op &sum = f.def(t);
    return sum.kind == ir::OpKind::ReduceSum && f.def(sum.operands[0]).kind == s.exp;
}

// m's dims as the constexprs that spell them, or false where one is not (a literal may be a value
// folded for this launch alone).
bool spelled_dims(const ir::Function &f, const ir::Type &t, std::vector<std::string> *out) {
    for (const ir::Dim &d : t.shape) {
        const bool named = std::any_of(f.constexprs.begin(), f.constexprs.end(),
                                       [&](const ir::Constexpr &c) { return c.name == d.expr; });
        if (!named) return false;
        out->push_back(d.expr);
    }
    return true;
}

}  // namespace

std::vector<UnsavedLogsumexp> unsaved_logsumexps(const ir::Function &f, const std::vector<std::string> &outputs,
                                                 const std::vector<std::string> &kept) {
    std::vector<UnsavedLogsumexp> out;
    for (const ir::Loop &l : ir::loops(f)) {
        detail::OnlineSoftmax s;
        std::string why;
        // Not a chain's: l of the last loop is the sum of the p it adds, but the value it starts
        // from need not be (a sum of p·w), and log(l) could be undefined where the forward's is not.
        if (l.parent >= 0 || !detail::match_online_softmax(f, l, &s, &why) || !why.empty() ||
            !detail::match_start(f, &s).empty() || !s.before.empty() ||
            !detail::shift_invariant_uses(f, s, outputs).empty())
            continue;
        detail::Saved saved;
        if (detail::find_saved(f, s, outputs, kept, &saved).empty()) continue;
        const ir::ValueId m = f.ops[l.results[s.m]].result;
        UnsavedLogsumexp u{l.begin, f.values[m].name, "", s.exp, {}};
        if (f.type(m).rank() > 1 || !spelled_dims(f, f.type(m), &u.dims) || u.m.empty()) continue;
        for (const detail::OnlineSoftmax::Rescaled &r : s.rescaled) {
            const ir::ValueId c = f.ops[l.results[r.k]].result;
            if (f.type(c).same_shape(f.type(m)) && sums_p(f, s, r) && !f.values[c].name.empty()) u.l = f.values[c].name;
        }
        if (!u.l.empty()) out.push_back(u);
    }
    return out;
}

}  // namespace tad::passes
