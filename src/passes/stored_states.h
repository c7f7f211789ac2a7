// Reading a recurrence's states back where its forward stores them.
//
// A loop that carries a state h (h' = f(h, ...), a scan or a gated linear recurrence) and stores
// each new state at every iteration needs, reversed, the state each iteration started from. Reverse
// mode alone recovers it by running the forward loop again: onto its tape (one more pass over the
// inputs, a tape store and load per step) or, untaped, up to each iteration (quadratic). The
// forward stored those states already: the state entering iteration t is the loop's init at its
// first iteration and what iteration t - step stored otherwise. reuse_stored_states() rewrites a
// forward for reverse mode only: right after the loop's carried values it loads that element
// through the buffer's final parameter (ir::Param::final_of) and reads h as
// replay_as(h, where(t == lo, init, loaded)). h keeps its gradient (dh still flows back through the
// carried value), but no value of the loop's own h is needed any more: reverse mode neither tapes
// nor reruns it (ad/reverse_recompute.cpp), and the backward is one reverse-time loop carrying dh.
//
// Where it holds: a top-level loop; h a float carried value whose value reverse mode needs
// (value_needed); a store, in the loop's body outside nested loops, of h's next value (or of a float
// cast of it that does not narrow), of h's shape, the only write of the kernel to a buffer the
// backward finds as the launch left it (`kept`), of an element type not narrower than float32 in
// the trace (another launch's narrower buffer is read back rounded, as in saved_values.h, so
// nothing may compare or round h: read_back.h's exactness_matters); its address and mask computed
// from the loop variable, carried values that only advance by an amount from before the loop
// (`p += D`, passes::advance_of: the previous step's is init + (k - 1) · amount, the init through
// the final buffer) and values from before the loop, without memory; and each element written
// once over every program and iteration (access.h's writes_distinct, with run-time guards where it
// needs them). A masked store's mask must not change with the iteration, and h's lanes off it must
// reach nothing that matters (read_back.h's lanes_off_unread): they are read back as 0.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/saved_values.h"

namespace tad::passes {

// `report` gets a line per store of a carried value's next value into a kept buffer: whether the
// backward reads it back, or why not.
SavedReuse reuse_stored_states(const ir::Function &f, const std::vector<std::string> &kept, std::string *report);

}  // namespace tad::passes
