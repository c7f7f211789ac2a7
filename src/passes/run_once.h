// Loops that run once: a forward whose top-level loops each take one iteration at run time,
// rewritten without them, for the guards under which that holds.
//
// Real kernels walk a row in column blocks, `for off in range(0, N, BLOCK_SIZE)`, so that any N
// works, and launch with BLOCK_SIZE = next_power_of_2(N), so that the loop runs once (the Triton
// tutorial's LayerNorm). Reverse mode then adds dW and dB inside the loop, where no re-grid can
// keep them in registers (regrid.h: an add inside a loop), and each program adds its row
// atomically: M programs onto the same N elements. run_loops_once() rewrites the forward for launches
// where every such loop runs exactly once: the loop variable is lo, each carried value is its init
// in the body and its next value after it, and the body runs once, in place. The backward derived
// from that forward sees the adds outside loops (dW and dB reduced over the grid axis only: the
// re-grid sums them in registers). The rewrite is exact where the loop runs once: the same ops on
// the same values.
//
// Which loops: top-level loops over column blocks, whose step is a constexpr that sizes one of the
// kernel's tiles (BLOCK_SIZE) and whose start and end are polynomials of the launch's integer
// arguments and constexprs. A loop whose bounds are anything else (a division: `range(0,
// tl.cdiv(K, BLOCK_K))`, a program id) stays, and so does one stepping by 1 (a recurrence's time
// steps: running once is a degenerate launch there). `guards`: per rewritten loop, hi >= lo + 1 (it
// runs) and lo + step >= hi (not twice).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct RunOnce {
    ir::Function fn;
    std::vector<Inequality> guards;
    int loops = 0;  // loops rewritten
};

// nullopt where no top-level loop qualifies.
std::optional<RunOnce> run_loops_once(const ir::Function &f);

}  // namespace tad::passes
