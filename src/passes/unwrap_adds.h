// Unwrapped adds: an atomic add at a wrapped index `x % d` moved to `x`, under `x < d`.
//
// A kernel may keep its loads in bounds by wrapping its offsets instead of masking them,
// `offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M` (the Triton tutorial's matmul). Reverse
// mode then adds the loaded tile's gradient at the wrapped address: the lanes past M add onto rows
// 0, 1, ... again. Such an address is not affine in the lanes, so the schedule passes cannot tell
// which program owns an element, and the add stays atomic. Those lanes only ever add 0, though: the
// forward stored nothing from them (its store is masked by `x < M`), so the gradient it receives is
// loaded as 0 there. unwrap_adds() rewrites the add to address `x` itself under the mask `x < d`, an
// affine address that loop transposition (transpose.h) can give to one program.
//
// What it proves. x is an affine index never below 0: program ids, lanes and loop iterations with
// no negative coefficient, over symbols that are not negative (affine.h's Division, with no run-time
// condition on the dividend). So on the lanes where x < d, x % d is x and the address is the same;
// on the lanes where x >= d, the value added is 0 (off_mask.h: zero_off_mask, on the mask `x < d`
// built as the frontend builds `x[:, None] < d`), so leaving those adds out changes no sum. d is any
// loop-invariant scalar: where d <= 0 no lane is below it, every value is 0, and no add is left.
//
// What it rewrites. The address is computed again from x wherever it read the remainder (the ops
// between them are copied; the remainder's other readers keep it). A pointer that the add's loop
// carries, advancing it by an amount that does not read the remainder, gets the copy as its initial
// value, where that pointer serves this add alone. The add's mask becomes `mask & (x < d)`, broadcast
// to its tile. One remainder at a time, until none is left to unwrap.
//
// Refused, with a line in `report` naming the add and the remainder: a remainder that reaches the
// address through a load, a loop result, an outer loop's carried value, or two operands of one op; a
// carried pointer that other ops read; a dividend that may be negative; a value not proved 0 past d.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tad::passes {

struct UnwrappedAdds {
    ir::Function fn;
    int unwrapped = 0;  // remainders unwrapped
    std::string report;  // a line per add at a wrapped address: unwrapped, or why not
};

UnwrappedAdds unwrap_adds(const ir::Function &f);

}  // namespace tad::passes
