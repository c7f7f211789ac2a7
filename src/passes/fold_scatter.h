// Scatter fold: the scatter split (split_scatter.h) with each scattered add that lands on an element
// its own program stores added to that store instead, so that the scatter kernel adds only what
// lands elsewhere.
//
// Cross entropy's backward stores its row's gradient p and scatters -1 onto the target's logit,
// which, for a target inside the row, is an element the same program stores. Split alone, the
// gradient must stay float32 until the scatter kernel has added onto it (rounding p first would
// cancel what the add brings, p - 1 at p near 1), then be cast: three passes over a buffer twice
// the input's size. Folded, the store writes p - 1 itself, rounded once, in the input's dtype.
//
// What it proves and rewrites: each scattered write (one scalar address, outside loops, computed
// before the loops whose stores it folds into) is compared, by element offset from the parameter,
// with every lane of every plain store to the same parameter; where they match and both masks hold,
// the store's value gets the scattered value added. The stores are disjoint over the launch (the
// access analysis), so a matched add is folded exactly once. Each program records which of its
// scattered writes it folded, one bit each, in `hits` (int32, one element per program, indexed by
// the linear program id), written unconditionally at its end; the scatter kernel, run after, adds
// only where its bit is clear. What the scatter kernel still adds goes onto the stored values in the
// buffer's dtype (a target outside the row: an unusual kernel, one extra rounding). Refused (`why`)
// where the split is, and for a scattered write in a loop, of a tile, after the stores, or an
// address reached other than through pointer offsets and broadcasts.
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace tad::passes {

struct ScatterFold {
    ir::Function rest, scatter;  // both take `hits` as their last parameter
    std::string hits;
    std::string why;  // why not (then the rest is empty)
};

ScatterFold fold_scatter(const ir::Function &f, const std::set<std::string> &params);

}  // namespace tad::passes
