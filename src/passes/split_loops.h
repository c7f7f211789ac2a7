// Splitting a program's loops across S programs (split_loops).
//
// A backward whose programs each walk a long axis twice has as many programs as its forward, often
// too few to fill the GPU, each running long serial loops: group norm's (sample, group) programs
// first sum dY·x̂ and dY over the group, then write dX from those sums. split_loops() rewrites such a
// kernel f into two kernels that run one after the other on f's grid with S programs along a grid
// axis f does not read (its recorded size 1):
// - `sums` (f's name + "_share_sums"): program (p, s) runs the loops that sum over its share s of
//   their iterations (iterations k of the n with s·⌈n/S⌉ <= k < (s + 1)·⌈n/S⌉, the same k as f's),
//   and stores each carried sum (a tile's: the sum of its lanes) into its row of the stash;
// - `rest` (f's name + "_shares"): program (p, s) adds the S rows of its stash in order s = 0, 1, ...
//   (the same result every run), stands each total in for the loop's result, computes what follows
//   the loops and runs the last loop over its share s.
// Every iteration of every loop still runs once, in one program, on the values f gives it; only the
// order of the sums' additions changes.
//
// Where it holds (else `why` says what): f's top level is ops without side effects, loops whose
// carried values are float32 sums (each starts at zero and adds a term that reads no carried value,
// and only the next iteration reads the running sum; their bodies write by atomic adds only), and
// last a loop that carries nothing; loops are not nested and step by a positive constant; no load
// reads a buffer f writes; what the summing loops read is computed before any loop ends; a tile
// sum's result is read only as a total (reduce_sum to a scalar, through negations and products of
// it with a scalar's broadcast), which `rest` gets from a tile holding the total in its first lane
// and zeros elsewhere (rank-1 tiles); some grid axis is read by no program_id or num_programs.
// `when`: the recorded grid's size along that axis is 1, the last loop runs at least 2·S iterations
// (each program then gets two or more), and f runs at most 2048 programs (more already fill the GPU).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/stash.h"

namespace tad::passes {

struct SplitLoops {
    ir::Function sums, rest;
    int axis = -1;  // the grid axis of the S programs
    int ways = 0;  // S
    Stash stash;  // per program of f's grid: S rows of one word per carried sum
    std::vector<Inequality> when;
};

// `why` stays empty where f has fewer than two loops (nothing to split).
std::optional<SplitLoops> split_loops(const ir::Function &f, int ways, std::string *why);

}  // namespace tad::passes
