#include "passes/access.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <utility>

#include "passes/passes.h"
#include "support/text.h"

namespace tad::passes {

namespace {

using ir::OpKind;

// ---- the mixed-radix proof ---------------------------------------------------------------------

// One digit of an address: coefficient · value, value in [0, size); no size: unbounded.
struct Digit {
    Poly coeff;
    std::optional<Poly> size;
};

struct Proof {
    bool ok = false;
    std::vector<Inequality> guards;
    std::string why;
};

// Whether the digits, in this order, give pairwise different sums: each coefficient exceeds the
// span of the ones before it. A condition that is not a number becomes a guard.
Proof in_order(const std::vector<Digit> &digits) {
    Proof p{true, {}, ""};
    Poly span;
    for (const Digit &d : digits) {
        const Poly c = d.coeff.negative() ? d.coeff * Poly::constant(-1) : d.coeff;
        const Poly need = span + Poly::constant(1);
        int64_t slack = 0;
        if (!(c - need).constant_value(&slack))
            p.guards.push_back(Inequality{c, need});
        else if (slack < 0)
            return Proof{false, {}, "coefficient " + c.str() + " is below " + need.str()};
        if (d.size) span = span + c * (*d.size - Poly::constant(1));
    }
    return p;
}

// Calls `visit` with each order of the bounded digits (the unbounded one, if any, last), up to 720
// orders, until it returns false. False when two digits are unbounded (no order can separate them).
bool for_each_order(std::vector<Digit> digits, const std::function<bool(const std::vector<Digit> &)> &visit) {
    auto unbounded = std::stable_partition(digits.begin(), digits.end(), [](const Digit &d) { return d.size; });
    if (digits.end() - unbounded > 1) return false;
    const size_t bounded = static_cast<size_t>(unbounded - digits.begin());
    std::vector<size_t> order(bounded);
    for (size_t i = 0; i < bounded; ++i) order[i] = i;
    int tries = 0;
    do {
        std::vector<Digit> seq;
        for (size_t i : order) seq.push_back(digits[i]);
        seq.insert(seq.end(), unbounded, digits.end());
        if (!visit(seq)) break;
    } while (++tries < 720 && std::next_permutation(order.begin(), order.end()));
    return true;
}

// The order with the fewest guards.
Proof mixed_radix(const std::vector<Digit> &digits) {
    Proof best{false, {}, "no order of the index variables separates them"};
    const bool orderable = for_each_order(digits, [&](const std::vector<Digit> &seq) {
        Proof p = in_order(seq);
        if (p.ok && (!best.ok || p.guards.size() < best.guards.size())) best = p;
        return !(best.ok && best.guards.empty());
    });
    if (!orderable) return Proof{false, {}, "two index variables with no bound (a mask bounding them would prove it)"};
    return best;
}

// Every order's proof, each set of guards once: the one without guards alone when there is one.
// Which order holds depends on the strides (row or column major), so each is an alternative; of
// many, the six with the fewest guards (the first six found can all miss a plain row-major layout
// when the digits are many).
std::vector<Proof> every_order(const std::vector<Digit> &digits) {
    std::vector<Proof> out;
    for_each_order(digits, [&](const std::vector<Digit> &seq) {
        Proof p = in_order(seq);
        if (!p.ok || std::any_of(out.begin(), out.end(), [&](const Proof &q) { return q.guards == p.guards; }))
            return true;
        if (p.guards.empty()) out = {p};
        if (!p.guards.empty()) out.push_back(p);
        return !p.guards.empty();
    });
    std::stable_sort(out.begin(), out.end(),
                     [](const Proof &a, const Proof &b) { return a.guards.size() < b.guards.size(); });
    if (out.size() > 6) out.resize(6);
    return out;
}

// ---- digits of one address ---------------------------------------------------------------------

Poly dim_size(const ir::Dim &d) {
    bool number = !d.expr.empty() && std::all_of(d.expr.begin(), d.expr.end(), [](char c) { return std::isdigit(c); });
    return number || d.expr.empty() ? Poly::constant(d.value) : Poly::parse(d.expr).value_or(Poly::symbol(d.expr));
}

// The natural range of an index variable of a value of type t.
std::optional<Poly> natural_size(const IndexVar &v, const ir::Type &t, const Affine &a) {
    if (v.kind == IndexVar::Lane) return dim_size(t.shape.at(v.n));
    if (v.kind == IndexVar::Program) return Poly::symbol("num_programs(" + std::to_string(v.n) + ")");
    if (v.kind == IndexVar::Remainder) return *a.divisor(v.n);
    return std::nullopt;
}

// `bound.form` as a part of `terms`: the scalar m with terms[v] == m · bound.form.terms[v] on all of
// its variables.
bool factor(const std::map<IndexVar, Poly> &terms, const Form &g, Poly *m) {
    if (g.terms.empty() || !terms.count(g.terms.begin()->first)) return false;
    if (!terms.at(g.terms.begin()->first).divide(g.terms.begin()->second, m)) return false;
    for (const auto &[v, c] : g.terms)
        if (!terms.count(v) || !(c * *m == terms.at(v))) return false;
    return true;
}

std::vector<Digit> natural_digits(const std::map<IndexVar, Poly> &terms, const ir::Type &t, const Affine &a) {
    std::vector<Digit> out;
    for (const auto &[v, c] : terms) out.push_back({c, natural_size(v, t, a)});
    return out;
}

// The index variables an address determines: its terms, where it keeps both the quotient and the
// remainder of a division its dividend's variables instead (x = (x // d) · d + x % d). *partial: a
// division it keeps one part of (-1: none); its dividend's variables are not determined.
std::set<IndexVar> determined(const Affine &a, const Form &addr, int *partial) {
    std::set<IndexVar> out;
    *partial = -1;
    for (const auto &term : addr.terms) {
        const IndexVar &v = term.first;
        if (!v.divides()) {
            out.insert(v);
            continue;
        }
        const bool both = addr.terms.count({IndexVar::Divided, v.n}) && addr.terms.count({IndexVar::Modulo, v.n});
        if (!both && *partial < 0) *partial = v.n;
        if (both)
            for (const auto &inner : a.divisions()[static_cast<size_t>(v.n)].dividend.terms) out.insert(inner.first);
    }
    return out;
}

// Why an address that keeps one part of the division `k` of an index is not injective.
std::string partial_text(const ir::Function &f, const Affine &a, const std::map<IndexVar, Poly> &terms, int k) {
    const bool quotient = terms.count({IndexVar::Divided, k});
    return std::string("its address keeps the ") +
           (quotient ? "quotient but not the remainder" : "remainder but not the quotient") +
           " of an index divided by a loop-invariant (" + op_at(f, a.divisions()[static_cast<size_t>(k)].op) +
           "): lanes, iterations or programs that differ only in the " + (quotient ? "remainder" : "quotient") +
           " write one element";
}

// Bounds by how many index variables they bound, most first.
std::vector<Bound> widest_first(std::vector<Bound> bounds) {
    std::stable_sort(bounds.begin(), bounds.end(),
                     [](const Bound &x, const Bound &y) { return x.form.terms.size() > y.form.terms.size(); });
    return bounds;
}

// The bounds after the i-th of widest-first `bounds` with fewer variables: the candidates for its parts.
std::vector<Bound> narrower_than(const std::vector<Bound> &bounds, size_t i) {
    std::vector<Bound> out;
    for (size_t j = i + 1; j < bounds.size(); ++j)
        if (bounds[j].form.terms.size() < bounds[i].form.terms.size() && !bounds[j].range) out.push_back(bounds[j]);
    return out;
}

// Why an address whose variable `v` is read twice, once inside `div`'s dividend, is refused.
std::string reread_text(const ir::Function &f, const IndexVar &v, const Division &div) {
    return "its address reads " + v.str() + " twice, once inside an index divided by a loop-invariant (" +
           op_at(f, div.op) + ")";
}

// Where a mask, or the end of the loop whose iterator it is (Division::below), bounds a division's
// dividend below a multiple of the divisor, `dividend < Q · d`: Q, the quotient's range.
std::optional<Poly> quotient_size(const Division &div, const std::vector<Bound> &bounds) {
    for (const Bound &b : bounds) {
        Poly q;
        if (b.form.terms == div.dividend.terms &&
            (b.bound - b.form.offset + div.dividend.offset).divide(div.divisor, &q))
            return q;
    }
    Poly q;
    if (div.below && div.below->divide(div.divisor, &q)) return q;
    return std::nullopt;
}

// The variables a digit stands for, a split program id as its whole.
std::set<IndexVar> owners(const std::map<IndexVar, Poly> &terms) {
    std::set<IndexVar> out;
    for (const auto &term : terms) {
        const IndexVar &v = term.first;
        const bool part = v.kind == IndexVar::Quotient || v.kind == IndexVar::Remainder;
        out.insert(part ? IndexVar{IndexVar::Program, v.n} : v);
    }
    return out;
}

Proof digits_of(const ir::Function &f, const Form &addr, const std::vector<Bound> &all, const ir::Type &t,
                const Affine &a, std::vector<Digit> *out);

// Each division the address keeps both parts of as two digits, the remainder's (c, d) and the
// quotient's (c', Q) (quotient_size; unbounded where no mask gives one), removed from `rest`: the
// pair determines the dividend, which must determine its own variables (its digits' proof) and share
// none with the rest of the address or another such dividend.
Proof division_digits(const ir::Function &f, const Affine &a, std::map<IndexVar, Poly> &rest,
                      const std::vector<Bound> &all, const ir::Type &t, std::vector<Digit> *out) {
    Proof inner{true, {}, ""};
    std::set<IndexVar> taken;
    for (const IndexVar &v : owners(rest))
        if (!v.divides()) taken.insert(v);
    for (size_t i = 0; i < a.divisions().size(); ++i) {
        const Division &div = a.divisions()[i];
        const int k = static_cast<int>(i);
        const IndexVar q{IndexVar::Divided, k}, r{IndexVar::Modulo, k};
        if (!rest.count(q) && !rest.count(r)) continue;
        if (!rest.count(q) || !rest.count(r)) return Proof{false, {}, partial_text(f, a, rest, k)};
        for (const IndexVar &v : owners(div.dividend.terms))
            if (!taken.insert(v).second) return Proof{false, {}, reread_text(f, v, div)};
        std::vector<Digit> parts;
        Proof p = digits_of(f, div.dividend, all, t, a, &parts);
        Proof m = mixed_radix(parts);
        if (!p.ok || !m.ok)
            return Proof{
                false, {}, "the index divided at " + op_at(f, div.op) + " may repeat: " + (p.ok ? m.why : p.why)};
        for (const std::vector<Inequality> *g : {&div.signs, &std::as_const(p.guards), &std::as_const(m.guards)})
            inner.guards.insert(inner.guards.end(), g->begin(), g->end());
        out->push_back({rest.at(r), div.divisor});
        out->push_back({rest.at(q), quotient_size(div, all)});
        rest.erase(q);
        rest.erase(r);
    }
    return inner;
}

// The digits of an address: divisions it keeps whole (division_digits), compound indices the mask
// bounds, widest first, then the remaining variables with their natural ranges. A compound is one
// digit when it is injective on its own, proved from its variables' digits, which may be narrower
// compounds (a split of a range: `split*LEN + k*BLOCK + lane < N` holds `k*BLOCK + lane < LEN`).
Proof digits_of(const ir::Function &f, const Form &addr, const std::vector<Bound> &all, const ir::Type &t,
                const Affine &a, std::vector<Digit> *out) {
    const std::vector<Bound> bounds = widest_first(all);
    std::map<IndexVar, Poly> rest = addr.terms;
    Proof inner = division_digits(f, a, rest, all, t, out);
    if (!inner.ok) return inner;
    for (size_t i = 0; i < bounds.size(); ++i) {
        const Bound &b = bounds[i];
        Poly m;
        if (!factor(rest, b.form, &m)) continue;
        std::vector<Digit> parts;
        Proof q = digits_of(f, b.form, narrower_than(bounds, i), t, a, &parts);
        Proof p = mixed_radix(parts);
        if (!q.ok || !p.ok) continue;
        inner.guards.insert(inner.guards.end(), q.guards.begin(), q.guards.end());
        inner.guards.insert(inner.guards.end(), p.guards.begin(), p.guards.end());
        out->push_back({m, b.bound - b.form.offset});
        for (const auto &term : b.form.terms) rest.erase(term.first);
    }
    for (Digit &d : natural_digits(rest, t, a)) out->push_back(d);
    return inner;
}

// ---- one load ----------------------------------------------------------------------------------

std::vector<int> minus(const std::vector<int> &a, const std::set<int> &b) {
    std::vector<int> out;
    for (int x : a)
        if (!b.count(x)) out.push_back(x);
    return out;
}

// What of the grid an address does not depend on: whole axes, or one part of a split axis (a
// program id inside a division's dividend counts where the address keeps both of its parts).
std::vector<std::string> shared_along(const Affine &a, const Form &addr, const std::vector<int> &axes) {
    std::vector<std::string> out;
    int partial = -1;
    const std::set<IndexVar> vars = determined(a, addr, &partial);
    for (int axis : axes) {
        const std::string name = "grid axis " + std::to_string(axis);
        const Poly *d = a.divisor(axis);
        if (!addr.axes.count(axis)) {
            out.push_back(name);
        } else if (addr.affine && d && !vars.count({IndexVar::Program, axis})) {
            if (!vars.count({IndexVar::Quotient, axis})) out.push_back(name + " // " + d->str());
            if (!vars.count({IndexVar::Remainder, axis})) out.push_back(name + " % " + d->str());
        }
    }
    return out;
}

LoadAccess classify(Affine &a, const ir::Function &f, int op, const std::vector<int> &used_axes) {
    const Form &addr = a.of(f.ops[op].operands[0]);
    LoadAccess r;
    r.op = op;
    const std::vector<int> around = a.loops_around(op);
    r.over = shared_along(a, addr, used_axes);
    std::vector<int> still = minus(around, addr.loops);
    if (addr.data >= 0) {
        r.cls = LoadAccess::Scatter;
        r.why = "its address depends on the value of the " + op_at(f, addr.data);
    } else if (!r.over.empty()) {
        r.loops = minus(around, std::set<int>(still.begin(), still.end()));
        r.cls = r.loops.empty() ? LoadAccess::ReducedGrid : LoadAccess::ReducedLoopGrid;
    } else if (!still.empty()) {
        r.cls = LoadAccess::ReducedLoop;
        r.loops = still;
    } else if (!addr.affine) {
        r.why =
            "its address is not affine in the program ids, lanes and loop iterations (" + op_at(f, addr.blocker) + ")";
    } else if (int partial = -1; determined(a, addr, &partial), partial >= 0) {
        r.why = partial_text(f, a, addr.terms, partial);
    } else {
        r.cls = LoadAccess::Disjoint;  // a candidate, until the parameter's proof
    }
    return r;
}

// Lanes of a dim longer than 1 that the address does not determine read one element several times.
std::string repeated_lanes(const std::set<IndexVar> &vars, const ir::Type &t) {
    for (size_t d = 0; d < t.rank(); ++d)
        if (t.shape[d].value > 1 && !vars.count({IndexVar::Lane, static_cast<int>(d)}))
            return "the lanes along dim " + std::to_string(d) + " read the same address";
    return "";
}

// The distance digit of loads at offsets base, base + δ, ..., base + (k-1)·δ (in any order): one
// more digit of size k. False when the offsets are not such a progression.
bool distance_digit(const std::vector<Poly> &offsets, Digit *d) {
    const int64_t k = static_cast<int64_t>(offsets.size());
    auto has = [&](const Poly &x) { return std::find(offsets.begin(), offsets.end(), x) != offsets.end(); };
    for (size_t i = 1; i < offsets.size(); ++i) {
        // A positive step where there is one: coverage looks for the progression from offset 0 up.
        const Poly delta = (offsets[i] - offsets[0]).negative() ? offsets[0] - offsets[i] : offsets[i] - offsets[0];
        if (delta.zero()) return false;  // two accesses at one address
        for (const Poly &base : offsets) {
            bool all = true;
            for (int64_t j = 0; j < k && all; ++j) all = has(base + Poly::constant(j) * delta);
            if (all) return *d = Digit{delta, Poly::constant(k)}, true;
        }
    }
    return false;
}

}  // namespace

namespace {

ir::ValueId mask_value(const ir::Op &load) { return load.has_mask ? load.operands[1] : ir::kNoValue; }

bool nonnegative(const Form &g) {
    for (const auto &term : g.terms)
        if (term.second.negative()) return false;
    return true;
}

// The loop's range, `step · k < hi - lo` for its iteration k, where the step is a positive number
// and lo and hi are the same for every program: the iteration's digit gets a range, which lets an
// order place a program id above it (a [B, T, C] scan's rows, B outermost). A constexpr step (a
// tile's) is left to loop_bounds, whose compound with the lanes keeps that step · k is a multiple
// of the step.
std::optional<Bound> trip_bound(const ir::Function &f, Affine &a, int loop, const std::vector<int> &axes) {
    if (loop < 0) return std::nullopt;
    const Form &step = a.of(f.ops[ir::loops(f).at(static_cast<size_t>(loop)).begin].operands[2]);
    int64_t c = 0;
    if (!step.affine || !step.terms.empty() || !step.offset.constant_value(&c) || c < 1) return std::nullopt;
    std::vector<Inequality> conditions;
    const std::optional<Poly> extent = loop_extent(f, a, loop, axes, &conditions);
    if (!extent || !conditions.empty()) return std::nullopt;
    Bound b;
    b.form.terms = {{{IndexVar::Iteration, loop}, step.offset}};
    b.bound = *extent;
    b.range = true;
    return b;
}

// The proof that the loads of one parameter, each a disjoint candidate, never write one element
// twice: one index map, one mask, constant distances between the loads. The orders of the index
// variables that prove it with the fewest guards are alternatives (`alternatives`: their guards;
// none where one needs none): which holds depends on the layout (a [B, T, C] scan's rows, time
// inside or outside the batch).
Proof prove_param(Affine &a, const ir::Function &f, const std::vector<int> &loads,
                  std::vector<std::vector<Inequality>> *alternatives) {
    const ir::Op &first = f.ops[loads[0]];
    const Form &addr = a.of(first.operands[0]);
    const ir::Type &t = f.type(first.operands[0]);
    int partial = -1;
    std::string repeated = repeated_lanes(determined(a, addr, &partial), t);
    if (partial >= 0) return Proof{false, {}, partial_text(f, a, addr.terms, partial)};
    if (!repeated.empty()) return Proof{false, {}, repeated};
    std::vector<Poly> offsets;
    for (int op : loads) {
        const Form &o = a.of(f.ops[op].operands[0]);
        if (o.terms != addr.terms || mask_value(f.ops[op]) != mask_value(first))
            return Proof{
                false, {}, "its loads index it differently (" + op_at(f, loads[0]) + ", " + op_at(f, op) + ")"};
        offsets.push_back(o.offset);
    }
    std::vector<Bound> bounds;
    for (const Bound &b : a.bounds(mask_value(first)))
        if (nonnegative(b.form)) bounds.push_back(b);
    for (const auto &term : addr.terms)
        if (term.first.kind == IndexVar::Iteration && term.first.n >= 0)
            if (const std::optional<Bound> trips = trip_bound(f, a, term.first.n, program_axes(f)))
                bounds.push_back(*trips);
    std::vector<Digit> digits;
    Proof inner = digits_of(f, addr, bounds, t, a, &digits);
    if (!inner.ok) return inner;
    Digit distance;
    if (loads.size() > 1 && !distance_digit(offsets, &distance))
        return Proof{false, {}, "its loads are not at constant distances from one another"};
    if (loads.size() > 1) digits.push_back(distance);
    const std::vector<Proof> proofs = every_order(digits);
    if (proofs.empty()) return Proof{false, {}, mixed_radix(digits).why};
    alternatives->clear();
    for (const Proof &p : proofs) {
        if (p.guards.size() > proofs[0].guards.size()) break;  // every_order sorts by guard count
        std::vector<Inequality> g = inner.guards;
        g.insert(g.end(), p.guards.begin(), p.guards.end());
        if (g.empty()) return alternatives->clear(), Proof{true, {}, ""};
        alternatives->push_back(g);
    }
    return Proof{true, {}, ""};
}

// ---- coverage ----------------------------------------------------------------------------------

// A symbol the launcher and the CPU oracle evaluate: a parameter or constexpr name, a number,
// `num_programs(a)`, or `num_programs(a)//d` of those.
bool run_time_symbol(const std::string &name) {
    const size_t div = name.find("//");
    if (div != std::string::npos) return run_time_symbol(name.substr(0, div)) && run_time_symbol(name.substr(div + 2));
    if (name.compare(0, 13, "num_programs(") == 0)
        return name.size() == 15 && std::isdigit(static_cast<unsigned char>(name[13])) && name[14] == ')';
    return !name.empty() && std::all_of(name.begin(), name.end(),
                                        [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The range an index variable takes every value of, for coverage: its natural one, and for a
// quotient pid // d the full groups of d programs, `num_programs(a)//d` (a partial last group writes
// more, never less; the disjointness proof has shown those writes distinct).
std::optional<Poly> cover_size(const IndexVar &v, const ir::Type &t, const Affine &a) {
    if (v.kind != IndexVar::Quotient) return natural_size(v, t, a);
    const std::string d = a.divisor(v.n)->str();
    if (!std::all_of(d.begin(), d.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        return std::nullopt;  // one symbol or number: what a run-time symbol can name
    return Poly::symbol("num_programs(" + std::to_string(v.n) + ")//" + d);
}

// `lhs >= rhs` as a guard: none when it holds for every value of the symbols' (a constant
// difference at least 0); false when it never does.
bool need(const Poly &lhs, const Poly &rhs, std::vector<Inequality> &guards) {
    int64_t d = 0;
    if (!(lhs - rhs).constant_value(&d)) return guards.push_back({lhs, rhs}), true;
    return d >= 0;
}

// The distance from a loop's start to its end, `hi - lo`, when that is loop-invariant. Where the end
// is the very minimum the compound's bound came from (`hi = tl.minimum(lo + LEN, N)`, the mask
// `keys < hi`), the distance to the bound's own operand (lo + LEN): the loop stops early at another
// operand only where the mask's bound by that operand leaves the lanes out anyway. (Under `<=` the
// lane at the operand passes the mask but no iteration reaches it: the bound is one more than the
// span, and need() refuses it.)
std::optional<Poly> loop_span(Affine &a, const ir::Op &begin, const Bound &b) {
    const Form lo = a.of(begin.operands[0]);
    const Form &hi = a.of(begin.operands[1] == b.minimum ? b.operand : begin.operands[1]);
    if (hi.affine && lo.affine && hi.terms == lo.terms) return hi.offset - lo.offset;
    return std::nullopt;
}

// How far a compound index's largest variable reaches: `c · size`, or over a loop's iterations
// (lo + step·i for i below cdiv(hi - lo, step)) as far as `hi - lo` when c is the loop's step and the
// compound starts where the loop does (the loop's start, less what of it the bound subtracts).
// False when it cannot tell.
bool reach(Affine &a, const ir::Function &f, const Bound &b, const IndexVar &v, const Poly &c, const ir::Type &t,
           Poly *span_end) {
    if (v.kind != IndexVar::Iteration) {
        std::optional<Poly> n = cover_size(v, t, a);
        return n && (*span_end = c * *n, true);
    }
    const ir::Op &begin = f.ops[a.loops()[v.n].begin];
    const Form &lo = a.of(begin.operands[0]), &step = a.of(begin.operands[2]);
    if (!lo.affine || !step.invariant() || step.offset != c || lo.offset != b.form.offset) return false;
    for (const auto &term : lo.terms)
        if (b.form.terms.count(term.first)) return false;
    const std::optional<Poly> span = loop_span(a, begin, b);
    return span && (*span_end = *span, true);
}

// One digit of a compound index: a variable (its range from cover_size or reach), or a narrower
// compound the mask bounds (`var` empty, values below `size`).
struct Part {
    Poly coeff;
    std::optional<IndexVar> var;
    Poly size;
};

bool same_bound(const Bound &x, const Bound &y) {
    return x.form.terms == y.form.terms && x.form.offset == y.form.offset && x.bound == y.bound;
}

// A compound index bounded by a mask, `form < bound`, as one digit of size bound - offset: every
// value below that is reached when its parts, by coefficient, form a full mixed radix (each
// coefficient the product of the smaller ones' sizes) whose largest reaches the bound. A part may be
// a narrower compound of `narrower` (a split range: `k*BLOCK + lane < LEN` in `s*LEN + k*BLOCK +
// lane < N`), itself reaching every value below its own bound.
bool dense_compound(Affine &a, const ir::Function &f, const Bound &b, const std::vector<Bound> &narrower,
                    const ir::Type &t, std::vector<Inequality> &guards, std::vector<Bound> *nested, std::string *why) {
    std::map<IndexVar, Poly> rest = b.form.terms;
    std::vector<Part> parts;
    for (size_t i = 0; i < narrower.size(); ++i) {
        Poly m;
        if (!factor(rest, narrower[i].form, &m)) continue;
        if (!dense_compound(a, f, narrower[i], narrower_than(narrower, i), t, guards, nested, why)) return false;
        nested->push_back(narrower[i]);
        parts.push_back({m, std::nullopt, narrower[i].bound - narrower[i].form.offset});
        for (const auto &term : narrower[i].form.terms) rest.erase(term.first);
    }
    for (const auto &[v, c] : rest) parts.push_back({c, v, Poly()});
    // Order by coefficient: constants by value, then symbolic ones as written (one at most).
    auto rank = [](const Poly &p) {
        int64_t c = 0;
        return p.constant_value(&c) ? c : INT64_MAX;
    };
    std::stable_sort(parts.begin(), parts.end(),
                     [&](const Part &x, const Part &y) { return rank(x.coeff) < rank(y.coeff); });
    Poly span = Poly::constant(1);
    for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].coeff != span) return *why = "its mask's index " + b.form.str() + " skips values", false;
        if (i + 1 == parts.size()) {
            Poly end = parts[i].coeff * parts[i].size;
            if (parts[i].var && !reach(a, f, b, *parts[i].var, parts[i].coeff, t, &end))
                return *why = "its mask's index " + b.form.str() + " may not reach its bound", false;
            return need(end, b.bound - b.form.offset, guards) ||
                   (*why = "its mask's index " + b.form.str() + " stops below its bound", false);
        }
        std::optional<Poly> n = parts[i].var ? cover_size(*parts[i].var, t, a) : parts[i].size;
        if (!n) return *why = "its mask's index " + b.form.str() + " has a variable without a range", false;
        span = span * *n;
    }
    return *why = "its mask bounds no index", false;
}

// Each division the address keeps both parts of as two digits of coverage, the remainder's (c, d)
// and the quotient's (c', Q): the mask bounds the dividend (which starts at 0) below Q · d, and it
// takes every value below that (dense_compound); its variables appear nowhere else in the address.
bool division_coverage(Affine &a, const ir::Function &f, std::map<IndexVar, Poly> &rest,
                       const std::vector<Bound> &widest, const ir::Type &t, Coverage &c, std::vector<Bound> *nested,
                       std::string *why) {
    std::set<IndexVar> taken;
    for (const IndexVar &v : owners(rest))
        if (!v.divides()) taken.insert(v);
    for (size_t k = 0; k < a.divisions().size(); ++k) {
        const Division div = a.divisions()[k];
        const IndexVar q{IndexVar::Divided, static_cast<int>(k)}, r{IndexVar::Modulo, static_cast<int>(k)};
        if (!rest.count(q) && !rest.count(r)) continue;
        if (!rest.count(q) || !rest.count(r)) return *why = partial_text(f, a, rest, static_cast<int>(k)), false;
        const std::string at = "the index divided by a loop-invariant (" + op_at(f, div.op) + ")";
        for (const IndexVar &v : owners(div.dividend.terms))
            if (!taken.insert(v).second) return *why = reread_text(f, v, div), false;
        size_t i = 0;
        while (i < widest.size() && !(widest[i].form.terms == div.dividend.terms && widest[i].form.offset.zero())) ++i;
        Poly size;
        if (i == widest.size() || !div.dividend.offset.zero() || !widest[i].bound.divide(div.divisor, &size))
            return *why = "no mask bounds " + at + " from 0 to a multiple of its divisor", false;
        if (!dense_compound(a, f, widest[i], narrower_than(widest, i), t, c.guards, nested, why)) return false;
        c.guards.insert(c.guards.end(), div.signs.begin(), div.signs.end());
        nested->push_back(widest[i]);
        c.digits.emplace_back(rest.at(r), div.divisor);
        c.digits.emplace_back(rest.at(q), size);
        rest.erase(q);
        rest.erase(r);
    }
    return true;
}

// The digits of writes through `ptrs` where `mask` holds (one index map, constant distances apart)
// when each takes every value of its range and the first address is the buffer's first element.
std::optional<Coverage> coverage(Affine &a, const ir::Function &f, const std::vector<ir::ValueId> &ptrs,
                                 ir::ValueId mask, std::string *why) {
    const Form &addr = a.of(ptrs[0]);
    const ir::Type &t = f.type(ptrs[0]);
    const std::vector<Bound> bounds = a.bounds(mask);
    if (!a.only_bounds(mask)) return *why = "its mask is not made of bounds on indices", std::nullopt;
    for (const auto &term : addr.terms)
        if ((term.first.kind == IndexVar::Quotient || term.first.kind == IndexVar::Remainder) &&
            addr.terms.count({IndexVar::Program, term.first.n}))
            return *why = "its address reads a program id both whole and split", std::nullopt;
    Coverage c;
    std::map<IndexVar, Poly> rest = addr.terms;
    const std::vector<Bound> widest = widest_first(bounds);
    std::vector<Bound> nested;  // narrower compounds counted as parts of wider ones, and dividends
    if (!division_coverage(a, f, rest, widest, t, c, &nested, why)) return std::nullopt;
    for (size_t i = 0; i < widest.size(); ++i) {
        const Bound &b = widest[i];
        if (std::any_of(nested.begin(), nested.end(), [&](const Bound &n) { return same_bound(n, b); })) continue;
        Poly m;
        if (!nonnegative(b.form) || !factor(rest, b.form, &m))
            return *why = "its mask bounds " + b.form.str() + ", which the address does not follow", std::nullopt;
        if (!dense_compound(a, f, b, narrower_than(widest, i), t, c.guards, &nested, why)) return std::nullopt;
        c.digits.emplace_back(m, b.bound - b.form.offset);
        for (const auto &term : b.form.terms) rest.erase(term.first);
    }
    for (const auto &[v, coeff] : rest) {
        std::optional<Poly> n = cover_size(v, t, a);
        if (!n) return *why = "its address moves with " + v.str() + ", which no mask bounds", std::nullopt;
        c.digits.emplace_back(coeff, *n);
    }
    std::vector<Poly> offsets;
    for (ir::ValueId p : ptrs) offsets.push_back(a.of(p).offset);
    Digit distance{Poly(), Poly::constant(1)};
    if (ptrs.size() > 1 && !distance_digit(offsets, &distance))
        return *why = "its accesses are not evenly spaced", std::nullopt;
    for (int64_t j = 0; j < static_cast<int64_t>(offsets.size()); ++j)
        if (std::find(offsets.begin(), offsets.end(), Poly::constant(j) * distance.coeff) == offsets.end())
            return *why = "its first address is not the buffer's first element", std::nullopt;
    if (ptrs.size() > 1) c.digits.emplace_back(distance.coeff, *distance.size);
    std::vector<const Poly *> spelled;
    for (const auto &[coeff, size] : c.digits) spelled.insert(spelled.end(), {&coeff, &size});
    for (const Inequality &g : c.guards) spelled.insert(spelled.end(), {&g.lhs, &g.rhs});
    for (const Poly *p : spelled)
        for (const std::string &name : p->symbols())
            if (!run_time_symbol(name))
                return *why = "a size is spelled '" + name + "', not a name the launch records", std::nullopt;
    return c;
}

// The coverage of the writes mirroring `loads` (one mask).
std::optional<Coverage> load_coverage(Affine &a, const ir::Function &f, const std::vector<int> &loads,
                                      std::string *why) {
    std::vector<ir::ValueId> ptrs;
    for (int op : loads) ptrs.push_back(f.ops[op].operands[0]);
    return coverage(a, f, ptrs, mask_value(f.ops[loads[0]]), why);
}

int severity(LoadAccess::Class c) {
    switch (c) {
    case LoadAccess::Disjoint: return 0;
    case LoadAccess::ReducedLoop: return 1;
    case LoadAccess::ReducedGrid: return 2;
    case LoadAccess::ReducedLoopGrid: return 3;
    case LoadAccess::Unproven: return 4;
    case LoadAccess::Scatter: return 5;
    }
    return 4;
}

std::vector<int> used_axes(const ir::Function &f) {
    std::set<int> axes;
    for (const ir::Op &op : f.ops)
        if (op.kind == OpKind::ProgramId) axes.insert(op.axis);
    return std::vector<int>(axes.begin(), axes.end());
}

// A scatter whose other loads are all disjoint candidates and disjoint together: `split`.
GradAccess with_split(Affine &a, const ir::Function &f, GradAccess g, const std::vector<int> &loads) {
    std::vector<int> rest;
    for (size_t i = 0; i < loads.size(); ++i) {
        if (g.loads[i].cls == LoadAccess::Scatter) continue;
        if (g.loads[i].cls != LoadAccess::Disjoint) return g;
        rest.push_back(loads[i]);
    }
    if (rest.empty()) return g;
    Proof p = prove_param(a, f, rest, &g.alternatives);
    g.split = p.ok;
    if (p.ok) g.cover = load_coverage(a, f, rest, &g.uncovered);
    return g;
}

GradAccess analyze_param(Affine &a, const ir::Function &f, const std::string &param, const std::vector<int> &loads) {
    GradAccess g;
    g.param = param;
    g.cls = LoadAccess::Disjoint;
    for (int op : loads) {
        g.loads.push_back(classify(a, f, op, used_axes(f)));
        if (severity(g.loads.back().cls) > severity(g.cls)) g.cls = g.loads.back().cls;
    }
    if (g.cls == LoadAccess::Scatter) return with_split(a, f, g, loads);
    if (g.cls != LoadAccess::Disjoint) return g;
    Proof p = prove_param(a, f, loads, &g.alternatives);
    if (p.ok) {
        g.cover = load_coverage(a, f, loads, &g.uncovered);
    } else {
        g.cls = LoadAccess::Unproven;
        g.why = p.why;
    }
    return g;
}

std::string loops_text(const ir::Function &f, const std::vector<ir::Loop> &loops, const std::vector<int> &ls) {
    std::string s;
    for (size_t i = 0; i < ls.size(); ++i) s += (i ? ", " : "") + op_at(f, loops[ls[i]].begin);
    return s;
}

std::string class_text(const ir::Function &f, const std::vector<ir::Loop> &loops, const LoadAccess &l) {
    switch (l.cls) {
    case LoadAccess::Disjoint: return "disjoint";
    case LoadAccess::ReducedGrid: return "reduced over " + join(l.over);
    case LoadAccess::ReducedLoopGrid:
        return "reduced over " + join(l.over) + ", moving with the " + loops_text(f, loops, l.loops);
    case LoadAccess::ReducedLoop: return "reduced over the iterations of the " + loops_text(f, loops, l.loops);
    case LoadAccess::Scatter: return "data-dependent scatter (atomics are inherent): " + l.why;
    case LoadAccess::Unproven: return "unproven: " + l.why;
    }
    return "";
}

}  // namespace

std::vector<GradAccess> analyze_access(const ir::Function &f, const std::vector<std::string> &wrt) {
    Affine a(f, true);
    std::vector<GradAccess> out;
    for (const std::string &p : wrt) {
        std::vector<int> loads;
        for (size_t i = 0; i < f.ops.size(); ++i)
            if (f.ops[i].kind == OpKind::Load && pointer_base(f, f.ops[i].operands[0]) == p)
                loads.push_back(static_cast<int>(i));
        if (!loads.empty()) out.push_back(analyze_param(a, f, p, loads));
    }
    return out;
}

bool writes_distinct(const ir::Function &f, Affine &a, ir::ValueId ptr, const std::vector<int> &axes,
                     std::string *why) {
    const Form &addr = a.of(ptr);
    const ir::Type &t = f.type(ptr);
    if (!addr.affine || addr.data >= 0) return *why = "its address is not affine", false;
    std::set<IndexVar> vars_of;
    for (const auto &term : addr.terms) {
        if (term.first.divides()) return *why = "its address divides an index", false;
        vars_of.insert(term.first);
    }
    *why = repeated_lanes(vars_of, t);
    if (!why->empty()) return false;
    std::map<IndexVar, Poly> vars;
    for (const auto &[v, c] : addr.terms)
        if (v.kind == IndexVar::Lane ||
            (v.kind != IndexVar::Iteration && std::find(axes.begin(), axes.end(), v.n) != axes.end()))
            vars[v] = c;
    // Programs that differ along an axis must differ in a digit: its program id, or both parts of a split.
    auto has = [&](IndexVar::Kind k, int axis) { return addr.terms.count({k, axis}) > 0; };
    for (int axis : axes)
        if (!has(IndexVar::Program, axis) && !(has(IndexVar::Quotient, axis) && has(IndexVar::Remainder, axis)))
            return *why = "programs along grid axis " + std::to_string(axis) + " may write one element", false;
    const Proof p = mixed_radix(natural_digits(vars, t, a));
    if (p.ok && p.guards.empty()) return true;
    *why = p.ok ? "its writes are distinct only if " + p.guards.front().str() : "its writes may alias: " + p.why;
    return false;
}

namespace {

// The distance digit of writes through several pointers: each has the first's index map and tile
// shape, and their offsets are a progression (distance_digit). False and `why` when not.
bool writes_apart(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs, Digit *d, std::string *why) {
    const Form &first = a.of(ptrs[0]);
    std::vector<Poly> offsets;
    for (ir::ValueId p : ptrs) {
        const Form &o = a.of(p);
        if (!o.affine || o.data >= 0 || o.terms != first.terms || !(f.type(p) == f.type(ptrs[0])))
            return *why = "its writes index it differently", false;
        offsets.push_back(o.offset);
    }
    if (!distance_digit(offsets, d)) return *why = "its writes are not at constant distances from one another", false;
    return true;
}

// Guards that step S divides `range` (a polynomial of names): per term, S divides one of its names
// (S·(n // S) >= n), or its coefficient where it has only grid sizes.
void divides_guards(const Poly &range, const std::string &s, std::vector<Inequality> *guards) {
    const Poly step = Poly::symbol(s);
    for (const auto &[names, coeff] : range.terms()) {
        auto n = std::find_if(names.begin(), names.end(), [](const std::string &x) {
            return x.rfind("num_programs(", 0) != 0 && x.find("//") == std::string::npos;
        });
        if (n != names.end() && *n == s) continue;
        const std::string name = n != names.end() ? *n : std::to_string(coeff < 0 ? -coeff : coeff);
        const Inequality g{step * Poly::symbol(name + "//" + s),
                           n != names.end() ? Poly::symbol(name) : Poly::constant(coeff < 0 ? -coeff : coeff)};
        if (std::find(guards->begin(), guards->end(), g) == guards->end()) guards->push_back(g);
    }
}

// The bounds a loop's range gives an address of type t inside it where no mask bounds it: a loop
// over [lo, hi) in tiles of a constexpr S that sizes a dim of t (`for start in range(lo, hi, S)` with
// `start + tl.arange(0, S)`) holds S · iteration + lane < hi - lo along that dim when S divides
// hi - lo, which the Triton tutorials' unmasked kernels require; `guards` get that condition. lo
// must be the same for every program; hi too, or (a causal loop's end) rise with the program id of
// an axis outside `axes` (the programs a transposed kernel sums over), then its value at the last
// program bounds every program's (loop_extent). `range`, where given, replaces hi - lo.
std::vector<Bound> loop_bounds(const ir::Function &f, Affine &a, int loop, const std::vector<int> &axes,
                               const ir::Type &t, const Poly *range, std::vector<Inequality> *guards) {
    if (loop < 0) return {};
    const ir::Op &begin = f.ops[ir::loops(f).at(static_cast<size_t>(loop)).begin];
    const ir::Op &step = f.def(begin.operands[2]);
    const std::optional<Poly> named = Poly::parse(step.name);  // one name: `N//S` spells a guard's symbol
    if (step.kind != OpKind::Const || !named || *named != Poly::symbol(step.name) || !sizes_a_tile(f, step.name) ||
        !a.of(begin.operands[0]).invariant())
        return {};
    std::vector<Inequality> conditions;
    std::optional<Poly> extent = range ? std::optional<Poly>(*range) : loop_extent(f, a, loop, axes, &conditions);
    if (!extent) return {};
    divides_guards(*extent, step.name, &conditions);
    guards->insert(guards->end(), conditions.begin(), conditions.end());
    const Poly c = Poly::symbol(step.name);
    std::vector<Bound> out;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d].expr != step.name) continue;
        Bound b;
        b.form.terms = {{{IndexVar::Iteration, loop}, c}, {{IndexVar::Lane, static_cast<int>(d)}, Poly::constant(1)}};
        b.bound = *extent;
        out.push_back(b);
    }
    return out;
}

// The proofs over the digits of `addr` with `bounds` (mask bounds and loop_bounds), `inner` the
// guards of the digits themselves; empty and `why` set when there is none.
std::vector<Proof> distinct_proofs(const ir::Function &f, Affine &a, const Form &addr, const std::vector<Bound> &bounds,
                                   const ir::Type &t, const std::vector<Digit> &extra, Proof *inner, std::string *why) {
    std::vector<Digit> digits;
    *inner = digits_of(f, addr, bounds, t, a, &digits);
    if (!inner->ok) return *why = inner->why, std::vector<Proof>{};
    digits.insert(digits.end(), extra.begin(), extra.end());
    std::vector<Proof> proofs = every_order(digits);
    if (proofs.empty()) *why = "its writes may alias: " + mixed_radix(digits).why;
    return proofs;
}

}  // namespace

namespace {

// The index variables `addr` (of the first of `ptrs`) determines, and the distance digit of several
// pointers; false and `why` where the pointers index differently, a division keeps one part, or
// lanes repeat an address.
bool address_vars(const ir::Function &f, Affine &a, const Form &addr, const std::vector<ir::ValueId> &ptrs,
                  Digit *apart, std::set<IndexVar> *vars, std::string *why) {
    if (ptrs.size() > 1 && !writes_apart(f, a, ptrs, apart, why)) return false;
    int partial = -1;
    *vars = determined(a, addr, &partial);
    if (partial >= 0) return *why = partial_text(f, a, addr.terms, partial), false;
    *why = repeated_lanes(*vars, f.type(ptrs[0]));
    return why->empty();
}

}  // namespace

bool writes_distinct(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs, ir::ValueId mask,
                     const std::vector<int> &axes, int loop, std::vector<std::vector<Inequality>> *alternatives,
                     std::string *why, const Poly *range) {
    const ir::ValueId ptr = ptrs.at(0);
    Form addr = a.of(ptr);
    const ir::Type &t = f.type(ptr);
    if (!addr.affine || addr.data >= 0) return *why = "its address is not affine", false;
    Digit apart;
    std::set<IndexVar> vars;
    if (!address_vars(f, a, addr, ptrs, &apart, &vars, why)) return false;
    auto has = [&](IndexVar::Kind k, int axis) { return vars.count({k, axis}) > 0; };
    for (int axis : axes)
        if (!has(IndexVar::Program, axis) && !(has(IndexVar::Quotient, axis) && has(IndexVar::Remainder, axis)))
            return *why = "programs along grid axis " + std::to_string(axis) + " may write one element", false;
    if (loop >= 0 && !has(IndexVar::Iteration, loop)) return *why = "every iteration writes one element", false;
    for (const IndexVar &v : vars) {
        const bool ours =
            v.kind == IndexVar::Lane ||
            (v.kind == IndexVar::Iteration ? v.n == loop : std::find(axes.begin(), axes.end(), v.n) != axes.end());
        if (!ours) return *why = "its address moves with " + v.str(), false;
    }
    std::vector<Bound> bounds;
    for (const Bound &b : a.bounds(mask))
        if (nonnegative(b.form)) bounds.push_back(b);
    std::vector<Digit> extra;
    if (ptrs.size() > 1) extra.push_back(apart);
    alternatives->clear();
    auto add = [&](const Proof &inner, const std::vector<Proof> &proofs, const std::vector<Inequality> &first) {
        for (const Proof &p : proofs) {
            std::vector<Inequality> g = first;
            g.insert(g.end(), inner.guards.begin(), inner.guards.end());
            g.insert(g.end(), p.guards.begin(), p.guards.end());
            if (std::find(alternatives->begin(), alternatives->end(), g) == alternatives->end())
                alternatives->push_back(g);
        }
    };
    const std::vector<Bound> masked = bounds;
    if (const std::optional<Bound> trips = trip_bound(f, a, loop, axes)) bounds.push_back(*trips);
    Proof inner;
    add(inner, distinct_proofs(f, a, addr, bounds, t, extra, &inner, why), {});
    // Where no mask bounds the loop's tiles on their own (no mask, or only a bound on a wider
    // compound: a descriptor's rows), the loop's range gives more alternatives.
    std::vector<Inequality> divides;
    const bool bounded = std::any_of(masked.begin(), masked.end(), [&](const Bound &b) {
        return b.form.terms.count({IndexVar::Iteration, loop}) &&
               std::all_of(b.form.terms.begin(), b.form.terms.end(), [&](const auto &term) {
                   return term.first.kind == IndexVar::Lane || term.first == IndexVar{IndexVar::Iteration, loop};
               });
    });
    const std::vector<Bound> tiles = bounded ? std::vector<Bound>{} : loop_bounds(f, a, loop, axes, t, range, &divides);
    if (!tiles.empty()) {
        bounds.insert(bounds.end(), tiles.begin(), tiles.end());
        std::string unproved;
        const std::vector<Proof> proofs = distinct_proofs(f, a, addr, bounds, t, extra, &inner, &unproved);
        add(inner, proofs, divides);
    }
    return !alternatives->empty();
}

namespace {

bool program_var(const IndexVar &v) {
    return v.kind == IndexVar::Program || v.kind == IndexVar::Quotient || v.kind == IndexVar::Remainder;
}

// `addr` with the program ids one program holds fixed taken out (a constant offset within it), but
// for those a bound ties to a lane or an iteration: `pid*BLOCK + lane < N` keeps pid, one digit.
Form within_program(const Form &addr, const std::vector<Bound> &bounds) {
    std::set<IndexVar> tied;
    for (const Bound &b : bounds) {
        const bool moves = std::any_of(b.form.terms.begin(), b.form.terms.end(),
                                       [](const auto &term) { return !program_var(term.first); });
        for (const auto &term : b.form.terms)
            if (moves && program_var(term.first)) tied.insert(term.first);
    }
    Form out = addr;
    for (auto it = out.terms.begin(); it != out.terms.end();)
        it = program_var(it->first) && !tied.count(it->first) ? out.terms.erase(it) : std::next(it);
    return out;
}

// The subsets of `bounds` that keep every bound naming no program id: a compound of a program id
// and a lane is injective over one program (`pid*BLOCK + lane < N`), one of a program id and a loop
// whose range moves with it (`pid*CHUNK + k < T`) only over one program, and its proof over all of
// them fails; which to keep is tried. At most 16 subsets (the first four such bounds).
std::vector<std::vector<Bound>> program_bound_choices(const std::vector<Bound> &bounds) {
    std::vector<Bound> fixed, optional;
    for (const Bound &b : bounds)
        (std::any_of(b.form.terms.begin(), b.form.terms.end(), [](const auto &term) { return program_var(term.first); })
             ? optional
             : fixed)
            .push_back(b);
    const size_t n = std::min<size_t>(optional.size(), 4);
    std::vector<std::vector<Bound>> out;
    for (size_t mask = 0; mask < (size_t{1} << n); ++mask) {
        std::vector<Bound> bs = fixed;
        for (size_t i = 0; i < n; ++i)
            if (mask & (size_t{1} << i)) bs.push_back(optional[i]);
        out.push_back(std::move(bs));
    }
    return out;
}

}  // namespace

namespace {

// Whether scalar `v` is the same throughout one program: a parameter, computed outside every loop,
// or inside one from such scalars, program ids and constants only (no load, no loop variable or
// carried value there).
bool program_constant(const ir::Function &f, ir::ValueId v, const std::vector<bool> &outside, int depth = 0) {
    if (!f.type(v).shape.empty() || depth > 16) return false;
    const int def = f.values.at(v).def_op;
    if (def < 0 || outside[static_cast<size_t>(def)]) return true;
    const ir::Op &op = f.ops[static_cast<size_t>(def)];
    if (op.kind == OpKind::Load || op.kind == OpKind::ForBegin || op.kind == OpKind::LoopArg ||
        op.kind == OpKind::LoopResult)
        return false;
    return std::all_of(op.operands.begin(), op.operands.end(),
                       [&](ir::ValueId o) { return program_constant(f, o, outside, depth + 1); });
}

// The part of address `v` that moves within one program: scalars the same throughout it
// (program_constant: a row from program ids through a division the affine forms do not follow, or
// loaded before the loops) are left out where the rest (sums of them and affine tiles) is affine;
// nullopt where it is not.
std::optional<Form> moving_part(const ir::Function &f, Affine &a, ir::ValueId v, const std::vector<bool> &outside) {
    const Form &whole = a.of(v);
    if (whole.affine && whole.data < 0) return whole;
    const int def = f.values.at(v).def_op;
    if (def < 0) return std::nullopt;
    const ir::Op &op = f.ops[static_cast<size_t>(def)];
    if (program_constant(f, v, outside)) return Form{};
    if (op.kind == OpKind::Broadcast && f.type(op.operands[0]).shape.empty()) {
        std::optional<Form> s = moving_part(f, a, op.operands[0], outside);
        if (s && s->terms.empty()) return Form{};
        return std::nullopt;
    }
    if (op.kind != OpKind::AddPtr && op.kind != OpKind::Add) return std::nullopt;
    std::optional<Form> l = moving_part(f, a, op.operands[0], outside), r = moving_part(f, a, op.operands[1], outside);
    if (!l || !r) return std::nullopt;
    for (const auto &[var, c] : r->terms) {
        Poly sum = l->terms.count(var) ? l->terms.at(var) + c : c;
        if (sum == Poly())
            l->terms.erase(var);
        else
            l->terms[var] = sum;
    }
    l->offset = l->offset + r->offset;
    return l;
}

}  // namespace

bool writes_once_per_program(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs, ir::ValueId mask,
                             const std::vector<int> &loops, std::vector<std::vector<Inequality>> *alternatives,
                             std::string *why) {
    alternatives->clear();
    const std::optional<Form> moving = moving_part(f, a, ptrs.at(0), top_level(f));
    if (!moving) return *why = "its address is not affine", false;
    const Form &addr = *moving;
    const ir::Type &t = f.type(ptrs[0]);
    Digit apart;
    std::set<IndexVar> vars;
    if (!address_vars(f, a, addr, ptrs, &apart, &vars, why)) return false;
    for (int loop : loops)
        if (!vars.count({IndexVar::Iteration, loop}))
            return *why = "every iteration of the " + op_at(f, a.loops()[static_cast<size_t>(loop)].begin) +
                          " writes the same elements",
                   false;
    for (const IndexVar &v : vars)
        if (v.kind == IndexVar::Iteration && std::find(loops.begin(), loops.end(), v.n) == loops.end())
            return *why = "its address moves with " + v.str() + ", a loop that does not hold it", false;
    std::vector<Bound> bounds;
    for (const Bound &b : a.bounds(mask))
        if (nonnegative(b.form)) bounds.push_back(b);
    for (int loop : loops)
        if (const std::optional<Bound> trips = trip_bound(f, a, loop, {})) bounds.push_back(*trips);
    std::vector<Digit> extra;
    if (ptrs.size() > 1) extra.push_back(apart);
    std::string unproved;
    for (const std::vector<Bound> &bs : program_bound_choices(bounds)) {
        Proof inner;
        for (const Proof &p : distinct_proofs(f, a, within_program(addr, bs), bs, t, extra, &inner, &unproved)) {
            std::vector<Inequality> g = inner.guards;
            g.insert(g.end(), p.guards.begin(), p.guards.end());
            if (g.empty()) return alternatives->clear(), true;
            if (std::find(alternatives->begin(), alternatives->end(), g) == alternatives->end())
                alternatives->push_back(g);
        }
        if (why->empty()) *why = unproved;
    }
    if (!alternatives->empty()) why->clear();
    return !alternatives->empty();
}

std::optional<Poly> loop_extent(const ir::Function &f, Affine &a, int loop, const std::vector<int> &axes,
                                std::vector<Inequality> *guards) {
    const ir::Op &begin = f.ops[ir::loops(f).at(static_cast<size_t>(loop)).begin];
    const Form &lo = a.of(begin.operands[0]), &hi = a.of(begin.operands[1]);
    if (!lo.affine || !hi.affine) return std::nullopt;
    Poly extent = hi.offset - lo.offset;
    for (const auto &[v, c] : hi.terms) {
        if (v.kind != IndexVar::Program || std::find(axes.begin(), axes.end(), v.n) != axes.end()) return std::nullopt;
        int64_t k = 0;
        if (!(c.constant_value(&k) && k >= 0) && !(c.symbols().size() == 1 && sizes_a_tile(f, *c.symbols().begin())))
            guards->push_back({c, Poly::constant(0)});
        extent = extent + c * (Poly::symbol("num_programs(" + std::to_string(v.n) + ")") - Poly::constant(1));
    }
    for (const auto &[v, c] : lo.terms)  // a start that rises (the caller's condition): program 0's is the least
        if (v.kind != IndexVar::Program || std::find(axes.begin(), axes.end(), v.n) != axes.end()) return std::nullopt;
    return extent;
}

std::optional<Coverage> write_coverage(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs,
                                       ir::ValueId mask, std::string *why) {
    Digit apart;  // coverage() reads the first pointer's index map: the others must share it
    if (ptrs.size() > 1 && !writes_apart(f, a, ptrs, &apart, why)) return std::nullopt;
    return coverage(a, f, ptrs, mask, why);
}

namespace {

// "(1, V), (stride_row, num_programs(0)) where BLOCK >= V".
std::string digits_text(const Coverage &c) {
    std::string s;
    for (size_t i = 0; i < c.digits.size(); ++i)
        s += (i ? ", (" : "(") + c.digits[i].first.str() + ", " + c.digits[i].second.str() + ")";
    for (size_t i = 0; i < c.guards.size(); ++i) s += (i ? " and " : " where ") + c.guards[i].str();
    return s;
}

}  // namespace

std::string print(const ir::Function &f, const std::vector<GradAccess> &accesses) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    std::string s;
    for (const GradAccess &g : accesses) {
        LoadAccess whole;
        whole.cls = g.cls;
        whole.why = g.why;
        for (const LoadAccess &l : g.loads)
            if (l.cls == g.cls && whole.why.empty()) whole = l;
        std::string verdict = g.cls == LoadAccess::Disjoint ? "disjoint: plain stores" : class_text(f, loops, whole);
        if (g.split)
            verdict +=
                "; its other loads are disjoint: plain stores, then the scatter's atomic adds in a kernel of their own";
        for (size_t k = 0; k < g.alternatives.size(); ++k)
            for (size_t i = 0; i < g.alternatives[k].size(); ++i)
                verdict += (i ? " and " : k ? " or if " : " if ") + g.alternatives[k][i].str();
        if (g.cover) verdict += "; no zero fill where the buffer's strides and sizes are " + digits_text(*g.cover);
        if (!g.uncovered.empty()) verdict += "; zero fill: " + g.uncovered;
        s += "d" + g.param + ": " + verdict + "\n";
        for (const LoadAccess &l : g.loads) s += "  " + op_at(f, l.op) + ": " + class_text(f, loops, l) + "\n";
    }
    return s;
}

}  // namespace tad::passes
