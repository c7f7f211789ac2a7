// Persistent re-grid of a backward kernel whose gradients are reduced over grid axes.
//
// A backward program of a kernel adds its share of some gradients, at
// addresses that do not depend on tl.program_id(g) (LayerNorm's dW and dB, a bias gradient), with
// relaxed atomics: every program adds into the same elements. regrid() rewrites the kernel so that
// program p of a grid of P programs runs the forward's programs r = p, p + P, ... < G (G, the
// forward grid's size along g, becomes a scalar parameter; tl.program_id(g) is r inside the loop,
// tl.num_programs(g) is G) and sums those gradients in registers, flushing them once per program.
//
// What makes it sound: programs share nothing but global memory, and a backward's writes are
// disjoint per program (plain stores the access analysis proved disjoint) or atomic adds, which
// commute; so running several programs' bodies one after the other in one program changes no
// result. Reading a buffer the kernel also writes would observe the order: a gradient that is
// loaded or stored is not accumulated. A gradient with several atomic adds (the unrolled taps of
// a convolution into its weight's gradient) gets one accumulator per add. The IR has no control
// flow but loops, so wrapping the body in one is always well formed. Ops that depend on neither
// the program id nor memory are hoisted before the loop (the accumulated gradients' addresses and
// masks among them: an atomic whose address or mask cannot be hoisted stays an atomic in the
// loop, and so does every other add into its buffer).
//
// The flush is a plain store into row p of a float partial buffer [P, span of the gradient] (the
// kernel parameter then points at that buffer, plus `<param>_slab` elements per row; a following
// step sums the rows in a fixed order: deterministic; zero-filled unless the flush reaches every element
// of its row, `covers`), or with `atomic_flush` one relaxed atomic add
// per program into the gradient itself. A plain-store flush needs the lanes of the tile to address
// different elements (proved on the address's affine form, with the flush's mask bounding its
// indices, under run-time conditions where it needs them; otherwise that gradient keeps atomics).
// The adds of one gradient share a mask, and their addresses lie at constant distances: one more
// digit of the proof (a tap's column beside the channel's row).
// Other grid axes keep their programs: row p of the partial buffer is then written by every program
// (p, other ids), so the flush's addresses must also differ across those ids (proved as the lanes).
//
// Several axes: a gradient every program adds into, whatever its ids along axes S (qk_rmsnorm's dW,
// reduced over token blocks, heads and batch), is re-gridded over all of S at once: P programs
// along S's first axis (the others launched with one program) loop over the G_0 * G_1 * ... programs
// of S, r decoded into one id per axis (the first varying fastest). That count is an int32 in the
// kernel; executors refuse a launch whose G + P reaches 2**31. The set S taken is the one
// that accumulates the most gradients (then the larger set, then the first in axis order).
// Does not fire (fired == false, `why` says why) when no atomic add qualifies along any set of axes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

struct Regrid {
    bool fired = false;
    std::string why;  // when not fired
    std::vector<int> axes;  // the re-gridded grid axes, ascending; P programs run along the first
    std::vector<std::string> grid_params;  // per axis, the scalar parameter holding its G
    // Gradient parameters flushed into a partial buffer, and each one's row-stride parameter.
    std::vector<std::pair<std::string, std::string>> partial;
    // Per partial, what its flush reaches of a row, when that can be the whole gradient (the atomic
    // add's address and mask, write_coverage in access.h): where it holds, every program writes every
    // element of its row, and the partial buffer needs no zero fill.
    std::vector<std::optional<Coverage>> covers;
    std::vector<std::string> accumulated;  // every gradient summed in registers (partial or atomic flush)
    // Where a partial flush's lanes are distinct only under run-time conditions (FiLM's per-sample
    // gradient at b · stride + c, c < C: stride >= C), per such gradient the alternatives of which
    // one must hold; the executor then needs the kernel as it was beside this one.
    std::vector<std::vector<std::vector<Inequality>>> when;
    ir::Function fn;  // the rewritten kernel (a copy of the input when not fired)
};

Regrid regrid(const ir::Function &f, bool atomic_flush);

// "regrid axis 0 over G: dW (partial, dW_slab, rows covered) dB (atomic flush)", "regrid axes 0, 1 over G0, G1:
// ..." or "not re-gridded: why".
std::string print(const Regrid &r);

}  // namespace tad::passes
