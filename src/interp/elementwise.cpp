#include "interp/elementwise.h"

#include <limits>

#include "support/error.h"

namespace tad::interp {

using ir::DType;
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

[[noreturn]] void no_such(OpKind k, DType elem) {
    throw Error(TAD_ERR_INTERNAL,
                std::string("interp: no ") + ir::op_name(k) + " on " + ir::dtype_name(elem) + " operands");
}

// NaN-propagating max / min (interp.h).
double max_nan(double a, double b) { return b > a || b != b ? b : a; }
double min_nan(double a, double b) { return b < a || b != b ? b : a; }

// The lane functions of ops.def, one switch per kind of lanes: a case per op with such a lane
// runs it over the tile; an op without one (NO_LANE) breaks out to no_such.
// clang-format off

void float_unary(OpKind k, DType elem, const std::vector<double> &a, std::vector<double> &out) {
    switch (k) {
#define LANE(expr) return map1(a, out, [&](double x) -> double { return expr; });
#define NO_LANE break;
#define TAD_OP(kind, name, cls, attrs, spelling)
#define TAD_BINARY(kind, name, cls, spelling, float_lane, int_lane)
#define TAD_UNARY(kind, name, spelling, float_lane, int_lane, tl_name) case OpKind::kind: float_lane
#include "ir/ops.def"
    default: break;
    }
    no_such(k, elem);
}

void int_unary(OpKind k, DType elem, const std::vector<double> &a, std::vector<double> &out) {
    switch (k) {
#define LANE(expr) return int1(a, out, [&](int64_t x) -> int64_t { return expr; });
#define NO_LANE break;
#define TAD_OP(kind, name, cls, attrs, spelling)
#define TAD_BINARY(kind, name, cls, spelling, float_lane, int_lane)
#define TAD_UNARY(kind, name, spelling, float_lane, int_lane, tl_name) case OpKind::kind: int_lane
#include "ir/ops.def"
    default: break;
    }
    no_such(k, elem);
}

void float_binary(OpKind k, DType elem, const std::vector<double> &a, const std::vector<double> &b,
                  std::vector<double> &out) {
    switch (k) {
#define LANE(expr) return map2(a, b, out, [&](double x, double y) -> double { return expr; });
#define NO_LANE break;
#define TAD_OP(kind, name, cls, attrs, spelling)
#define TAD_UNARY(kind, name, spelling, float_lane, int_lane, tl_name)
#define TAD_BINARY(kind, name, cls, spelling, float_lane, int_lane) case OpKind::kind: float_lane
#include "ir/ops.def"
    default: break;
    }
    no_such(k, elem);
}

void int_binary(OpKind k, DType elem, const std::vector<double> &a, const std::vector<double> &b,
                std::vector<double> &out) {
    switch (k) {
#define LANE(expr) return int2(a, b, out, [&](int64_t x, int64_t y) -> int64_t { return expr; });
#define NO_LANE break;
#define TAD_OP(kind, name, cls, attrs, spelling)
#define TAD_UNARY(kind, name, spelling, float_lane, int_lane, tl_name)
#define TAD_BINARY(kind, name, cls, spelling, float_lane, int_lane) case OpKind::kind: int_lane
#include "ir/ops.def"
    default: break;
    }
    no_such(k, elem);
}

// clang-format on
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
