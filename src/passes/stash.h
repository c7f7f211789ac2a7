// Stashes: values a transposed kernel (transpose.h) reads that another loop computes, or that cost
// more to compute than to load (costly_to_recompute below).
//
// A transposed kernel computes, for each program p_g it sums over, what that program added at one
// iteration of a loop, so everything it reads must be computable from that iteration alone. A value
// the forward computes with a loop of its own is not: matmul with an epilogue needs dZ = dC ·
// act'(A·B + bias) at every step of its reverse loop, and A·B comes from the K loop; recomputing it
// for every (iteration, p_g) would repeat that loop for each. Instead the kernel that keeps the
// forward's grid (the rest) stores the value once per program, unmasked, into a stash; the
// transposed kernels, run after it, load it at the program they sum over.
//
// Layout: `elements` (the product of the value's dims) per program, program by program in linear
// order over the grid axes the forward reads (lowest fastest, as num_programs counts the forward
// grid; programs along an axis it does not read compute alike), each program's lanes row-major.
// Sound because the plan runs the rest before the transposed kernels, the rest stores every lane of
// every program, and a load reads the lanes one store wrote: the same shape and index arithmetic on
// both sides. The buffer is float32 (float64 when the launch computes in float64), or, where the
// kernels reading it convert the value to a tensor's element type before every use (matmul's dZ
// cast to the operands' float16 for the tensor cores), of that type: the same values, rounded once
// by the store as the conversion rounds them, in half the bytes.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct Stash {
    std::string param;  // the buffer's pointer parameter, in the rest and in the transposed kernels
    std::vector<std::string> dims;  // its elements per program: their product (constexprs, literals)
    // The pointer parameter whose element type the buffer takes ("": float32, float64 for float64).
    std::string like = {};
};

// The pointer parameter P such that every op of `users` that reads value v converts it to the type
// of a value loaded from P (`v.to(x.dtype)`, x = tl.load(P + ...)); "" if there is none.
std::string converted_like(const ir::Function &f, ir::ValueId v, const std::vector<int> &users);

// Per value: whether it is computed from some loop's results, through any ops.
std::vector<bool> from_loops(const ir::Function &f);

// Per value: whether computing it again costs more than loading it from a stash: it is computed
// through a transcendental function (exp, log, erf, tanh, sqrt, ...), or from two or more tile
// loads (through any ops but loads). A transposed kernel computing such a tile again for every
// (iteration, p_g) spends more than loading it: matmul's epilogue gradient dZ = dC · act'(z), with z
// read back from what the forward saved (float32) beside dC, is stashed too, in the operands' dtype.
std::vector<bool> costly_to_recompute(const ir::Function &f);

// "" when value v of f may be stashed: a float32 or float64 scalar or tile defined outside every
// loop, whose dims are literals or constexprs; else why not.
std::string stashable(const ir::Function &f, ir::ValueId v);

// The stash description of value v (stashable), with `param` its buffer's parameter.
Stash stash_of(const ir::Function &f, ir::ValueId v, const std::string &param);

// The addresses, in stash `base` (a pointer parameter of b's function), of the lanes of a value of
// type `t` in the program with ids `ids` of a grid of `counts` programs per axis (values of b's
// function), linearized over grid axes `axes` (ascending; the forward's program_axes).
ir::ValueId stash_address(ir::Builder &b, ir::ValueId base, const ir::Type &t, const std::array<ir::ValueId, 3> &ids,
                          const std::array<ir::ValueId, 3> &counts, const std::vector<int> &axes);

// f without the ops keep[] drops (as compact), with each value of `stashes` stored right after
// its definition into its stash, a pointer parameter appended to f's.
ir::Function store_stashes(const ir::Function &f, const std::vector<bool> &keep,
                           const std::map<ir::ValueId, Stash> &stashes);

}  // namespace tad::passes
