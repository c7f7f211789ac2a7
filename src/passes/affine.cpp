#include "passes/affine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "passes/passes.h"

namespace tad::passes {

bool specialized_expression(const ir::Function &f, const std::string &name) {
    const std::set<std::string> ids = ir::spelled_names(name);
    if (ids.empty() || ids.count(name)) return false;
    return std::all_of(ids.begin(), ids.end(), [&](const std::string &id) {
        return std::find(f.specialized.begin(), f.specialized.end(), id) != f.specialized.end();
    });
}

namespace {

using ir::OpKind;

void merge_deps(Form &into, const Form &from) {
    into.axes.insert(from.axes.begin(), from.axes.end());
    into.loops.insert(from.loops.begin(), from.loops.end());
    if (into.data < 0) into.data = from.data;
}

Form non_affine(int blocker) {
    Form r;
    r.affine = false;
    r.blocker = blocker;
    return r;
}

Form scale(const Form &a, const Poly &p) {
    Form r = a;
    r.terms.clear();
    for (const auto &[v, c] : a.terms)
        if (!(c * p).zero()) r.terms[v] = c * p;
    r.offset = a.offset * p;
    return r;
}

// a + b; non-affine when either is, with the first blocker.
Form add(const Form &a, const Form &b) {
    Form r = a;
    merge_deps(r, b);
    if (!a.affine || !b.affine) {
        r.affine = false;
        r.terms.clear();
        r.blocker = a.blocker >= 0 ? a.blocker : b.blocker;
        return r;
    }
    for (const auto &[v, c] : b.terms) {
        Poly sum = r.terms.count(v) ? r.terms[v] + c : c;
        if (sum.zero())
            r.terms.erase(v);
        else
            r.terms[v] = sum;
    }
    r.offset = a.offset + b.offset;
    return r;
}

// v, or the scalar that v broadcasts.
ir::ValueId unsplat(const ir::Function &f, ir::ValueId v) {
    const ir::Op &op = f.def(v);
    return op.kind == OpKind::Broadcast && f.type(op.operands[0]).shape.empty() ? op.operands[0] : v;
}

// Whether v is (a broadcast of) tl.minimum of two values of one type: its operands, or nothing.
std::vector<ir::ValueId> min_operands(const ir::Function &f, ir::ValueId v) {
    const ir::Op &m = f.def(unsplat(f, v));
    if (m.kind != OpKind::Minimum || !(f.type(m.operands[0]) == f.type(m.operands[1]))) return {};
    return {m.operands[0], m.operands[1]};
}

// amount · (the iteration count of loop l).
Form per_iteration(int l, const Poly &amount) {
    Form r;
    r.terms[{IndexVar::Iteration, l}] = amount;
    return r;
}

}  // namespace

// Lanes re-indexed as an op that changes a tile's rank moves them: in the form's terms, and in the
// dividends of its divisions (each then a division of its own, in the new coordinates).
Form Affine::relane(const Form &in, int (*map)(int, int), int arg) {
    Form r = in;
    r.terms.clear();
    std::map<int, int> moved;  // division -> the division of its relaned dividend
    for (const auto &[v, c] : in.terms) {
        IndexVar w = v;
        if (v.kind == IndexVar::Lane) w.n = map(v.n, arg);
        if (v.divides() && !moved.count(v.n)) {
            Division d = divisions_[static_cast<size_t>(v.n)];
            d.dividend = relane(d.dividend, map, arg);
            moved[v.n] = division_of(d);
        }
        if (v.divides()) w.n = moved[v.n];
        r.terms[w] = c;
    }
    return r;
}

Form Affine::broadcast_lanes(const Form &in, const ir::Type &from, const ir::Type &to) {
    return relane(
        in, [](int n, int shift) { return n + shift; }, static_cast<int>(to.rank() - from.rank()));
}

Form Affine::expand_lanes(const Form &in, int axis) {
    return relane(
        in, [](int n, int at) { return n >= at ? n + 1 : n; }, axis);
}

// Division::signs: the run-time symbols of a dividend at least 0, a symbolic divisor at least 1. A
// grid's size is at least 1, and so is a constexpr that sizes a tile (a block size). Another
// constexpr's value is fixed only where the kernel is specialized on it: one backward serves every
// value of a constexpr it reads only by name (an offset `i + OFF`), negative ones too.
std::vector<Inequality> Affine::signs(const Form &dividend, const Poly &divisor) const {
    auto known = [&](const std::string &name) {
        if (name.compare(0, 13, "num_programs(") == 0 && name.find("//") == std::string::npos) return true;
        const bool specialized = std::find(f_.specialized.begin(), f_.specialized.end(), name) != f_.specialized.end();
        for (const ir::Constexpr &c : f_.constexprs)
            if (c.name == name)
                return !c.literal.empty() && std::isdigit(static_cast<unsigned char>(c.literal[0])) &&
                       (specialized || sizes_a_tile(f_, name));
        return false;
    };
    std::set<std::string> names = dividend.offset.symbols();
    for (const auto &term : dividend.terms)
        for (const std::string &n : term.second.symbols()) names.insert(n);
    std::vector<Inequality> out;
    for (const std::string &n : names)
        if (!known(n)) out.push_back({Poly::symbol(n), Poly::constant(0)});
    int64_t c = 0;
    if (!divisor.constant_value(&c) && !(divisor.symbols().size() == 1 && known(*divisor.symbols().begin())))
        out.push_back({divisor, Poly::constant(1)});
    return out;
}

int Affine::division_of(const Division &d) {
    for (size_t k = 0; k < divisions_.size(); ++k)
        if (divisions_[k].dividend.terms == d.dividend.terms && divisions_[k].dividend.offset == d.dividend.offset &&
            divisions_[k].divisor == d.divisor)
            return static_cast<int>(k);
    divisions_.push_back(d);
    return static_cast<int>(divisions_.size() - 1);
}

Affine::Affine(const ir::Function &f, bool dividing) : f_(f), loops_(ir::loops(f)), dividing_(dividing) {}

const Form &Affine::of(ir::ValueId v) {
    auto it = memo_.find(v);
    if (it != memo_.end()) return it->second;
    Form r = compute(v);
    return memo_[v] = r;
}

Form Affine::compute(ir::ValueId v) {
    const int index = f_.values[v].def_op;
    const ir::Op &op = f_.ops[index];
    Form r;
    switch (op.kind) {
    case OpKind::Param:
        if (f_.params[op.ival].kind == ir::ParamKind::Float) return non_affine(index);
        if (f_.params[op.ival].kind == ir::ParamKind::Int) r.offset = Poly::symbol(op.name);
        return r;  // a pointer parameter: offset 0 from itself
    case OpKind::Const:
        if (!op.name.empty() && !specialized_expression(f_, op.name))
            return r.offset = Poly::parse(op.name).value_or(Poly::symbol(op.name)), r;
        if (op.fval != std::floor(op.fval)) return non_affine(index);
        return r.offset = Poly::constant(static_cast<int64_t>(op.fval)), r;
    case OpKind::ProgramId:
        r.terms[{IndexVar::Program, op.axis}] = Poly::constant(1);
        r.axes.insert(op.axis);
        return r;
    case OpKind::NumPrograms: return r.offset = Poly::symbol("num_programs(" + std::to_string(op.axis) + ")"), r;
    case OpKind::Arange:
        if (op.ival2 - op.ival > 1) r.terms[{IndexVar::Lane, 0}] = Poly::constant(1);
        return r.offset = Poly::constant(op.ival), r;
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Trans: return shape_op(op, f_.type(v));
    case OpKind::ForBegin: return loop_var(op, index);
    case OpKind::LoopArg: return carried(op, index);
    case OpKind::Load:
        r = non_affine(index);
        r.data = index;
        return r;
    default: return arith(op, index);
    }
}

Form Affine::shape_op(const ir::Op &op, const ir::Type &t) {
    const Form &a = of(op.operands[0]);
    if (op.kind == OpKind::Broadcast) return broadcast_lanes(a, f_.type(op.operands[0]), t);
    if (op.kind == OpKind::ExpandDims) return expand_lanes(a, op.axis);
    return relane(
        a, [](int n, int) { return 1 - n; }, 0);  // trans of a 2-D tile
}

Form Affine::arith(const ir::Op &op, int index) {
    switch (op.kind) {
    case OpKind::Add:
    case OpKind::AddPtr: return add(of(op.operands[0]), of(op.operands[1]));
    case OpKind::Sub: return add(of(op.operands[0]), scale(of(op.operands[1]), Poly::constant(-1)));
    case OpKind::Neg: return scale(of(op.operands[0]), Poly::constant(-1));
    case OpKind::Mul: {
        const Form &a = of(op.operands[0]), &b = of(op.operands[1]);
        if (b.invariant()) return scale(a, b.offset);
        if (a.invariant()) return scale(b, a.offset);
        break;
    }
    case OpKind::Div:
    case OpKind::Mod: return split(op, index);
    case OpKind::Cast:
        if (!f_.type(op.result).is_float() && !f_.type(op.operands[0]).is_float()) return of(op.operands[0]);
        break;
    default: break;
    }
    return opaque(op, index);
}

Form Affine::opaque(const ir::Op &op, int index) {
    Form r = non_affine(index);
    for (ir::ValueId o : op.operands) {
        const Form &a = of(o);
        merge_deps(r, a);
        if (a.blocker >= 0 && r.blocker == index) r.blocker = a.blocker;
    }
    return r;
}

namespace {

// A non-negative number or one symbol, by name ("" otherwise): the operands a quotient symbol holds.
std::string plain_name(const Poly &p) {
    int64_t c = 0;
    if (p.constant_value(&c)) return c >= 0 ? std::to_string(c) : "";
    const std::set<std::string> names = p.symbols();
    if (names.size() != 1 || p != Poly::symbol(*names.begin())) return "";
    return names.begin()->find("//") == std::string::npos ? *names.begin() : "";
}

// Whether no term of p has a coefficient below 0: p is never below 0 (its symbols are sizes, strides
// and counts).
bool no_negative_term(const Poly &p) {
    for (const auto &term : p.terms())
        if (term.second < 0) return false;
    return true;
}

}  // namespace

// n // d of two loop-invariant names (`C // G`): the symbol "n//d", which the launcher and the CPU
// oracle evaluate like any recorded scalar, truncating toward zero as the kernel divides.
Form Affine::quotient(const ir::Op &op, int index) {
    const Form &x = of(op.operands[0]), &d = of(op.operands[1]);
    const std::string n = plain_name(x.offset), m = plain_name(d.offset);
    if (n.empty() || m.empty() || m == "0") return opaque(op, index);
    Form r;
    int64_t a = 0, b = 0;
    r.offset =
        x.offset.constant_value(&a) && d.offset.constant_value(&b) ? Poly::constant(a / b) : Poly::symbol(n + "//" + m);
    merge_deps(r, x);
    merge_deps(r, d);
    return r;
}

// pid // d and pid % d, d loop-invariant and the same for every split of that axis.
Form Affine::split(const ir::Op &op, int index) {
    const Form &x = of(op.operands[0]), &d = of(op.operands[1]);
    if (op.kind == OpKind::Div && x.invariant() && d.invariant() && !f_.type(op.result).is_float())
        return quotient(op, index);
    const bool pid = x.affine && x.offset.zero() && x.terms.size() == 1 &&
                     x.terms.begin()->first.kind == IndexVar::Program && x.terms.begin()->second == Poly::constant(1);
    int64_t c = 0;
    if (!pid || !d.invariant() || d.offset.zero() || (d.offset.constant_value(&c) && c < 1) ||
        f_.type(op.result).is_float())
        return divided(op, index);
    const int axis = x.terms.begin()->first.n;
    auto it = divisors_.find(axis);
    if (it != divisors_.end() && it->second != d.offset) return divided(op, index);
    divisors_[axis] = d.offset;
    Form r;
    r.terms[{op.kind == OpKind::Div ? IndexVar::Quotient : IndexVar::Remainder, axis}] = Poly::constant(1);
    r.axes = x.axes;
    merge_deps(r, d);
    return r;
}

// x // d and x % d of a compound index x that is never below 0 (so that Triton's truncating division
// is the floor and the remainder is in [0, d)), for a loop-invariant d that is no number below 1;
// one Division per (x, d).
Form Affine::divided(const ir::Op &op, int index) {
    const Form &x = of(op.operands[0]), &d = of(op.operands[1]);
    if (!dividing_ || f_.type(op.result).is_float() || !x.affine || x.data >= 0 || x.terms.empty() || !d.invariant() ||
        d.data >= 0 || !no_negative_term(d.offset) || !no_negative_term(x.offset))
        return opaque(op, index);
    int64_t c = 0;
    if (d.offset.zero() || (d.offset.constant_value(&c) && c < 1)) return opaque(op, index);
    for (const auto &[v, coeff] : x.terms)
        if (!no_negative_term(coeff) ||
            (v.kind != IndexVar::Program && v.kind != IndexVar::Lane && v.kind != IndexVar::Iteration))
            return opaque(op, index);
    Form dividend;
    dividend.terms = x.terms;
    dividend.offset = x.offset;
    Division div{dividend, d.offset, index, signs(dividend, d.offset), std::nullopt};
    iterator_end(op.operands[0], &div);
    Form r;
    r.terms[{op.kind == OpKind::Div ? IndexVar::Divided : IndexVar::Modulo, division_of(div)}] = Poly::constant(1);
    merge_deps(r, x);
    merge_deps(r, d);
    return r;
}

namespace {

// Whether p is a grid's size along an axis, `num_programs(a)` (at least 1; not a share of it,
// `num_programs(a)//d`, which may be 0).
bool grid_size(const Poly &p) {
    const std::set<std::string> names = p.symbols();
    return names.size() == 1 && p == Poly::symbol(*names.begin()) && names.begin()->rfind("num_programs(", 0) == 0 &&
           names.begin()->find("//") == std::string::npos;
}

}  // namespace

// Division::below where x is a loop's iterator: its end, where that is the same for every program
// and lane, and the step is positive (a number at least 1, a grid size, or else a guard).
void Affine::iterator_end(ir::ValueId x, Division *div) {
    const ir::Op &begin = f_.def(x);
    if (begin.kind != OpKind::ForBegin) return;
    const Form &hi = of(begin.operands[1]), &step = of(begin.operands[2]);
    if (!hi.invariant() || hi.data >= 0 || !step.invariant() || step.data >= 0) return;
    int64_t c = 0;
    if (step.offset.constant_value(&c)) {
        if (c < 1) return;
    } else if (!grid_size(step.offset)) {
        div->signs.push_back({step.offset, Poly::constant(1)});
    }
    div->below = hi.offset;
}

const Poly *Affine::divisor(int axis) const {
    auto it = divisors_.find(axis);
    return it == divisors_.end() ? nullptr : &it->second;
}

// lo + step · iteration, for a loop-invariant step.
Form Affine::loop_var(const ir::Op &op, int index) {
    const int l = loop_begun_at(index);
    const Form lo = of(op.operands[0]), step = of(op.operands[2]);
    Form r = step.invariant() ? add(lo, per_iteration(l, step.offset)) : opaque(op, index);
    merge_deps(r, step);
    r.loops.insert(l);
    return r;
}

// init + amount · iteration, when every iteration adds the same loop-invariant amount: the yield's
// form, computed with the carried value as a placeholder variable, is placeholder + amount.
Form Affine::carried(const ir::Op &op, int index) {
    int slot = 0;
    const int l = loop_of_arg(index, &slot);
    const IndexVar placeholder{IndexVar::Iteration, -1 - l};
    Affine scratch(*this);
    Form self;
    self.terms[placeholder] = Poly::constant(1);
    scratch.memo_[op.result] = self;
    Form step = scratch.of(f_.ops[loops_[l].end].operands[slot]);
    const bool advances = step.affine && step.terms.size() == 1 && step.terms.count(placeholder) &&
                          step.terms[placeholder] == Poly::constant(1);
    Form r = of(op.operands[0]);
    r = advances ? add(r, per_iteration(l, step.offset)) : add(non_affine(index), r);
    merge_deps(r, step);
    r.loops.insert(l);
    return r;
}

std::vector<Bound> Affine::bounds(ir::ValueId mask) {
    if (mask == ir::kNoValue) return {};
    const ir::Op &op = f_.def(mask);
    std::vector<Bound> out;
    // a < b0 + Σ c·v is a - Σ c·v < b0: a bound that moves with an index (`rk < K - k*BLOCK_K`)
    // bounds a compound index (`k*BLOCK_K + rk < K`).
    // a < min(b, c) is a < b and a < c: the bound of a split of a range (`keys < min(lo + LEN, N)`).
    std::function<void(ir::ValueId, ir::ValueId, int64_t, ir::ValueId)> conjunct =
        [&](ir::ValueId lhs, ir::ValueId rhs, int64_t slack, ir::ValueId minimum) {
            const std::vector<ir::ValueId> mins = min_operands(f_, rhs);
            for (ir::ValueId m : mins) conjunct(lhs, m, slack, minimum == ir::kNoValue ? unsplat(f_, rhs) : minimum);
            if (!mins.empty()) return;
            const Form a = of(lhs);
            Form b = of(rhs);
            if (!a.affine || !b.affine) return;
            const Poly b0 = b.offset;
            b.offset = Poly();
            out.push_back({add(a, scale(b, Poly::constant(-1))), b0 + Poly::constant(slack), minimum,
                           minimum == ir::kNoValue ? ir::kNoValue : unsplat(f_, rhs)});
        };
    switch (op.kind) {
    case OpKind::And:
        out = bounds(op.operands[0]);
        for (Bound &b : bounds(op.operands[1])) out.push_back(b);
        break;
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
        for (Bound &b : bounds(op.operands[0]))
            out.push_back({op.kind == OpKind::ExpandDims
                               ? expand_lanes(b.form, op.axis)
                               : broadcast_lanes(b.form, f_.type(op.operands[0]), f_.type(mask)),
                           b.bound, b.minimum, b.operand});
        break;
    case OpKind::Lt:
    case OpKind::Le: conjunct(op.operands[0], op.operands[1], op.kind == OpKind::Le ? 1 : 0, ir::kNoValue); break;
    case OpKind::Gt:
    case OpKind::Ge: conjunct(op.operands[1], op.operands[0], op.kind == OpKind::Ge ? 1 : 0, ir::kNoValue); break;
    default: break;
    }
    return out;
}

namespace {

// The leaves of a bound's `min` (bounds() counts each as a conjunct).
size_t min_leaves(const ir::Function &f, ir::ValueId v) {
    size_t n = 0;
    for (ir::ValueId m : min_operands(f, v)) n += min_leaves(f, m);
    return n ? n : 1;
}

size_t conjuncts(const ir::Function &f, ir::ValueId mask) {
    const ir::Op &op = f.def(mask);
    if (op.kind == OpKind::And) return conjuncts(f, op.operands[0]) + conjuncts(f, op.operands[1]);
    if (op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims) return conjuncts(f, op.operands[0]);
    if (op.kind == OpKind::Lt || op.kind == OpKind::Le) return min_leaves(f, op.operands[1]);
    if (op.kind == OpKind::Gt || op.kind == OpKind::Ge) return min_leaves(f, op.operands[0]);
    return 1;
}

}  // namespace

bool Affine::only_bounds(ir::ValueId mask) {
    return mask == ir::kNoValue || bounds(mask).size() == conjuncts(f_, mask);
}

std::vector<int> Affine::loops_around(int op) const {
    std::vector<int> out;
    for (size_t l = 0; l < loops_.size(); ++l)
        if (loops_[l].begin < op && op < loops_[l].end) out.push_back(static_cast<int>(l));
    return out;
}

int Affine::loop_begun_at(int op) const {
    for (size_t l = 0; l < loops_.size(); ++l)
        if (loops_[l].begin == op) return static_cast<int>(l);
    return -1;
}

int Affine::loop_of_arg(int op, int *slot) const {
    for (size_t l = 0; l < loops_.size(); ++l)
        for (size_t s = 0; s < loops_[l].args.size(); ++s)
            if (loops_[l].args[s] == op) return *slot = static_cast<int>(s), static_cast<int>(l);
    return -1;
}

}  // namespace tad::passes
