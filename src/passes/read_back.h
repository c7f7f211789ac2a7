// Conditions under which a backward may read a value back from memory instead of computing it again:
// shared by the passes that do so (saved_values.h, stored_states.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

// Whether a derivative could change with v's last bits: an extremum's rule finds its arguments by
// equality, and a comparison, rounding or integer cast of v replayed in the backward picks branches
// by it. A value read back (rounded where its buffer is narrower on another launch) or undone
// (rounded) must not be one of those. `users`: ir::users(f).
bool exactness_matters(const ir::Function &f, const std::vector<std::vector<int>> &users, ir::ValueId v);

// Whether v's lanes off `mask` (a mask computed from no memory) reach nothing that matters, so that
// a backward may read v as 0 there. Each value computed from v is elementwise on v's tile, through
// ops whose values and derivatives stay finite at the 0 (no exponential, which 0 less a large offset
// overflows; no log, square root, power, division by it, or cast to a narrower float); what a loop
// carries it into (a yield: the loop's next value of that slot and its result) is computed from it
// too; and each write of one (op `save`, v's own store, aside) is masked by every conjunct of
// `mask`, so that its cotangent, and every cotangent on the way back to v, is 0 in those lanes, as
// with v's own value there. Masks are matched by value: one rebuilt rather than reused is not
// recognized.
bool lanes_off_unread(const ir::Function &f, const std::vector<std::vector<int>> &users, ir::ValueId v, int save,
                      ir::ValueId mask);

// The buffers a rewrite of f reads back from, as the launch left them: a parameter with
// ir::Param::final_of per buffer (pointer parameter) named in `bases`, once each, appended through
// b after f's parameters, and the stand-ins for them in v's recomputation (`recompute`).
class FinalBuffers {
public:
    FinalBuffers(ir::Builder &b, const ir::Function &f, const std::vector<std::string> &bases);
    const std::vector<ir::Param> &params() const { return params_; }

    // v computed again after the current op: `done`'s values (f's value -> b's) where it has them,
    // the final buffers in place of their parameters, and `map`'s values (f's value -> b's) for what
    // reaches neither.
    ir::ValueId recompute(ir::ValueId v, const std::vector<ir::ValueId> &map, std::map<ir::ValueId, ir::ValueId> &done);

private:
    ir::Builder &b_;
    const ir::Function &f_;
    std::map<ir::ValueId, ir::ValueId> final_of_;  // f's pointer parameters -> their final parameters
    std::vector<ir::Param> params_;
};

}  // namespace tad::passes
