// Loop transposition (scatter to gather) of the gradients a backward kernel reduces over a loop and
// a grid axis.
//
// Reverse mode of a kernel that loads an operand tile inside a loop, at an address that moves with
// the loop and ignores one grid axis g (matmul's A tile at (pid_m, k), shared by every pid_n), adds
// that tile's gradient with an atomic add at every iteration of every program: program (.., p_g, ..)
// adds its share at iteration i. transpose_loops() writes a kernel that owns the sums instead (one
// per group of such gradients, below): program (.., t, ..) of a grid whose size along g is the loop's trip count takes
// i = t, loops p_g over 0 .. G-1 (G, the forward grid's size along g, a new scalar parameter),
// computes what program (.., p_g, ..) added at iteration i, sums it in float32 registers (float64
// for float64), and
// stores the sum once. A program may own R consecutive iterations: better as one tile R times wider
// (the same kernel launched with the tile's constexpr R times larger, where widen.h proves the
// kernel independent of its value), else as R copies of the slice (R output tiles that share what
// does not move with the iteration, matmul's dC tile).
//
// What makes it sound: the atomic adds commute, so the sum over p_g of each (other ids, i)'s
// contributions is the element's gradient whenever no two (other ids, i, lane) reach one element:
// proved on the address's affine form over the other grid axes, the loop's iterations and the
// lanes, with the mask's bounds (`access.h`); what the proof cannot settle is a run-time guard. The
// contribution at iteration i must be computable without running iterations 0 .. i-1: every value
// it reads from the loop is the loop variable (lo + i·step) or advances by a loop-invariant amount
// each iteration (a pointer `+= BLOCK_K * stride`: init + i·amount, in int64 as the repeated
// additions would be). It may read only buffers the backward never writes, and the loop's bounds
// must be computable on the host from the launch's integer arguments and constexprs (they size the
// grid). Values that do not depend on p_g are computed once, before the loop over p_g.
//
// One buffer's adds in several top-level loops (the Triton tutorial's causal attention runs its key
// loop below the diagonal, then on it, and adds dK and dV in both) transpose into one kernel when the
// loops start at one value and step alike and the adds are at one address as a function of the loop
// variable (same_in_loops.h): program t owns the value x = lo + t·step and sums, loop after loop,
// over the programs whose loop has x. A loop whose start also rises with p_g (the diagonal block,
// `range(p·BLOCK_M, (p + 1)·BLOCK_M, BLOCK_N)`) is walked by its variable's value: its programs are
// those with lo(p) <= x < hi(p), found by binary searches, under the guard that lo moves by whole
// steps per program; its adds are proved disjoint by the proof of the buffer's add in a loop whose
// start is the same for every program.
//
// A loop whose end rises with p_g (rising_end.h: a causal attention's `hi = min((start_m + 1) *
// BLOCK_M, N)`, a triangular loop's `range(0, p + 1)`), whose start is computable on the host and
// whose step is a positive constant, has iteration i in programs p_lo .. G-1 only: the grid is sized
// by the last program's trip count, and the kernel finds p_lo by a binary search (32 halvings of
// [0, G], each computing the end at the middle program) and loops p_g over p_lo .. G-1. Then each
// program owns one iteration (no copies, no widening), and the conditions that make the end rise
// (its factors' signs) join the proof's guards.
//
// The atomic adds of one loop shared along one grid axis (attention's dK and dV) go into one kernel,
// which computes their common slice once. Where that slice holds contractions the rest of the
// backward computes too, the transposed kernel does that work a second time (the FlashAttention-2
// backward: seven contractions for the five of the atomic schedule); `recompute` bounds it.
//
// A value the slice reads that the forward computes outside the loop from another loop's results
// (matmul's epilogue gradient, from the K loop's sum) is stashed (stash.h): the rest stores it once
// per program, the transposed kernel loads it. Its block sizes then stay as launched (no widening
// of a constexpr that sizes the value, no free tiles): the stash is laid out by the forward's grid.
//
// The rewrite leaves `rest`: the input without the transposed atomic adds (the caller's cleanup
// removes what only they used). An atomic add that does not qualify stays in `rest`; `report` has one
// line per transposed group and per atomic add inside a loop that stays, saying why.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/host_expr.h"
#include "passes/stash.h"
#include "passes/widen.h"

namespace tad::passes {

struct Transposed {
    std::vector<std::string> params;  // the gradients it writes, with plain stores
    int axis = 0;  // the grid axis whose program ids now index the loop's iterations
    std::vector<int> kept;  // the other grid axes the kernel reads, which keep their programs
    std::string grid_param;  // the scalar parameter receiving G, the forward grid's size along `axis`
    TripCount trips;  // the new grid's size along `axis` (trips.per: iterations per program)
    // How many of the forward's loops add to its buffers: more than one where a buffer's adds are
    // in the loops of a chain (the stages of a causal attention's key loop), each program then
    // owning one value of the loops' variable in all of them.
    int loops = 1;
    // Launched with constexpr `widening.name` widened (widen.h): each program owns a tile that many
    // iterations wide, and `trips` is evaluated with that value; name "" when not widened, then
    // `unwidened` says why (empty when widening was not tried).
    Widening widening;
    std::string unwidened;
    // Other block sizes the launcher may set (widen.h: free_tiles), with their targets.
    std::vector<FreeTile> tiles;
    // Run-time conditions of the disjointness proofs, one entry per gradient: any one of an entry's
    // sets of guards suffices.
    std::vector<std::vector<std::vector<Inequality>>> guards;
    std::vector<Stash> stashes;  // the stashes it loads (the rest stores them)
    ir::Function fn;
};

struct Transposition {
    std::vector<Transposed> kernels;
    std::vector<Stash> stashes;  // those the rest stores, for the kernels
    ir::Function rest;
    std::string report;
};

// `keep`: gradient parameters that stay atomic whatever (a shadow other launches also write).
// `max_copies`: at most this many iterations per program (coarsening; 1: one each).
// A proof's alternatives of run-time conditions as text: " if a >= b and c >= d or e >= f", "" without
// guards.
std::string guards_text(const std::vector<std::vector<Inequality>> &alternatives);

// `widen`: whether R iterations per program may be one tile R times wider (widen.h) rather than R
// copies. `recompute`: how many contractions the rest of the backward also computes (attention's
// scores and dP) a transposed kernel may compute again per gradient it writes; 0 keeps such
// gradients atomic. `stash`: whether values from another loop may be stashed (stash.h); without,
// a slice that reads one keeps its atomics.
Transposition transpose_loops(const ir::Function &f, const std::set<std::string> &keep, int max_copies = 8,
                              bool widen = true, int recompute = 0, bool stash = true);

}  // namespace tad::passes
