// Off-mask zeros: whether a tile is 0 on every lane a store's mask leaves out.
//
// A masked store saves only the lanes its mask holds; a backward that reads the value back from it
// (saved_values.h) needs the lanes off the mask too. Where the value is provably 0 there, the load's
// `other` of 0 gives every lane exactly: a contraction's accumulator `acc += tl.dot(a, b)` from
// zeros, stored under `(rows < M) & (cols < N)` where `a` is loaded under `rows < M` and `b` under
// `cols < N` with `other=0`, is 0 on a row off the mask (a's row is all zeros) and on a column off
// it (b's column is).
//
// The mask must be a conjunction (&, through broadcasts) of factors that each vary along one dim of
// the value (a [M, 1] or [1, N] comparison broadcast to [M, N]; a 1-D mask is its own factor). For
// each factor the value must be 0 on that dim's indices where the factor is false, proved through:
// zero constants; loads masked by a conjunction holding a structurally equal factor along the same
// dim, with a zero `other`; tl.dot, whose rows are its left operand's and whose columns its right
// operand's; sums, differences, negations, float casts, tl.where of two such values; products of two
// such values, or of one and a finite literal, and quotients by a finite nonzero literal; and the
// result of a loop whose carried value starts at such a value and whose update keeps it so (by
// induction over the iterations). A product with any other value is not one (0 times an infinity
// is not 0), nor is one with a constexpr (another launch may set it to one). The contraction rule
// holds for finite operands: where the other operand holds an infinity, the forward's lanes off the
// mask are NaN, and the backward reads 0 there instead (those lanes are no element of the tensor,
// and recomputing them would only spread the NaN into the gradients of the lanes on it).
#pragma once

#include "ir/ir.h"

namespace tad::passes {

// Whether value v of f (a tile) is 0 on every lane where `mask` (i1, v's shape) is false.
bool zero_off_mask(const ir::Function &f, ir::ValueId v, ir::ValueId mask);

// Whether a and b compute the same value: the same value, or the same pure op (no memory, loop
// structure, program-dependent randomness) with the same attributes and type on operands that
// are (structurally equal computations in different loop bodies).
bool same_computation(const ir::Function &f, ir::ValueId a, ir::ValueId b);

}  // namespace tad::passes
