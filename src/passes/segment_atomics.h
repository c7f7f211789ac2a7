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
// without them the same kernel takes 0.159 ms instead of 0.252 (the combined form: 0.222). Without
// them, segments alone cost a reduction per address (HW 1: 1.4 ms against 0.016). So the rewrite
// comes in two forms: `fn`, with the lanes' own adds past 16 addresses, and `few`, without them
// (every tile's addresses by segments, however many: as correct, slow only where a tile spans
// many), with the run-time condition under which no tile spans more than 16 addresses. A division
// of n consecutive integers by D >= 1 takes at most (n - 1) / D + 2 values, at most 16 where
// 15 * D >= n: the condition is that inequality for the innermost division of each group's offset
// (a later division or addition only merges values), with D and n as the host computes them. The
// launcher picks `few` where it holds (session 8: fp16 HW 4096 0.255 -> 0.159 ms).
//
// What makes it sound: the sums are the same contributions reassociated (relaxed atomic adds fix
// no order anyway), deferred within one program only and only to buffers the kernel never loads.
// Adds sharing the offset tile, mask, memory semantics and loop (dW and dB) share one run state and
// one loop of each kind. Runs carry float32 and float64 only (a float16 run rounds at every step),
// and only where each add's scalar base is the same in every iteration (a run keeps an offset from
// that base: one moving with the loop would take an iteration's sums to another's address); a base
// the loop body computes is computed again after the loop for the last run's flush.
// The rest of an add's kind (offsets not of unit steps) is combine_atomics.h's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct SegmentedAtomics {
    ir::Function fn;
    std::vector<std::string> params;  // the pointer parameters whose adds were rewritten, first seen first
    int runs = 0;  // run states carried by loops
    // The rewrite without the lanes' own adds, and when each tile spans at most 16 addresses (all
    // of them hold); nullopt where some group's divisor or tile size is not a host value.
    std::optional<ir::Function> few;
    std::vector<Inequality> few_when;
};

SegmentedAtomics segment_atomics(const ir::Function &f);

}  // namespace tad::passes
