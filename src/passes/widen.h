// Widening a transposed kernel's tile: launching it with a constexpr block size W times larger.
//
// Loop transposition (transpose.h) gives each program of a grid axis one iteration of the forward's
// loop: a tile of BLOCK_K elements of the gradient (matmul's dA tile of BLOCK_M x BLOCK_K). Owning R
// consecutive iterations with R copies of the slice makes R thin contractions per step; the same
// kernel launched with BLOCK_K' = R·BLOCK_K makes one R times wider, which the tensor cores run far
// better (matmul's dA and dB: 128-wide tiles instead of four 32-wide ones). widen_proof() shows that
// a kernel computes the same gradient for every value of the constexpr: nothing it computes depends
// on where a tile's boundary falls, only on each element's global index t·C + lane, for t the program
// id along `axis`, C the constexpr and `lane` the index along a dim spelled C. It rewrites nothing;
// the plan launches the kernel with C·W (its grid along `axis` sized with that value too).
//
// What it checks, on the kernel's values that depend on that program id, on C or on a lane of a C
// dim (the index values): they reach only integer arithmetic, comparisons, pointer offsets, and the
// address, mask or condition operands of loads, stores, atomic adds and tl.where; each address and
// each bound of a mask or condition (affine.h) moves with the program id C times as fast as with its
// lane of a C dim (so it is a function of t·C + lane), mentions C nowhere else, and is affine. No
// reduction, scan or contraction runs along a C dim, no reshape, join or split touches one, and no
// literal equals C's value (it could be C baked in).
#pragma once

#include <string>

#include "ir/ir.h"

namespace tad::passes {

// Whether kernel `g` is independent of constexpr `c`'s value as above, along grid axis `axis`; `why`
// says what depends on it.
bool widen_proof(const ir::Function &g, int axis, const std::string &c, std::string *why);

}  // namespace tad::passes
