// Operators: constant folding, materializing Python scalars, type promotion and broadcasting.
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

bool is_int_like(const CV &c) { return c.kind == CV::Int || c.kind == CV::Bool; }
bool is_scalar_number(const CV &c) { return is_int_like(c) || c.kind == CV::Float; }
double as_double(const CV &c) { return c.kind == CV::Float ? c.f : static_cast<double>(c.i); }

// Python's floor division (rounds toward negative infinity); `y` is not 0.
int64_t floor_div(int64_t x, int64_t y) {
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
}

// An integer operator folded on constexpr ints; `spelling` (or null) keeps the result symbolic,
// so a shape computed from constexprs still reads as the expression. A spelling is Python's
// operator with the same semantics on ints (// and % floor, as floor_div does).
struct IntOp {
    int64_t (*apply)(int64_t, int64_t);
    const char *spelling;
};

const IntOp *int_op(const std::string &op) {
    static const std::map<std::string, IntOp> ops = {
        {"Add", {[](int64_t x, int64_t y) { return x + y; }, " + "}},
        {"Sub", {[](int64_t x, int64_t y) { return x - y; }, " - "}},
        {"Mult", {[](int64_t x, int64_t y) { return x * y; }, " * "}},
        {"FloorDiv", {floor_div, " // "}},
        {"Mod", {[](int64_t x, int64_t y) { return x - floor_div(x, y) * y; }, " % "}},
        {"LShift", {[](int64_t x, int64_t y) { return x << y; }, " << "}},
        {"RShift", {[](int64_t x, int64_t y) { return x >> y; }, " >> "}},
        {"BitAnd", {[](int64_t x, int64_t y) { return x & y; }, " & "}},
        {"BitOr", {[](int64_t x, int64_t y) { return x | y; }, " | "}},
        {"BitXor", {[](int64_t x, int64_t y) { return x ^ y; }, " ^ "}},
        {"Pow", {[](int64_t x, int64_t y) { return static_cast<int64_t>(std::pow(x, y)); }, nullptr}}};
    auto it = ops.find(op);
    return it == ops.end() ? nullptr : &it->second;
}

// Arithmetic and comparisons folded on numbers of which one at least is a float (or on ints, for
// the operators int_op does not cover).
using FloatOp = CV (*)(double, double);

FloatOp float_op(const std::string &op) {
    static const std::map<std::string, FloatOp> ops = {
        {"Add", [](double x, double y) { return CV::real(x + y); }},
        {"Sub", [](double x, double y) { return CV::real(x - y); }},
        {"Mult", [](double x, double y) { return CV::real(x * y); }},
        {"Div", [](double x, double y) { return CV::real(x / y); }},
        {"Pow", [](double x, double y) { return CV::real(std::pow(x, y)); }},
        {"Lt", [](double x, double y) { return CV::boolean(x < y); }},
        {"LtE", [](double x, double y) { return CV::boolean(x <= y); }},
        {"Gt", [](double x, double y) { return CV::boolean(x > y); }},
        {"GtE", [](double x, double y) { return CV::boolean(x >= y); }},
        {"Eq", [](double x, double y) { return CV::boolean(x == y); }},
        {"NotEq", [](double x, double y) { return CV::boolean(x != y); }}};
    auto it = ops.find(op);
    return it == ops.end() ? nullptr : it->second;
}

// Python's spelling of the float operators whose results keep one (comparisons give bools).
const char *float_spelling(const std::string &op) {
    static const std::map<std::string, const char *> ops = {
        {"Add", " + "}, {"Sub", " - "}, {"Mult", " * "}, {"Div", " / "}};
    auto it = ops.find(op);
    return it == ops.end() ? nullptr : it->second;
}

}  // namespace

std::string Lowerer::paren(const std::string &s) {
    if (s.empty() || is_identifier(s)) return s;
    // A number literal alone: digits, a point, an exponent (1e-05 keeps its sign inside).
    bool number = std::isdigit(static_cast<unsigned char>(s[0]));
    for (size_t i = 0; number && i < s.size(); ++i) {
        char ch = s[i];
        number = std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' ||
                 ((ch == '-' || ch == '+') && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E'));
    }
    return number ? s : "(" + s + ")";
}

CV Lowerer::as_float(const CV &c) {
    CV r = CV::real(static_cast<double>(c.i));
    r.deps = c.deps;
    r.symbolic = c.symbolic;
    if (c.symbolic) r.s = c.s;
    return r;
}

// Folds and gives the result the provenance of both operands: symbolic where the operator has a
// spelling and both operands have theirs.
CV Lowerer::fold(const std::string &op, const CV &a, const CV &b, const ast::Node &n) {
    CV r = fold_value(op, a, b, n);
    r.deps = a.deps;
    r.deps.insert(b.deps.begin(), b.deps.end());
    for (const CV &item : b.items) r.deps.insert(item.deps.begin(), item.deps.end());  // `x in (A, B)`
    r.symbolic = false;
    const bool numbers = (a.kind == CV::Int || a.kind == CV::Float) && (b.kind == CV::Int || b.kind == CV::Float);
    const IntOp *iop = r.kind == CV::Int ? int_op(op) : nullptr;
    const char *sym = iop ? iop->spelling : r.kind == CV::Float ? float_spelling(op) : nullptr;
    if (!r.deps.empty() && numbers && sym && spellable(a) && spellable(b)) {
        r.s = paren(spelling(a)) + sym + paren(spelling(b));
        r.symbolic = true;
    } else if (r.kind == CV::Int) {
        r.s = std::to_string(r.i);
    } else if (r.kind == CV::Float) {
        r.s.clear();
    }
    return r;
}

CV Lowerer::fold_value(const std::string &op, const CV &a, const CV &b, const ast::Node &n) {
    if (is_int_like(a) && is_int_like(b)) {
        if ((op == "FloorDiv" || op == "Mod") && b.i == 0) unsupported(n, "division by zero", "");
        if (op == "Div") return CV::real(static_cast<double>(a.i) / static_cast<double>(b.i));
        if (const IntOp *f = int_op(op)) return CV::integer(f->apply(a.i, b.i));
    }
    if (is_scalar_number(a) && is_scalar_number(b))
        if (FloatOp f = float_op(op)) return f(as_double(a), as_double(b));
    if (op == "Is" || op == "IsNot" || op == "Eq" || op == "NotEq") {
        bool same = a.kind == b.kind &&
                    (a.kind == CV::None || (a.kind == CV::Str && a.s == b.s) || (a.kind == CV::DTypeV && a.dt == b.dt));
        return CV::boolean((op == "Is" || op == "Eq") ? same : !same);
    }
    if ((op == "In" || op == "NotIn") && b.kind == CV::Tuple) {  // ACTIVATION in ("gelu", "silu")
        bool found = false;
        for (const CV &item : b.items) found = found || (item.compile_time() && fold_value("Eq", a, item, n).i != 0);
        return CV::boolean((op == "In") == found);
    }
    unsupported(n, "operator " + op + " on compile-time values", "");
}

ValueId Lowerer::materialize(const CV &c, const Type *like, const ast::Node &n) {
    if (c.kind == CV::Value) return c.v;
    DType t;
    double v;
    if (c.kind == CV::Int || c.kind == CV::Bool) {
        v = static_cast<double>(c.i);
        if (like && !like->is_ptr)
            t = like->elem == DType::I1 && c.kind == CV::Int ? DType::I32 : like->elem;
        else
            t = (c.i > INT32_MAX || c.i < INT32_MIN) ? DType::I64 : DType::I32;
        if (c.kind == CV::Bool && !like) t = DType::I1;
    } else if (c.kind == CV::Float) {
        v = c.f;
        t = (like && like->is_float()) ? like->elem : DType::F32;
    } else {
        unsupported(n, "value of this kind in arithmetic", "");
    }
    // Spelled by the constexprs it comes from where it can be; otherwise its value is baked in.
    std::string name;
    if (!c.deps.empty() && spellable(c))
        name = spelling(c);
    else
        consume(c);
    return b_.constant(v, t, name);
}

DType Lowerer::promote(DType a, DType b) {
    bool fa = ir::dtype_is_float(a), fb = ir::dtype_is_float(b);
    if (fa != fb) return fa ? a : b;
    if (a == b) return a;
    if (fa && ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))) return DType::F32;
    return ir::dtype_rank(a) >= ir::dtype_rank(b) ? a : b;
}

std::pair<ValueId, ValueId> Lowerer::unify(const CV &ca, const CV &cb, const ast::Node &n, bool keep_types) {
    // Two Python numbers: an int beside a float is a float, as Python (and Triton) have it.
    if (ca.kind == CV::Int && cb.kind == CV::Float) return unify(as_float(ca), cb, n, keep_types);
    if (ca.kind == CV::Float && cb.kind == CV::Int) return unify(ca, as_float(cb), n, keep_types);
    const Type *ta = ca.kind == CV::Value ? &fn_.type(ca.v) : nullptr;
    const Type *tb = cb.kind == CV::Value ? &fn_.type(cb.v) : nullptr;
    Type la = ta ? *ta : Type{}, lb = tb ? *tb : Type{};
    ValueId a = materialize(ca, tb, n);
    ValueId b = materialize(cb, ta ? &la : nullptr, n);
    if (!keep_types) {
        const Type &xa = fn_.type(a), &xb = fn_.type(b);
        if (!xa.is_ptr && !xb.is_ptr && xa.elem != xb.elem) {
            DType t = promote(xa.elem, xb.elem);
            a = b_.cast(a, t);
            b = b_.cast(b, t);
        }
    }
    std::vector<Dim> shape;
    if (!ir::broadcast_shapes(fn_.type(a).shape, fn_.type(b).shape, &shape))
        fail(TAD_ERR_UNSUPPORTED,
             at(n) + ": shapes " + fn_.type(a).str() + " and " + fn_.type(b).str() + " do not broadcast");
    return {b_.broadcast(a, shape), b_.broadcast(b, shape)};
}

CV Lowerer::binop(const std::string &op, const CV &a, const CV &b, const ast::Node &n) {
    if (a.compile_time() && b.compile_time()) return fold(op, a, b, n);
    // An argument bound to None is compile-time (folded above); one bound to a tensor or a number is
    // not None, as Triton folds it: the function is specialized on that, which the module checks at
    // each launch (ir::Function::specialized). A value the kernel computed is never None.
    if ((op == "Is" || op == "IsNot") && (a.kind == CV::None || b.kind == CV::None)) {
        const CV &other = a.kind == CV::None ? b : a;
        CV r = CV::boolean(op == "IsNot");
        for (const ir::Param &p : fn_.params)
            if (other.kind == CV::Value && p.value == other.v) r.deps.insert(p.name);
        return r;
    }
    bool a_ptr = a.kind == CV::Value && fn_.type(a.v).is_ptr;
    bool b_ptr = b.kind == CV::Value && fn_.type(b.v).is_ptr;
    if (a_ptr || b_ptr) {
        if (op != "Add" && !(op == "Sub" && a_ptr && !b_ptr))
            unsupported(n, "pointer arithmetic '" + op + "'", "only pointer + integer");
        CV p = a_ptr ? a : b, off = a_ptr ? b : a;
        if (op == "Sub") off = unaryop_neg(off, n);
        auto [pp, oo] = unify(p, off, n, true);
        if (fn_.type(oo).is_float()) unsupported(n, "pointer + float", "");
        return CV::value(b_.add_ptr(pp, oo));
    }
    static const std::map<std::string, OpKind> kinds = {
        {"Add", OpKind::Add},      {"Sub", OpKind::Sub},  {"Mult", OpKind::Mul},  {"Div", OpKind::Div},
        {"FloorDiv", OpKind::Div}, {"Mod", OpKind::Mod},  {"Lt", OpKind::Lt},     {"LtE", OpKind::Le},
        {"Gt", OpKind::Gt},        {"GtE", OpKind::Ge},   {"Eq", OpKind::Eq},     {"NotEq", OpKind::Ne},
        {"BitAnd", OpKind::And},   {"BitOr", OpKind::Or}, {"BitXor", OpKind::Xor}};
    auto k = kinds.find(op);
    if (k == kinds.end()) unsupported(n, "operator '" + op + "'", "");
    auto [x, y] = unify(a, b, n);
    Type t = fn_.type(x);
    if (op == "Div" && !t.is_float()) {  // true division of integers gives float32 in Triton
        x = b_.cast(x, DType::F32);
        y = b_.cast(y, DType::F32);
    }
    if (op == "FloorDiv" && t.is_float()) unsupported(n, "// on floats", "use tl.floor(a / b)");
    if ((op == "BitAnd" || op == "BitOr" || op == "BitXor") && t.is_float())
        unsupported(n, "bitwise operator on floats", "");
    return CV::value(b_.binary(k->second, x, y));
}

CV Lowerer::unaryop_neg(const CV &v, const ast::Node &n) {
    if (v.kind == CV::Int || v.kind == CV::Float) {
        CV r = v.kind == CV::Int ? CV::integer(-v.i) : CV::real(-v.f);
        r.deps = v.deps;
        if (!v.deps.empty() && spellable(v)) {
            r.s = "-" + paren(spelling(v));
            r.symbolic = true;
        }
        return r;
    }
    if (v.kind != CV::Value) unsupported(n, "negation", "");
    return CV::value(b_.unary(OpKind::Neg, v.v));
}

CV Lowerer::unaryop(const ast::Node &e, const CV &v) {
    const std::string &op = e.node("op")->kind;
    if (op == "UAdd") return v;
    if (op == "USub") return unaryop_neg(v, e);
    if (op == "Not" || op == "Invert") {
        if (v.kind == CV::Bool || (v.kind == CV::Int && op == "Not")) {
            CV r = CV::boolean(!v.i);
            r.deps = v.deps;
            return r;
        }
        if (v.kind == CV::None && op == "Not") {
            CV r = CV::boolean(true);
            r.deps = v.deps;
            return r;
        }
        if (v.kind != CV::Value) unsupported(e, "operator " + op, "");
        return CV::value(b_.unary(OpKind::Not, v.v));
    }
    unsupported(e, "operator " + op, "");
}

CV Lowerer::where(const CV &c, const CV &a, const CV &b, const ast::Node &n) {
    auto [x, y] = unify(a, b, n);
    if (c.compile_time()) {  // chosen while lowering; both sides still give the result its type
        consume(c);
        return CV::value(truthy(c, n) ? x : y);
    }
    std::vector<Dim> shape;
    if (!ir::broadcast_shapes(fn_.type(c.v).shape, fn_.type(x).shape, &shape))
        fail(TAD_ERR_UNSUPPORTED,
             at(n) + ": tl.where condition " + fn_.type(c.v).str() + " does not broadcast with " + fn_.type(x).str());
    ValueId cc = b_.cast(c.v, DType::I1);
    return CV::value(b_.where(b_.broadcast(cc, shape), b_.broadcast(x, shape), b_.broadcast(y, shape)));
}

}  // namespace tad::frontend::detail
