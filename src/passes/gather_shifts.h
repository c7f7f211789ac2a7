// Atomic adds at shifted lanes gathered into one add per element (scatter to gather by a lane shift).
//
// A forward that reads one input at several shifts of a lane index (a causal convolution's taps at
// t - 3 .. t, token shift's x[t] and x[t - 1]) has a backward that adds a term of the gradient at
// each shift: several float32 atomic adds per element, as many programs touching each one.
// gather_shifted_adds() picks one add as the reference and rewrites every other add to the same
// buffer, at the reference's address plus δ, as a term of the reference add: the program lane that
// owns element e at the reference computes the term that lane u + k computed for e, by copying the
// term's ops with the lane's tl.arange R read as R + k (k · the lane's address coefficient = -δ).
// The sum is added once per element; adds_to_stores (adds_to_stores.h) then proves it a plain store.
//
// What makes the copy compute what lane u + k computed: u = B · pid_a + R, the lane's index over
// the grid (B = R's size, pid_a the program id tiled by R, if any), and every integer value the
// term reads at a load, a comparison, a float cast or any other non-index op is an affine function
// of u and of coordinates the shift leaves alone (pid_a appears only as B · pid_a beside R; no other
// tl.arange shares R's dim); every value the term is made from varies with R along one dim at most
// (the add's own along its address's), R's dim is never reduced, transposed, reshaped, contracted or
// scanned, and no loop is read. R starts at 0 and B is a constexpr's name or a number every launch
// the backward serves shares (not `2 * BLOCK` for a BLOCK it serves several values of: E could not
// be spelled). The term's copied loads read only buffers the kernel never writes.
// What makes the sum right: every term is masked by its own copied mask and by E = u + k < B · G_a
// (lane u + k is one the grid runs, tested as R + k < B · min(G_a - pid_a, (B + k) // B + 1): no
// product overflows; loads are masked by E too, so no copy reads past what the grid read), so the gathered set adds no term the grid did not; and every term the grid added lands on an
// enumerated lane u of the reference with its mask true: the copied mask must imply the
// reference's (each bound of the reference's mask implied by one of the copy's) and u >= 0 (a bound
// of the copy's mask, `t - 1 >= 0` at t = u + 1), with k > 0. Both are checked on the rewritten
// kernel's affine forms, as is the copy's address being the reference's exactly.
// It applies to a buffer only added to (never read or stored), by adds outside loops with one tile
// shape. Where it does not apply, the adds stay as they were; `report` says why.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct GatheredShifts {
    ir::Function fn;
    std::vector<std::string> params;  // the buffers whose adds were gathered
    std::string report;  // a line per buffer added to at several addresses outside loops: gathered, or why not
};

GatheredShifts gather_shifted_adds(const ir::Function &f);

}  // namespace tad::passes
