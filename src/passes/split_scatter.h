// Scatter split: the writes of a gradient at data-dependent addresses, moved to a kernel of their
// own so that the rest of the gradient can be stored plainly.
//
// Reverse mode of a kernel that loads one parameter both at addresses the access analysis proves
// disjoint (cross entropy's row, walked block by block) and at an address that depends on a loaded
// value (the logit at the row's target) must write its gradient with atomics into a zeroed float32
// buffer: the scatter may land on an element another program stores. split_scatter() writes two
// kernels instead, run one after the other on the same grid: `rest`, the input without the
// scatter's writes (its other writes reach each element at most once: plain stores), and `scatter`,
// the input with every write removed but the scatter's, which become relaxed atomic adds. Each
// element then receives the sum of its contributions, as before. (The plan keeps a half-precision
// gradient in float32 until both ran: rounding the stored value first could cancel what the scatter
// adds, cross entropy's p - 1 at p near 1.)
//
// What makes it sound: the second kernel runs after the first has finished, so its adds land on
// the stored values; both compute what the input computes, because neither reads a buffer the
// input writes (then no read depends on which writes ran). A kernel that reads a buffer it writes is
// refused (`why`). The caller's cleanup removes what only the removed writes used.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct ScatterSplit {
    ir::Function rest, scatter;
    std::string why;  // why not (then `rest` and `scatter` are empty)
};

// Per op of f: whether it writes (store or atomic add) one of `params` at an address that depends
// on a loaded value. The writes split_scatter() moves, and fold_scatter() folds, in op order.
std::vector<bool> scattered_writes(const ir::Function &f, const std::set<std::string> &params);

// `params`: the gradient parameters whose writes at data-dependent addresses move (each must have
// one; `why` says which has none).
ScatterSplit split_scatter(const ir::Function &f, const std::set<std::string> &params);

}  // namespace tad::passes
