// Atomic adds by segments: a tile's few addresses added one by one, and runs of one address
// carried across a loop's iterations.
//
// An atomic add whose offsets are monotone in the lane with unit steps through a division
// (lane_ends.h; group norm's per-channel dW at `W + g * C_per_G + offs // HW`) touches every integer
// between its least and greatest active offset, at most one per active lane, and lanes repeat
// addresses. segment_atomics() rewrites it so that lanes add on their own only where a tile spans
// many addresses. Inside a loop, a tile whose active lanes share one address is added lane by lane
// into a run (a float tile the loop carries, with the run's address and whether it holds
// anything), and the run's sum is added once: when a later tile goes to another address, and after
// the loop. A tile that spans several addresses (every tile, outside a loop) is added by a loop over
// its addresses, each getting the sum of its lanes; past 16 addresses (a small divisor: group norm
// with HW = 1), by the lanes' own adds. Each of these is a loop (of 0 or 1 trips for the flush and
// the lanes' adds): the IR's only control flow.
//
// Measured on the H200 (bench/results/2026-12-03-h200-session7.md), group norm's backward against
// the combined form: fp32 22-23% faster (HW 1024 and 4096), HW 49 11x faster (0.312 -> 0.028 ms),
// HW 1 10% faster; fp16 at HW 4096 / 3136 13% / 23% slower. That last is the lanes' own adds: in a
// loop (0 or 1 trips, never taken there), even reading the trip, they slow the whole loop body down;
// without them the same kernel takes 0.159 ms instead of 0.252
// (the combined form: 0.222). Inside an `if` they cost nothing, but the IR has no `if` yet; and
// without a fallback, segments alone cost a reduction per address (HW 1: 1.4 ms).
//
// What makes it sound: the sums are the same contributions reassociated (relaxed atomic adds fix
// no order anyway), deferred within one program only and only to buffers the kernel never loads.
// Adds sharing the offset tile, mask, memory semantics and loop (dW and dB) share one run state and
// one loop of each kind. Runs carry float32 and float64 only (a float16 run rounds at every step).
// The rest of an add's kind (offsets not of unit steps) is combine_atomics.h's.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct SegmentedAtomics {
    ir::Function fn;
    std::vector<std::string> params;  // the pointer parameters whose adds were rewritten, first seen first
    int runs = 0;  // run states carried by loops
};

SegmentedAtomics segment_atomics(const ir::Function &f);

}  // namespace tad::passes
