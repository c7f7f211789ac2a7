// Combining atomic adds whose lanes share addresses.
//
// An atomic add of a tile whose offsets come from an integer division or remainder of lane indices
// (group norm's per-channel dW at `W + g * C_per_G + offs // HW`) sends many lanes to one element:
// the adds serialize there (group norm: every lane of a 1024-wide block onto the same channel,
// nearly all of the backward's time). combine_atomics() rewrites such an add so that, when the
// active lanes' offsets lie in lo and lo + 1, the tile adds the sum of its lanes at each with two
// scalar atomic adds; otherwise every lane adds as before. The test runs in the kernel for each
// tile (min and max of the active offsets, then a scalar comparison), so it holds for every shape
// and size; a block that straddles two channels still combines. Where the offset is a monotone
// function of the lane index (tl.arange(0, n) through +, - and * with lane-independent values,
// division by a lane-independent value, widening integer casts) and the mask leaves lanes 0..last active (`s + tl.arange(0, n)
// < bound`, or no mask), the min and max are the offsets at lanes 0 and last, in some order: two
// scalar evaluations instead of two reductions over the tile (group norm's `g * C_per_G + offs //
// HW`; integer wrap-around, which would break monotony, would be a bug of the forward's own
// indexing). The tile size in `last` is spelled as the kernel spells it (a constexpr by name). A count of the active lanes at
// neither value would also combine two values further apart, which monotone offsets like a
// channel never take; dropping it made group norm's backward 1-4% faster on the H200.
//
// Adds whose offsets have unit steps through a division are segment_atomics.h's (it runs first and
// takes them whole); the monotone closed form and shared_lanes() live in lane_ends.h.
//
// What makes it sound: the sums are the same contributions reassociated, and relaxed atomic adds
// fix no order of the contributions anyway. The adds rewritten: those whose address is a pointer
// the same for every lane plus an integer offset tile that is not affine in the lanes (affine
// offsets with a lane term never repeat) and reads no loaded value (a gathered offset, as in
// embedding or scatter_add, rarely repeats within a tile: the test would cost every tile).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct CombinedAtomics {
    ir::Function fn;
    std::vector<std::string> params;  // the pointer parameters whose adds were rewritten, first seen first
};

CombinedAtomics combine_atomics(const ir::Function &f);

}  // namespace tad::passes
