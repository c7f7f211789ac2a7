#include "interp/elementwise.h"

#include <limits>

#include "support/error.h"

namespace tad::interp {

using ir::OpKind;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The op is dispatched once per tile, then one tight loop per lane.
template <class F> void map1(const std::vector<double> &a, std::vector<double> &out, F f) {
    out.resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i]);
}

template <class F>
void map2(const std::vector<double> &a, const std::vector<double> &b, std::vector<double> &out, F f) {
    out.resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
}

// Integer lanes: an undefined operand gives an undefined result; the op runs on int64.
template <class F> void int1(const std::vector<double> &a, std::vector<double> &out, F f) {
    map1(a, out, [&](double x) {
        int64_t i;
        return int_lane(x, &i) ? static_cast<double>(f(i)) : kNaN;
    });
}

template <class F>
void int2(const std::vector<double> &a, const std::vector<double> &b, std::vector<double> &out, F f) {
    map2(a, b, out, [&](double x, double y) {
        int64_t i, j;
        return int_lane(x, &i) && int_lane(y, &j) ? static_cast<double>(f(i, j)) : kNaN;
    });
}

int64_t wrap_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

int64_t check_divisor(int64_t d) {
    if (d == 0) throw Error(TAD_ERR_INVALID_ARGUMENT, "integer division by zero");
    return d;
}

[[noreturn]] void no_such(OpKind k, ir::DType elem) {
    throw Error(TAD_ERR_INTERNAL,
                std::string("interp: no ") + ir::op_name(k) + " on " + ir::dtype_name(elem) + " operands");
}

// NaN-propagating max / min (interp.h).
double max_nan(double a, double b) { return b > a || b != b ? b : a; }
double min_nan(double a, double b) { return b < a || b != b ? b : a; }

void float_binary(OpKind k, ir::DType elem, const std::vector<double> &a, const std::vector<double> &b,
                  std::vector<double> &out) {
    switch (k) {
    case OpKind::Add: return map2(a, b, out, [](double x, double y) { return x + y; });
    case OpKind::Sub: return map2(a, b, out, [](double x, double y) { return x - y; });
    case OpKind::Mul: return map2(a, b, out, [](double x, double y) { return x * y; });
    case OpKind::Div: return map2(a, b, out, [](double x, double y) { return x / y; });
    case OpKind::Mod: return map2(a, b, out, [](double x, double y) { return std::fmod(x, y); });
    case OpKind::Maximum: return map2(a, b, out, max_nan);
    case OpKind::Minimum: return map2(a, b, out, min_nan);
    case OpKind::Pow: return map2(a, b, out, [](double x, double y) { return std::pow(x, y); });
    case OpKind::Lt: return map2(a, b, out, [](double x, double y) { return double(x < y); });
    case OpKind::Le: return map2(a, b, out, [](double x, double y) { return double(x <= y); });
    case OpKind::Gt: return map2(a, b, out, [](double x, double y) { return double(x > y); });
    case OpKind::Ge: return map2(a, b, out, [](double x, double y) { return double(x >= y); });
    case OpKind::Eq: return map2(a, b, out, [](double x, double y) { return double(x == y); });
    case OpKind::Ne: return map2(a, b, out, [](double x, double y) { return double(x != y); });
    default: no_such(k, elem);
    }
}

// i1 lanes are 0 / 1, so the bitwise And / Or / Xor are also the logical ones.
void int_binary(OpKind k, ir::DType elem, const std::vector<double> &a, const std::vector<double> &b,
                std::vector<double> &out) {
    switch (k) {
    case OpKind::Add: return int2(a, b, out, wrap_add);
    case OpKind::Sub: return int2(a, b, out, [](int64_t x, int64_t y) { return wrap_add(x, wrap_neg(y)); });
    case OpKind::Mul: return int2(a, b, out, wrap_mul);
    // -1 is apart because INT64_MIN / -1 overflows.
    case OpKind::Div:
        return int2(a, b, out, [](int64_t x, int64_t y) { return check_divisor(y) == -1 ? wrap_neg(x) : x / y; });
    case OpKind::Mod: return int2(a, b, out, [](int64_t x, int64_t y) { return check_divisor(y) == -1 ? 0 : x % y; });
    case OpKind::Maximum: return int2(a, b, out, [](int64_t x, int64_t y) { return x > y ? x : y; });
    case OpKind::Minimum: return int2(a, b, out, [](int64_t x, int64_t y) { return x < y ? x : y; });
    case OpKind::Lt: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x < y); });
    case OpKind::Le: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x <= y); });
    case OpKind::Gt: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x > y); });
    case OpKind::Ge: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x >= y); });
    case OpKind::Eq: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x == y); });
    case OpKind::Ne: return int2(a, b, out, [](int64_t x, int64_t y) { return int64_t(x != y); });
    case OpKind::And: return int2(a, b, out, [](int64_t x, int64_t y) { return x & y; });
    case OpKind::Or: return int2(a, b, out, [](int64_t x, int64_t y) { return x | y; });
    case OpKind::Xor: return int2(a, b, out, [](int64_t x, int64_t y) { return x ^ y; });
    default: no_such(k, elem);
    }
}

void float_unary(OpKind k, ir::DType elem, const std::vector<double> &a, std::vector<double> &out) {
    switch (k) {
    case OpKind::Neg: return map1(a, out, [](double x) { return -x; });
    case OpKind::Exp: return map1(a, out, [](double x) { return std::exp(x); });
    case OpKind::Exp2: return map1(a, out, [](double x) { return std::exp2(x); });
    case OpKind::Log: return map1(a, out, [](double x) { return std::log(x); });
    case OpKind::Log2: return map1(a, out, [](double x) { return std::log2(x); });
    case OpKind::Sqrt: return map1(a, out, [](double x) { return std::sqrt(x); });
    case OpKind::Rsqrt: return map1(a, out, [](double x) { return 1.0 / std::sqrt(x); });
    case OpKind::Sigmoid: return map1(a, out, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case OpKind::Abs: return map1(a, out, [](double x) { return std::fabs(x); });
    case OpKind::Erf: return map1(a, out, [](double x) { return std::erf(x); });
    case OpKind::Tanh: return map1(a, out, [](double x) { return std::tanh(x); });
    case OpKind::Sin: return map1(a, out, [](double x) { return std::sin(x); });
    case OpKind::Cos: return map1(a, out, [](double x) { return std::cos(x); });
    case OpKind::Log1p: return map1(a, out, [](double x) { return std::log1p(x); });
    case OpKind::Expm1: return map1(a, out, [](double x) { return std::expm1(x); });
    case OpKind::Tan: return map1(a, out, [](double x) { return std::tan(x); });
    case OpKind::Atan: return map1(a, out, [](double x) { return std::atan(x); });
    case OpKind::Sinh: return map1(a, out, [](double x) { return std::sinh(x); });
    case OpKind::Cosh: return map1(a, out, [](double x) { return std::cosh(x); });
    case OpKind::Asin: return map1(a, out, [](double x) { return std::asin(x); });
    case OpKind::Acos: return map1(a, out, [](double x) { return std::acos(x); });
    case OpKind::Floor: return map1(a, out, [](double x) { return std::floor(x); });
    case OpKind::Ceil: return map1(a, out, [](double x) { return std::ceil(x); });
    default: no_such(k, elem);
    }
}

void int_unary(OpKind k, ir::DType elem, const std::vector<double> &a, std::vector<double> &out) {
    switch (k) {
    case OpKind::Neg: return int1(a, out, wrap_neg);
    case OpKind::Abs: return int1(a, out, [](int64_t x) { return x < 0 ? wrap_neg(x) : x; });
    case OpKind::Not:
        if (elem == ir::DType::I1) return int1(a, out, [](int64_t x) { return int64_t(x == 0); });
        return int1(a, out, [](int64_t x) { return ~x; });
    default: no_such(k, elem);
    }
}

}  // namespace

void unary(OpKind k, ir::DType elem, const std::vector<double> &a, std::vector<double> &out) {
    if (ir::dtype_is_float(elem))
        float_unary(k, elem, a, out);
    else
        int_unary(k, elem, a, out);
}

void binary(OpKind k, ir::DType elem, const std::vector<double> &a, const std::vector<double> &b,
            std::vector<double> &out) {
    if (ir::dtype_is_float(elem))
        float_binary(k, elem, a, b, out);
    else
        int_binary(k, elem, a, b, out);
}

void cast(ir::DType from, ir::DType to, const std::vector<double> &a, std::vector<double> &out) {
    if (to == ir::DType::I1) return map1(a, out, [](double x) { return x != x ? kNaN : double(x != 0); });
    if (ir::dtype_is_float(to) || !ir::dtype_is_float(from)) {
        out = a;  // no rounding to the narrower type, no narrowing to i32 (interp.h)
        return;
    }
    int1(a, out, [](int64_t x) { return x; });  // float -> int: truncation, as the conversion in int_lane
}

}  // namespace tad::interp
