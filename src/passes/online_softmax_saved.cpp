// What the forward saved of an online softmax (online_softmax_internal.h: find_saved): the
// logsumexp and the normalized values it stores, found by what they are in terms of the loop's
// results, and the proof that each program's backward can load back what it stored.
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "passes/access.h"
#include "passes/online_softmax_internal.h"
#include "passes/passes.h"

namespace tad::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

// A value after the loop in terms of its results, row by row: scale · (m_T + log_b(c_log)) when
// additive, else scale · Π c_k^pow[k]. `axis`: the dim its rows are in (-1: every element).
struct Term {
    double scale = 1;
    bool m = false;
    int log = -1;
    std::map<size_t, int> pow;
    int axis = -1;
    bool additive() const { return m || log >= 0; }
};

std::optional<double> constant(const ir::Function &f, ValueId v) {
    const ir::Op &op = f.def(v);
    if (op.kind == OpKind::Broadcast) return constant(f, op.operands[0]);
    if (op.kind == OpKind::Const) return op.fval;
    return std::nullopt;
}

// op's result as a Term from its operands' (nullopt: not one).
std::optional<Term> term_of(const ir::Function &f, const ir::Op &op, const std::map<ValueId, Term> &t, OpKind log) {
    auto get = [&](size_t j) -> std::optional<Term> {
        auto it = j < op.operands.size() ? t.find(op.operands[j]) : t.end();
        if (it == t.end()) return std::nullopt;
        return it->second;
    };
    std::optional<Term> a = get(0), b = get(1);
    const bool both_products = a && b && !a->additive() && !b->additive() && a->axis == b->axis;
    switch (op.kind) {
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
        if (a) a->axis = row_axis_after(f, op, a->axis);
        return a;
    case OpKind::Cast: return a;
    case OpKind::Mul:
    case OpKind::Div: {
        const std::optional<double> k = constant(f, op.operands[1]);
        if (a && !b && k) return a->scale = op.kind == OpKind::Mul ? a->scale * *k : a->scale / *k, a;
        const std::optional<double> k0 = constant(f, op.operands[0]);
        if (b && !a && k0 && op.kind == OpKind::Mul) return b->scale *= *k0, b;
        if (!both_products) return std::nullopt;
        const int sign = op.kind == OpKind::Mul ? 1 : -1;
        a->scale = op.kind == OpKind::Mul ? a->scale * b->scale : a->scale / b->scale;
        for (const auto &[k2, n] : b->pow)
            if ((a->pow[k2] += sign * n) == 0) a->pow.erase(k2);
        return a;
    }
    case OpKind::Add:
        if (!a || !b || !a->additive() || !b->additive() || a->scale != b->scale || a->axis != b->axis ||
            a->m == b->m || (a->log >= 0) == (b->log >= 0))
            return std::nullopt;
        a->m = true;
        a->log = std::max(a->log, b->log);
        return a;
    default:
        if (op.kind == log && a && !a->additive() && a->scale == 1 && a->pow.size() == 1 &&
            a->pow.begin()->second == 1) {
            Term r;
            r.log = static_cast<int>(a->pow.begin()->first);
            r.axis = a->axis;
            return r;
        }
        return std::nullopt;
    }
}

// The dims along which v's elements may differ: a broadcast's new dims and the dims it widens from 1
// do not, an aranged tile's one dim does, and an elementwise op's are its operands'; anything else
// (a load, a reduction, a dot) may differ along every dim of its type.
std::set<int> varying_dims(const ir::Function &f, ValueId v) {
    const ir::Op &op = f.def(v);
    const ir::Type &t = f.type(v);
    const int rank = static_cast<int>(t.rank());
    std::set<int> out;
    if (rank == 0 || op.kind == OpKind::Const) return out;
    if (op.kind == OpKind::Arange) return {0};
    if (op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims) {
        const ir::Type &from = f.type(op.operands[0]);
        for (int d : varying_dims(f, op.operands[0]))
            if (from.shape[static_cast<size_t>(d)].value != 1) out.insert(row_axis_after(f, op, d));
        return out;
    }
    const ir::OpClass cls = ir::op_info(op.kind).cls;
    const bool elementwise = cls == ir::OpClass::Unary || cls == ir::OpClass::Binary || cls == ir::OpClass::Compare ||
                             cls == ir::OpClass::Logical || op.kind == OpKind::Cast || op.kind == OpKind::Where;
    for (ValueId o : op.operands) {
        if (!elementwise || !f.type(o).same_shape(t)) {
            if (!elementwise || f.type(o).rank() != 0)
                for (int d = 0; d < rank; ++d) out.insert(d);
            continue;
        }
        for (int d : varying_dims(f, o)) out.insert(d);
    }
    return out;
}

// A predicate of one row (or of the whole program, axis -1): a value of rank 0 or 1, or one whose
// elements differ along one dim only (`rows[:, None] < N`, or a descriptor's bound on the rows of
// its tile, compared after broadcasting), through broadcasts and expand_dims; `axis`: where its dim
// is in v.
bool row_predicate(const ir::Function &f, ValueId v, ValueId *base, int *axis) {
    const ir::Op &op = f.def(v);
    if (op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims) {
        if (!row_predicate(f, op.operands[0], base, axis)) return false;
        *axis = row_axis_after(f, op, *axis);
        return true;
    }
    int varying = varying_axis(f.type(v));
    if (f.type(v).rank() > 1 && varying == -2) {
        const std::set<int> dims = varying_dims(f, v);
        if (dims.size() > 1) return false;
        varying = dims.empty() ? -1 : *dims.begin();
    }
    *base = v;
    *axis = f.type(v).rank() <= 1 ? f.type(v).rank() - 1 : varying;
    return true;
}

bool is_write(const ir::Op &op) { return op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd; }

class Finder {
public:
    Finder(const ir::Function &f, const OnlineSoftmax &s, const std::vector<std::string> &outputs,
           const std::vector<std::string> &kept)
        : f_(f), s_(s), outputs_(outputs), kept_(kept), affine_(f) {}

    std::string run(Saved *out) {
        track_terms();
        std::string why = "the forward stores no logsumexp m + log(l) of it where the backward can read it back";
        for (const auto &[store, term] : candidates_) {
            if (!term.m || term.log < 0) continue;
            Saved saved;
            saved.l = static_cast<size_t>(term.log);
            saved.lse = {store, term.scale, f_.ops[store].has_mask};
            why = ratios(&saved);
            if (why.empty()) why = check_store(saved.lse, result(s_.m), false, &saved);
            for (const auto &[k, v] : saved.ratios)
                if (why.empty()) why = check_store(v, result(k), true, &saved);
            saved_l_ = saved.l;
            if (why.empty()) why = masked_lanes_stay_out(saved);
            for (const auto &[k, v] : saved.ratios)
                if (why.empty()) why = masked_columns_stay_out(k, v);
            if (!why.empty()) continue;
            *out = std::move(saved);
            return "";
        }
        return why;
    }

private:
    const ir::Function &f_;
    const OnlineSoftmax &s_;
    const std::vector<std::string> &outputs_, &kept_;
    Affine affine_;
    size_t saved_l_ = 0;
    std::map<ValueId, Term> terms_;
    std::vector<std::pair<int, Term>> candidates_;  // stores into kept buffers of values with a Term

    ValueId result(size_t k) const { return f_.ops[s_.loop.results[k]].result; }

    void track_terms() {
        const ir::Loop &l = s_.loop;
        terms_[result(s_.m)].m = true;
        terms_[result(s_.m)].axis = f_.type(result(s_.m)).rank() == 1 ? 0 : -1;
        for (const OnlineSoftmax::Rescaled &r : s_.rescaled) {
            Term &t = terms_[result(r.k)];
            t.pow[r.k] = 1;
            t.axis = r.axis;
        }
        const OpKind log = s_.exp == OpKind::Exp ? OpKind::Log : OpKind::Log2;
        const std::vector<bool> top = top_level(f_);
        for (int i = l.last() + 1; i < static_cast<int>(f_.ops.size()); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::Store && top[i] && terms_.count(op.operands[1]) &&
                std::count(kept_.begin(), kept_.end(), pointer_base(f_, op.operands[0])))
                candidates_.emplace_back(i, terms_.at(op.operands[1]));
            if (op.result == ir::kNoValue) continue;
            std::optional<Term> t = term_of(f_, op, terms_, log);
            if (t) terms_[op.result] = *t;
        }
    }

    // Every other rescaled value's ratio to c_l, saved.
    std::string ratios(Saved *saved) const {
        for (const OnlineSoftmax::Rescaled &r : s_.rescaled) {
            if (r.k == saved->l) continue;
            for (const auto &[store, term] : candidates_)
                if (!term.additive() && term.pow == std::map<size_t, int>{{r.k, 1}, {saved->l, -1}})
                    saved->ratios[r.k] = {store, term.scale, f_.ops[store].has_mask};
            if (!saved->ratios.count(r.k))
                return "the forward does not store " + name(result(r.k)) + " / " + name(result(saved->l));
        }
        return "";
    }

    std::string name(ValueId v) const {
        return f_.values[v].name.empty() ? "%" + std::to_string(v) : "'" + f_.values[v].name + "'";
    }

    // The store of `v` (standing for `value`) leaves, in each element, what one program stored there;
    // its mask leaves out whole rows, or for a `ratio` also lanes within rows.
    std::string check_store(const SavedValue &v, ValueId value, bool ratio, Saved *saved) {
        const ir::Op &st = f_.ops[v.store];
        const std::string at = op_at(f_, v.store) + ": ";
        if (!f_.type(st.operands[1]).same_shape(f_.type(value))) return at + "stores a tile of another shape";
        const std::string base = pointer_base(f_, st.operands[0]);
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (static_cast<int>(i) != v.store && is_write(f_.ops[i]) &&
                pointer_base(f_, f_.ops[i].operands[0]) == base)
                return at + "the kernel writes " + base + " elsewhere too";
        std::string why = pure_cone(st.operands[0]);
        if (why.empty() && st.has_mask) why = pure_cone(st.operands[2]);
        if (!why.empty()) return at + why;
        std::vector<std::vector<Inequality>> alternatives;
        if (!writes_distinct(f_, affine_, {st.operands[0]}, st.has_mask ? st.operands[2] : ir::kNoValue,
                             program_axes(f_), -1, &alternatives, &why))
            return at + "not proven to write each element from one program: " + why;
        if (std::none_of(alternatives.begin(), alternatives.end(), [](const auto &a) { return a.empty(); }))
            saved->guards.push_back(alternatives);
        std::vector<Conjunct> rows, cols;
        if (st.has_mask && (!split_mask(v, &rows, &cols) || (!ratio && !cols.empty())))
            return at + (ratio ? "its mask is not a condition on rows or on lanes"
                               : "its mask is not a condition on whole rows");
        return "";
    }

    // The address or mask computation after the loop reads no memory and no loop result: the
    // backward computes it again without the loop.
    std::string pure_cone(ValueId v) const {
        const int d = f_.values[v].def_op;
        if (d <= s_.loop.last()) return d >= s_.loop.begin ? "its address reads a loop result" : "";
        const ir::Op &op = f_.ops[d];
        if (op.kind == OpKind::Load || op.kind == OpKind::Rand || op.kind == OpKind::Randn ||
            op.kind == OpKind::LoopResult)
            return "its address or mask reads " + op_at(f_, d);
        for (ValueId o : op.operands) {
            std::string why = pure_cone(o);
            if (!why.empty()) return why;
        }
        return "";
    }

    // A conjunct of a store's mask: its predicate of one dim (or of none), and where that dim is in
    // the stored tile (-1: none).
    struct Conjunct {
        ValueId base = ir::kNoValue;
        int axis = -1;
    };

    // The conjuncts of saved value v's store mask: conditions on its rows (where the backward loads
    // M = +inf) and on lanes within a row (`dims < D`, where a ratio loads 0); false when a conjunct
    // varies along several dims.
    bool split_mask(const SavedValue &v, std::vector<Conjunct> *rows, std::vector<Conjunct> *cols) const {
        const ir::Op &st = f_.ops[v.store];
        const int axis = terms_.at(st.operands[1]).axis;
        for (ValueId c : and_operands(f_, st.operands[2])) {
            Conjunct k;
            if (!row_predicate(f_, c, &k.base, &k.axis)) return false;
            (k.axis < 0 || k.axis == axis ? rows : cols)->push_back(k);
        }
        return true;
    }

    // Where a saved store is masked, the backward loads a neutral value in the lanes it leaves out
    // (M = +inf, so that p = 0 there; c_l 1, ratios 0). Those lanes must not matter: every
    // differentiated output written from the loop's results leaves out the same rows (their
    // cotangents are zero there), and on the way no derivative multiplies a cotangent by an infinite
    // or undefined value (lane_wise).
    std::string masked_lanes_stay_out(const Saved &saved) const {
        std::vector<SavedValue> masked;
        if (saved.lse.masked) masked.push_back(saved.lse);
        for (const auto &[k, v] : saved.ratios) {
            std::vector<Conjunct> rows, cols;
            if (v.masked && split_mask(v, &rows, &cols) && !rows.empty()) masked.push_back(v);
        }
        if (masked.empty()) return "";
        Taint t{reaching_outputs(), {}, {result(s_.m)}};
        t.axis[result(s_.m)] = terms_.at(result(s_.m)).axis;
        for (const OnlineSoftmax::Rescaled &r : s_.rescaled) t.axis[result(r.k)] = r.axis;
        for (int i = s_.loop.last() + 1; i < static_cast<int>(f_.ops.size()); ++i) {
            const std::string why = follow(i, masked, t);
            if (!why.empty()) return op_at(f_, i) + " " + why;
        }
        return "";
    }

    // The values read from the loop's results on their way to a differentiated output.
    struct Taint {
        std::set<ValueId> useful;  // values a differentiated output's write is reached from
        std::map<ValueId, int> axis;  // read from the loop's results -> their row axis
        std::set<ValueId> from_m;  // read from the running maximum
    };

    // Op i's part of masked_lanes_stay_out: "" or why not.
    std::string follow(int i, const std::vector<SavedValue> &masked, Taint &t) const {
        const ir::Op &op = f_.ops[i];
        std::optional<int> a;
        bool m = false;
        for (ValueId o : op.operands)
            if (t.axis.count(o)) {
                if (a && *a != t.axis.at(o)) return "mixes rows";
                a = t.axis.at(o);
                m = m || t.from_m.count(o);
            }
        if (!a) return "";
        if (is_write(op)) {
            if (addresses_or_masks(op, t.axis)) return "addresses or masks a write with the loop's results";
            if (!output(op) || !t.axis.count(op.operands[1])) return "";
            for (const SavedValue &v : masked)
                if (!leaves_out_rows(op, v, *a)) return "writes rows a saved value's mask leaves out";
            return "";
        }
        if (!t.useful.count(op.result)) return "";
        std::string why = lane_wise(op, t.axis, t.from_m);
        if (!why.empty()) return why;
        t.axis[op.result] =
            op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims ? row_axis_after(f_, op, *a) : *a;
        if (m) t.from_m.insert(op.result);
        return "";
    }

    // Ops whose derivative stays finite and zero where the cotangent is zero, with M = +inf, c_l = 1
    // and finite ratios there: linear ones, with M-derived values only scaled by constants; divisors
    // and logarithms of powers of c_l.
    std::string lane_wise(const ir::Op &op, const std::map<ValueId, int> &axis, const std::set<ValueId> &from_m) const {
        auto m = [&](size_t j) { return from_m.count(op.operands[j]) > 0; };
        auto tainted = [&](size_t j) { return axis.count(op.operands[j]) > 0; };
        auto power_of_l = [&](size_t j) {
            auto t = terms_.find(op.operands[j]);
            return !m(j) && t != terms_.end() && !t->second.additive() &&
                   std::all_of(t->second.pow.begin(), t->second.pow.end(),
                               [&](const auto &p) { return p.first == saved_l_; });
        };
        const std::string nonlinear = "reads the loop's results with a non-linear op";
        switch (op.kind) {
        case OpKind::Broadcast:
        case OpKind::ExpandDims:
        case OpKind::Cast:
        case OpKind::Add:
        case OpKind::Sub:
        case OpKind::Neg: return "";
        case OpKind::Where: return tainted(0) ? "selects by a value computed from the loop's results" : "";
        case OpKind::Mul:
            if ((m(0) && !constant(f_, op.operands[1])) || (m(1) && !constant(f_, op.operands[0])))
                return "multiplies the running maximum by a value that is not a constant";
            return "";
        case OpKind::Div:
            if (m(0) && !constant(f_, op.operands[1]))
                return "divides the running maximum by a value that is not a constant";
            return !tainted(1) || power_of_l(1) ? "" : "divides by a value that is not a power of the loop's sum";
        default: return (op.kind == OpKind::Log || op.kind == OpKind::Log2) && power_of_l(0) ? "" : nonlinear;
        }
    }

    bool output(const ir::Op &op) const {
        return is_write(op) && std::count(outputs_.begin(), outputs_.end(), pointer_base(f_, op.operands[0]));
    }

    // Values after the loop from which a differentiated output's write is reached.
    std::set<ValueId> reaching_outputs() const {
        std::set<ValueId> out;
        for (int i = static_cast<int>(f_.ops.size()) - 1; i > s_.loop.last(); --i) {
            const ir::Op &op = f_.ops[i];
            if (output(op) || (op.result != ir::kNoValue && out.count(op.result)))
                for (ValueId o : op.operands) out.insert(o);
        }
        return out;
    }

    // The write's mask holds only in rows where saved value v's store mask holds.
    bool leaves_out_rows(const ir::Op &write, const SavedValue &v, int axis) const {
        std::vector<Conjunct> rows, cols;
        split_mask(v, &rows, &cols);
        for (const Conjunct &need : rows)
            if (!has_conjunct(write, need.base, need.axis < 0 ? -1 : axis)) return false;
        return true;
    }

    // Whether a write's pointer or mask is one of `values`: neutral values loaded in place of the loop's
    // results would move or mask the write in the backward's copy of the code.
    static bool addresses_or_masks(const ir::Op &write, const std::map<ValueId, int> &values) {
        return values.count(write.operands[0]) || (write.has_mask && values.count(write.operands[2]));
    }

    // Whether the write's mask has the predicate `base` as a conjunct along dim `axis` of the written
    // tile (-1: any).
    bool has_conjunct(const ir::Op &write, ValueId base, int axis) const {
        if (!write.has_mask) return false;
        for (ValueId c : and_operands(f_, write.operands[2])) {
            ValueId b = ir::kNoValue;
            int a = 0;
            if (row_predicate(f_, c, &b, &a) && b == base && (axis < 0 || a == axis)) return true;
        }
        return false;
    }

    // Where ratio k's store mask leaves out lanes within rows (`dims < D`), the backward loads 0 there
    // in place of c_k / c_l. Those lanes must not matter: the values computed from c_k reach
    // differentiated outputs lane by lane (lane_wise, in tiles of the stored one's shape, no
    // reduction), and each such write leaves out the same lanes, so their cotangents are zero there.
    std::string masked_columns_stay_out(size_t k, const SavedValue &v) const {
        std::vector<Conjunct> rows, cols;
        if (!v.masked || !split_mask(v, &rows, &cols) || cols.empty()) return "";
        const ir::Type &tile = f_.type(f_.ops[v.store].operands[1]);
        const std::set<ValueId> useful = reaching_outputs();
        std::map<ValueId, int> tainted{{result(k), 0}};
        for (int i = s_.loop.last() + 1; i < static_cast<int>(f_.ops.size()); ++i) {
            const ir::Op &op = f_.ops[i];
            if (std::none_of(op.operands.begin(), op.operands.end(), [&](ValueId o) { return tainted.count(o) > 0; }))
                continue;
            const std::string at = op_at(f_, i) + " ";
            if (is_write(op)) {
                if (addresses_or_masks(op, tainted)) return at + "addresses or masks a write with the loop's results";
                if (!output(op) || !tainted.count(op.operands[1])) continue;
                for (const Conjunct &need : cols)
                    if (!f_.type(op.operands[1]).same_shape(tile) || !has_conjunct(op, need.base, need.axis))
                        return at + "writes lanes the mask of " + op_at(f_, v.store) + " leaves out";
                continue;
            }
            if (!useful.count(op.result)) continue;
            const ir::OpClass c = ir::op_info(op.kind).cls;
            if (c == ir::OpClass::Reduction || c == ir::OpClass::Scan || c == ir::OpClass::Contraction)
                return at + "combines the lanes the mask of " + op_at(f_, v.store) + " leaves out with others";
            if (!f_.type(op.result).same_shape(tile))
                return at + "reads the loop's results into a tile of another shape";
            const std::string why = lane_wise(op, tainted, {});
            if (!why.empty()) return at + why;
            tainted[op.result] = 0;
        }
        return "";
    }
};

}  // namespace

std::string find_saved(const ir::Function &f, const OnlineSoftmax &s, const std::vector<std::string> &outputs,
                       const std::vector<std::string> &kept, Saved *out) {
    Finder finder(f, s, outputs, kept);
    return finder.run(out);
}

}  // namespace tad::passes::detail
