// Issuing loads early: each load, with the ops computing its address, mask and `other`, moved up
// to the earliest point of its straight-line segment.
//
// Reverse mode puts a backward's loads where the gradient first needs them: a softmax backward
// recomputes the row's max and sum, then loads dY. Triton keeps that order, and the cross-warp
// reductions between them are barriers the GPU does not move loads across, so the load's latency
// is waited out after the reductions instead of overlapping them (softmax backward 5%, log_softmax
// 8-11% slower on the H200; bench/results/2026-12-02-h200-session3.md).
//
// A segment is a run of ops at one loop level between two writes: a store, an atomic add, a
// barrier, or a nested loop (taken whole, as one write). Where a load of a segment comes after a
// reduction or scan there, the segment's ops are scheduled again in their dependence order, its
// loads and every op a load reads from first, each group in its original order. Nothing crosses a
// segment's ends, so every load still reads memory after and before the same writes of its program
// as it did; the ops between are pure, so their values do not change.
// Left as they are, as moving their loads did not pay: segments without a load behind a reduction
// (GeGLU's elementwise backward ran 9% slower with its loads moved), the bodies of pipelined loops
// (pipeline_loops.h; their loads are prefetched iterations ahead already, and add_layernorm's ran
// 3% slower), and kernels with a dot (Triton pipelines the loads that feed a dot itself).
#pragma once

#include "ir/ir.h"

namespace tad::passes {

struct EarlyLoads {
    ir::Function fn;  // the input, reordered
    int moved = 0;  // loads now issued before some op that preceded them
};

EarlyLoads early_loads(const ir::Function &f);

}  // namespace tad::passes
