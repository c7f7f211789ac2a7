// Reusing what a forward saved: the backward loads a value the forward stored instead of computing
// it again.
//
// LayerNorm's forward stores each row's mean and rstd; the backward needs their values (x - mean,
// the slopes of 1 / sqrt) but, differentiated as written, recomputes them: two row reductions per
// row, or, in group norm, two passes over the group. reuse_saved_values() rewrites a forward for
// reverse mode only: after a value v that it stores into a buffer the backward finds as the launch
// left it (a `kept` parameter), it loads the stored element back through a parameter with
// ir::Param::final_of and reads v as replay_as(v, loaded). v keeps its gradient (it still flows
// through v's computation to x), but reverse mode replays the loaded value for it, in the rules of
// the op that made v too, so the reductions that only made v's value become dead code.
//
// The values v was made from by an op that can be undone without cancellation are replayed from the
// load as well: with c computed before u (so not from it), y = c / u gives u = c / y, y = u / c gives
// u = y · c, y = u · c gives u = y / c, y = sqrt u gives u = y², y = rsqrt u gives u = 1 / y², and
// y = -u gives u = -y; a float cast is undone by a cast back (rounded where it narrowed). rstd =
// 1 / sqrt(var + eps) thus also stands for sqrt(var + eps) = 1 / rstd,
// whose derivative (1 / (2 sqrt)) is all the backward needs of the variance. Sums and differences
// are not undone (y - c loses what c cancels); the values replayed that way differ from the
// recomputed ones by rounding only.
//
// Where it holds: the store is outside loops, unmasked (every lane saved; or, for a linear tile
// below, masked as its loads; or masked where the value is 0 off the mask, off_mask.h, a mask made
// without loads: a contraction's accumulator under its operands' row and column masks, read back as
// where(mask, loaded, 0); or, for a loop's running sum (acc' = acc + T, whose reverse reads no
// value of it), masked where its lanes off the mask matter to nothing: every value computed from it
// is elementwise on its tile through ops whose values and derivatives stay finite at the 0 read
// back there (no exponential, log, root, power, division by it, or narrowing cast), and each write of
// one is masked by every conjunct of the mask, so the cotangents there are 0 and the 0 changes no
// gradient; nothing is undone from it then: the Triton tutorial's matmul, whose rows wrap `% M`),
// the only write to its
// buffer in the kernel, at an address computed without loads or loop results, and proved to write
// each element from one program (the access analysis, with run-time guards where it needs them);
// each program then finds its own value there. Its buffer's element type is not narrower than v's
// (the traced types; a store that rounds is not reused). v is a scalar per program, or a tile made
// through a reduction (a statistic; loading a tile of elementwise values costs what recomputing
// does), and reads no value the forward's rewrite already loads from a saved buffer.
//
// A linear tile: v made from two or more tile loads by adds, subtractions, negations, float casts,
// broadcasts and products or quotients with invariants, where nothing else reads those loads (a
// residual sum h = x + r). Reading it back costs one load where recomputing costs two or more, and
// the loads die in the backward (a linear op's derivative needs no operand). Its store may be
// masked when every load is masked by the same mask value with an `other`: v is then read back as
// where(mask, loaded, v off the mask), v off the mask being its ops applied to the `other`s.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct SavedReuse {
    ir::Function fn;
    // Per reused store, alternatives of run-time conditions (each a conjunction) under which it writes
    // each element from one program; absent where that is proved statically.
    std::vector<std::vector<std::vector<Inequality>>> guards;
};

// `report` gets a line per store of a float value into a kept buffer: what it replays, or why not.
SavedReuse reuse_saved_values(const ir::Function &f, const std::vector<std::string> &kept, std::string *report);

}  // namespace tad::passes
