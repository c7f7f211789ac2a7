// Access analysis: how the backward's gradient writes are shared among the programs of a launch.
//
// Reverse mode turns each forward load of a differentiated pointer parameter into a write of its
// gradient through the same addresses. Whether that write can be a plain store, or must be reduced
// (across programs, across loop iterations) or scattered, follows from the load's address as an
// affine form over the program ids, the tile's lanes and the loop iterations (affine.h):
// - *disjoint*: the addresses of all loads of the parameter, over every program, lane and
//   iteration, are pairwise different, proved by a mixed-radix argument: the index variables (or
//   compound indices a mask bounds, `pid*BLOCK + lane < N`) sorted by coefficient, each coefficient
//   exceeds the span of all smaller ones. Two loads at a constant distance (`P + offs` and
//   `P + N + offs` with `offs < N`) are one more digit. What the proof cannot settle statically
//   (`stride >= N`) becomes a run-time guard; a plain store is right only where the guards hold.
// - *reduced over grid axes*: the address does not depend on some program_id axes the kernel uses:
//   every program along them writes the same elements (LayerNorm's dW, a bias gradient).
// - *reduced over a loop and grid axes*: as above, and the address moves with a loop's iteration
//   (matmul's dA and dB, attention's dK and dV).
// - *reduced over a loop*: the load sits in a loop but reads the same addresses each iteration; one
//   program sums over the iterations.
// - *scatter*: the address depends on a loaded value (embedding, scatter_add): atomics are inherent.
//   Where the parameter's other loads are disjoint (cross entropy's row beside its target's logit),
//   only the scatter's writes need them (`split`).
// - *unproven*: none of the above could be shown; the reason names the op.
// Disjoint writes may also reach every element of their buffer (then it needs no zero fill): each
// index of the address takes every value of its range, a mask's compound index (`pid*BLOCK + lane`,
// `k*BLOCK + lane` over a loop's iterations) every value below its bound, and the address starts
// at the buffer's first element (Coverage in passes.h; which tensor layouts that is, the plan
// checks at run time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

struct LoadAccess {
    enum Class { Disjoint, ReducedGrid, ReducedLoopGrid, ReducedLoop, Scatter, Unproven };
    int op = -1;  // the load
    Class cls = Unproven;
    // ReducedGrid, ReducedLoopGrid: what of the grid the address does not depend on: "grid axis 0",
    // or a part of a split axis, "grid axis 0 // H", "grid axis 0 % H"
    std::vector<std::string> over;
    std::vector<int> loops;  // ReducedLoopGrid: loops it moves with; ReducedLoop: loops it does not
    std::string why;  // Scatter, Unproven: what decided it
};

// The verdict on one differentiated pointer parameter: its loads, and for the parameter as a whole
// the class of its gradient buffer's writes (Disjoint only when every load is and their union is).
struct GradAccess {
    std::string param;
    LoadAccess::Class cls = LoadAccess::Unproven;
    // Disjoint, or Scatter with `split`: run-time conditions of the proof, e.g. stride >= N, as
    // alternatives (one per order of the index variables that proves it: row- or column-major
    // strides), each a conjunction; none where the proof needs no guard.
    std::vector<std::vector<Inequality>> alternatives;
    // Scatter: the loads that are not scatters are, together, disjoint: their writes can be plain
    // stores, with the scatter's in a kernel run after them (split_scatter.h).
    bool split = false;
    // Disjoint, or Scatter with `split`: what the plain stores reach, when they can reach all of the
    // buffer (every address index takes every value of its range: Coverage); `uncovered` says why not.
    std::optional<Coverage> cover;
    std::string uncovered;
    std::string why;  // Unproven although every load alone is disjoint: why their union is not
    std::vector<LoadAccess> loads;
};

// One verdict per parameter of `wrt` that `f` loads, in `wrt` order.
std::vector<GradAccess> analyze_access(const ir::Function &f, const std::vector<std::string> &wrt);

// Whether the lanes of a pointer tile outside loops, over every program id of grid `axes` (the other
// axes held fixed), address pairwise different elements: proved by the mixed-radix argument without
// run-time guards; `why` says why not.
bool writes_distinct(const ir::Function &f, Affine &a, ir::ValueId ptr, const std::vector<int> &axes, std::string *why);

// Whether the writes through `ptrs` where `mask` holds, over every lane, every program id of grid
// `axes` and every iteration of loop `loop` (index in ir::loops(f); -1: none), address pairwise
// different elements: the mixed-radix proof with the mask's bounds. Several pointers (the unrolled
// taps of a convolution adding into one weight gradient) must share one index map and lie at
// constant distances from one another, one more digit. What it cannot settle statically becomes
// guards: `alternatives`, each a set of guards that suffices (one per order of the index
// variables: row- or column-major strides); `why` says why not.
// Where no mask bounds the compound `start + lane` of a loop that walks its range in tiles of its
// step, the loop's range bounds it under the guard that the step divides it (access.cpp:
// loop_bounds); `range`, where given, is that range instead of the loop's own (a transposed kernel
// over several loops spans them all).
bool writes_distinct(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs, ir::ValueId mask,
                     const std::vector<int> &axes, int loop, std::vector<std::vector<Inequality>> *alternatives,
                     std::string *why, const Poly *range = nullptr);

// Whether one program writes each element at most once through `ptrs` where `mask` holds (several
// pointers as above: one index map, constant distances apart), over every lane and every iteration
// of `loops` (indices in ir::loops(f): every loop holding the writes): the mixed-radix proof with the
// program ids held fixed, except where a mask bounds them together with a lane or an iteration
// (`pid*BLOCK + lane < N` stays one digit, bounded by N). What it cannot settle statically becomes
// `alternatives` as above; `why` says why not. Whether programs write distinct elements is not
// asked: two programs writing one element race in the forward already.
bool writes_once_per_program(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs, ir::ValueId mask,
                             const std::vector<int> &loops, std::vector<std::vector<Inequality>> *alternatives,
                             std::string *why);

// The extent of loop `loop`'s variable over every program, hi at the last program minus lo at the
// first, where lo and hi are affine in the program ids of axes outside `axes` with nonnegative
// factors (`guards` get the conditions for those that are not numbers); nullopt where not.
std::optional<Poly> loop_extent(const ir::Function &f, Affine &a, int loop, const std::vector<int> &axes,
                                std::vector<Inequality> *guards);

// What the writes through `ptrs` (as above: one index map, constant distances apart) where `mask`
// holds reach when they reach every element of the buffer from its first (each index takes every
// value of its range: Coverage); nullopt and `why` when not.
std::optional<Coverage> write_coverage(const ir::Function &f, Affine &a, const std::vector<ir::ValueId> &ptrs,
                                       ir::ValueId mask, std::string *why);

// "dX: disjoint if stride >= 2*N" and a line per load, indented, with its file:line:col.
std::string print(const ir::Function &f, const std::vector<GradAccess> &accesses);

}  // namespace tad::passes
