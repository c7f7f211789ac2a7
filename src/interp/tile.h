// Internal to the interpreter: the storage of one SSA value and the shape-only kernels that move
// lanes around (broadcast, reduce, scan).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ir/ir.h"

namespace tad::interp {

using Shape = std::vector<int64_t>;

// The lanes of one value, row-major; shape and element type are the value's IR type. Numbers
// (floats, integers, i1 as 0/1) live in `num`; a pointer lane is (buf[i], off[i]): a buffer id and an
// element offset into it.
struct Tile {
    std::vector<double> num;
    std::vector<int32_t> buf;
    std::vector<int64_t> off;
};

// The offset of a pointer lane computed from an undefined integer (see interp.h).
constexpr int64_t kUndefinedOffset = std::numeric_limits<int64_t>::min();

int64_t numel(const Shape &s);

// Per dim of `to`, the element stride of `from` under numpy broadcasting (align right; 0 where a
// size-1 dim stretches or `from` has no such dim). False if `from` does not broadcast to `to`.
bool broadcast_strides(const Shape &from, const Shape &to, std::vector<int64_t> *strides);

// out[i] = in[offset of lane i of the row-major shape `to`, under `strides`].
template <class T>
void gather(const std::vector<T> &in, const Shape &to, const std::vector<int64_t> &strides, std::vector<T> &out);

// Reduces `in` (shape `s`) over `axis` (-1: all dims) with ReduceSum / ReduceMax / ReduceMin. The
// lanes of the result are in the same order with or without keep_dims.
void reduce(ir::OpKind k, const std::vector<double> &in, const Shape &s, int axis, std::vector<double> &out);

// Argmax / Argmin of `in` (shape `s`) along `axis` (a dim): the first index of the extremum, NaN
// where the lanes compared hold a NaN (interp.h).
void arg_extremum(ir::OpKind k, const std::vector<double> &in, const Shape &s, int axis, std::vector<double> &out);

// Inclusive prefix sums of `in` (shape `s`) along `axis`, from the end when `reverse`.
void cumsum(const std::vector<double> &in, const Shape &s, int axis, bool reverse, std::vector<double> &out);

}  // namespace tad::interp
