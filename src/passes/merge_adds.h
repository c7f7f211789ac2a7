// Merging one buffer's atomic adds across sibling loops into the last of them.
//
// Reverse mode gives every forward loop that loads a differentiated input a reverse loop of its
// own, and each adds its term of the gradient: group norm's three passes over a group (mean,
// variance, normalization) each add a term of dX, three float32 read-modify-writes per element.
// merge_loop_adds() moves the terms into the last of those loops, which adds their sum once.
//
// It applies to a buffer whose every write is an atomic add inside top-level loops over one range
// (the same lo, hi and step values, so iteration k of each is iteration k of the last), each add's
// address and mask being the last loop's up to the induction variable, and which no op reads or
// stores to. The last loop recomputes each earlier term from the same iteration's values: the ops
// of the term's cone inside its loop are copied, that loop's induction variable read as the last
// loop's. What makes the copy compute the same values: the cone reads no loop-carried value and no
// nested loop, and loads only buffers no op of the kernel writes; the values it reads from before
// its loop are visible in the last loop. A cone holding a dot is left alone: recomputing it would
// cost more than the adds it saves.
//
// After the merge, each element gets one add per program; adds_to_stores (adds_to_stores.h) turns
// that add into a plain store where no two programs or iterations write one element.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct MergedAdds {
    ir::Function fn;
    std::vector<std::string> params;  // the buffers whose adds were merged
    std::string report;  // a line per buffer added to in several loops: merged, or why not
};

MergedAdds merge_loop_adds(const ir::Function &f);

}  // namespace tad::passes
