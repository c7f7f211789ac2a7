// The addresses an atomic add's lanes share, and the ends of their range in closed form.
//
// Shared by combine_atomics.h and segment_atomics.h. An add qualifies when its pointer is a scalar
// plus an integer offset tile whose lanes may repeat (not affine in the lanes, no loaded value):
// group norm's per-channel dW at `W + g * C_per_G + offs // HW`. Where that offset is a monotone
// function of the lane index (tl.arange(0, n) through +, - and * with lane-independent values,
// division by a lane-independent value, widening integer casts) and the mask leaves lanes 0..last
// active (`s + tl.arange(0, n) < bound`, or no mask), the least and greatest active offsets are the
// offsets at lanes 0 and last, in some order: two scalar evaluations instead of two reductions.
// Integer wrap-around, which would break monotony, would be a bug of the forward's own indexing.
// The offset has unit steps when, moreover, no multiplication stretches it: neighbouring lanes then
// differ by at most 1 (a division of unit steps keeps them), so every integer between the ends is
// some active lane's offset and there are at most as many as active lanes. Only a division makes
// lanes repeat an address; without one, unit steps are all distinct.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

// The scalar pointer and the offset tile of `p = broadcast(scalar) + offset`, when the offset is an
// integer tile whose lanes may repeat (not affine, no loaded value); false otherwise.
bool shared_lanes(const ir::Function &f, Affine &a, ir::ValueId p, ir::ValueId *base, ir::ValueId *offset);

// Evaluates the ends of an add's offsets into a rewrite: values of `f` are read through `map` (f's
// value -> the rewrite's), new ops are appended through `b`.
class LaneEnds {
public:
    LaneEnds(const ir::Function &f, ir::Builder &b, const std::vector<ir::ValueId> &map) : f_(f), b_(b), map_(map) {}

    // Whether the add's offset tile is monotone in the lane with unit steps through a division (so
    // that lanes may repeat an address; without one, unit steps are distinct addresses) and its mask
    // leaves lanes 0..last active. Nothing is built.
    bool repeating_unit_steps(const ir::Op &add) const;
    // The scalar divisor of the division nearest the lanes in the add's offset (where
    // repeating_unit_steps holds), or kNoValue. Nothing is built.
    ir::ValueId innermost_divisor(const ir::Op &add) const;
    // lo / hi: the least and greatest active offset, any: some lane is active; false (possibly after
    // building unused ops) where the offset is not monotone or the mask not of the form above.
    bool ends(const ir::Op &add, ir::ValueId *lo, ir::ValueId *hi, ir::ValueId *any);

private:
    const ir::Function &f_;
    ir::Builder &b_;
    const std::vector<ir::ValueId> &map_;

    bool uniform(ir::ValueId v) const;
    bool widening(ir::ValueId from, ir::ValueId to) const;
    bool monotone(ir::ValueId v, bool *unit, bool *divided) const;
    bool prefix_mask(const ir::Op &add) const;
    ir::ValueId at_lane(ir::ValueId v, ir::ValueId lane);
    ir::ValueId tile_size(const ir::Dim &n);
    ir::ValueId last_lane(const ir::Op &add, const ir::Dim &n);
};

}  // namespace tad::passes
