// Reductions lifted out of loops: a running scalar that each iteration adds the sum of a tile to,
// `s = s + tl.sum(t)`, becomes a tile that each iteration adds lane by lane, `acc = acc + t`,
// reduced once after the loop: `s = s0 + tl.sum(acc)`.
//
// A reduction across a program's warps synchronizes them: in a loop, every iteration waits for all
// warps before the next iteration's loads can issue. Reverse mode writes such loops wherever the
// forward's loop feeds a scalar statistic: group norm's dmean and drstd.
//
// What it rewrites: a loop-carried scalar s (float32, float64 or int32) whose only use in the loop
// is `s + tl.sum(t)` yielded as its next value, t a one-dimensional tile. The carried value becomes
// a tile of t's shape that starts at zeros and is yielded as `acc + t`; after the loop, s's result
// is `s0 + tl.sum(acc)`. What makes it sound: addition is associative and commutative, so the
// result is the same sum of the same lanes, exact for integers and, for floats, up to the order of
// the additions (each lane's first, then across lanes). Measured on the H200 (bench/results/
// 2026-12-02-h200-session3.md): group norm's backward 8-10% faster. A running maximum or minimum
// could be lifted the same way; cross entropy's was 1-3% slower (reduction_of says why), so they
// stay scalars.
#pragma once

#include "ir/ir.h"

namespace tad::passes {

struct LiftedReductions {
    ir::Function fn;
    int lifted = 0;  // carried scalars now carried as tiles
};

LiftedReductions lift_reductions(const ir::Function &f);

}  // namespace tad::passes
