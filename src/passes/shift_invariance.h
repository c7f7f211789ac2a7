// Maxima whose gradient is zero: a row's maximum subtracted before exp and divided out again.
//
// Softmax is written y = exp(x - m) / sum(exp(x - m)) with m = max(x) for range, not for meaning:
// replacing m by m + d for any d leaves y unchanged, so dy/dm = 0 exactly, and reverse mode's path
// through the maximum (the lanes equal to m sharing sum(-dz) / count, two more row reductions and a
// compare per row) adds only rounding. hold_shift_invariant_maxima() proves that for each maximum
// (reduce_max, outside loops) by tracking how every later value changes when it shifts by d
// (online_softmax_internal.h's Shift: shifted by s·d, or multiplied by e^(-w·d), row by row):
// every value that reaches a store to a differentiated output, or a loop, must
// be unchanged. Stores to other buffers (a saved statistic such as a logsumexp) pass no gradient
// back and may change. The proved maxima are read through stop_gradient, so reverse mode sends
// nothing back through them; the forward computes what it computed before. `report` gets one line
// per maximum held.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

ir::Function hold_shift_invariant_maxima(const ir::Function &f, const std::vector<std::string> &outputs,
                                         std::string *report);

}  // namespace tad::passes
