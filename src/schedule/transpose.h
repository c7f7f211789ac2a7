// Schedule decision: loop transposition of a launch's backward (passes::transpose_loops). Each
// gradient the backward reduces over a loop and a grid axis with atomic adds (matmul's dA and dB)
// gets a kernel of its own that owns its elements and writes them once, in the input's dtype.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "plan/derivation.h"

namespace tad::schedule {

// TAD_TRANSPOSE: "on" (or unset: up to 8 iterations per program), "off" (0), or 1..8 (at most that
// many iterations per program); anything else is an invalid argument.
int transposing(const char *env);

// TAD_TRANSPOSE_RECOMPUTE: "1" lets a transposed kernel compute again one contraction the rest of
// the backward also computes, per gradient it writes (passes::transpose_loops' `recompute`);
// unset or "0": none. Off by default: on the H100, attention's dK/dV kernel made this way is slower
// than the atomic adds it removes (docs/compiler.md).
int recomputing(const char *env);

// TAD_STASH: "on" (or unset) lets a transposed kernel load a value another loop computes from a
// stash the rest of the backward stores (passes/stash.h); "off" keeps such gradients atomic;
// anything else is an invalid argument.
bool stashing(const char *env);

struct Transposition {
    std::vector<plan::Transposed> kernels;
    std::vector<passes::Stash> stashes;  // what the rest stores for the kernels (passes/stash.h)
    plan::Guards guards;  // when the transposed kernels are right (the disjointness proofs' guards)
    bool rest = true;  // whether the backward still writes anything
};

// Rewrites `b` (without the transposed writes, through `cleanup`) when some gradient transposes.
// `keep`: gradient parameters that stay atomic (a shadow other launches, or other parameters of
// this launch, also write); `max_copies`: iterations per program at most (0: no transposition).
// A backward with a tape is left alone. `report` gets passes::transpose_loops' report (one line per
// transposed kernel and per atomic add inside a loop that stays).
// `stash`: stashing(TAD_STASH).
std::optional<Transposition> transpose(ad::Backward &b, const std::set<std::string> &keep, int max_copies,
                                       int recompute, bool stash, const ad::Cleanup &cleanup, std::string *report);

}  // namespace tad::schedule
