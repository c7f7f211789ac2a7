// Internal to the interpreter: elementwise ops on number lanes, with the semantics of interp.h.
// Faults throw tad::Error without a location; run() prefixes the op's location and program.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace tad::interp {

// An integer lane's value; false when it is undefined (NaN) or beyond int64.
inline bool int_lane(double x, int64_t *out) {
    if (!(std::fabs(x) < 0x1p63)) return false;
    *out = static_cast<int64_t>(x);
    return true;
}

// Two's-complement wrap, as Triton's integer arithmetic (signed overflow is undefined in C++).
inline int64_t wrap_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// `elem` is the operands' element type; it picks float or integer semantics.
void unary(ir::OpKind k, ir::DType elem, const std::vector<double> &a, std::vector<double> &out);
void binary(ir::OpKind k, ir::DType elem, const std::vector<double> &a, const std::vector<double> &b,
            std::vector<double> &out);
void cast(ir::DType from, ir::DType to, const std::vector<double> &a, std::vector<double> &out);

}  // namespace tad::interp
