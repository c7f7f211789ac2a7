// The replay of forward ops, as both modes do it: a derived function (backward or tangent kernel)
// recomputes its forward program's values before it differentiates them.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tad::ad {

// Appends a copy of forward op `op` reading the replay of its operands (`primal`, per forward
// value), names its result as the forward's and records it in `primal`; returns it (kNoValue for an
// op without a result). The masked-off lanes of a masked load without `other` are undefined; the
// replay reads them as 0 (other = 0), so that both modes compute the same function and no
// reduction over the tile can turn NaN. A stop_gradient or grad_via emits nothing: its replay is
// its operand 0's. Nor does replay_as(v, w): its replay, and v's from then on, is w's.
ir::ValueId replay_op(ir::Builder &b, const ir::Function &fwd, const ir::Op &op, std::vector<ir::ValueId> &primal);

}  // namespace tad::ad
