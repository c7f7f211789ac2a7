// Loop-invariant factors taken out of running sums: a tile accumulated as `acc = acc + e`, where e
// is s times something (s computed before the loop), becomes `acc = acc + e / s` multiplied by s
// once after the loop.
//
// Reverse mode of a two-pass normalization (the mean first, then the centered variance) sums, in
// a second loop over the data, the centered values times the variance's adjoint: group norm's
// `acc += -where(mask, 2 * dvar * xc, 0)`. That adjoint comes from the first loop's sums, so the
// second loop cannot start before the first ends, and it reads the whole input again. With the
// factor taken out, the loop sums `-where(mask, 2 * xc, 0)`, which needs nothing from the first
// loop: fuse_loops.h then runs both loops as one, and the input is read once less.
//
// What it rewrites: a loop-carried tile (float32 or float64) that starts at zeros, whose only use in
// the loop is `acc + e` yielded as its next value, and whose increment e is linear in a value s
// defined before the loop that e multiplies (s not a constant; or a scalar s the loop broadcasts
// before multiplying, batch norm's `dvar / count * xc`): e is s itself, or built from
// linear parts by +, -, negation, multiplication or division by parts free of s, tl.where with an
// s-free condition between linear parts and zeros, and float casts that keep the dtype. The loop
// then adds e at s = 1 (the multiplications by s dropped), and the loop's result is s times the
// sum. What makes it sound: lane by lane, the sum over iterations of s * e1 is s times the sum of
// e1, s being the same in every iteration; for floats, up to rounding (one multiplication instead
// of one per iteration). Where s is infinite or NaN the masked lanes differ (0 against s * 0), but
// then so is every gradient s reaches.
#pragma once

#include "ir/ir.h"

namespace tad::passes {

struct FactoredSums {
    ir::Function fn;
    int factored = 0;  // running sums whose factor was taken out
};

FactoredSums factor_sums(const ir::Function &f);

}  // namespace tad::passes
