// Updates in place that no two writes share, as plain stores.
//
// A forward that updates a buffer in place (fused_add_rmsnorm's Res, rope's Q and K) gives reverse
// mode, for each address a the forward reads and then stores, on the shadow holding the output's
// cotangent: `g = load(a); barrier; store(a, 0); barrier; ...; atomic_add(a, v)`: the cotangent read,
// the element zeroed (the overwritten value gets none of it), then the input's gradient added.
// Where the adds reach a different element at every lane, program and iteration (writes_distinct
// over all the buffer's adds at once, which also keeps the elements of different addresses apart),
// a program's zero and add are the only writes of those elements, and `store(a, v)` in place of the
// add writes what they leave. updates_to_stores() rewrites them so: the zero store goes, the add
// becomes a store, the loads and barriers stay (one still separates each load from the store that
// overwrites what it read). Per buffer: every access is a load, a store of zero or an atomic add;
// each address value (one SSA value) has one zero store, then one add, under one mask shared by all
// of the buffer's writes and loads, and no load of it between them; all in one loop body, not nested, or at
// the top level. The shadow keeps what it held (the cotangent): its plan write stays an accumulator.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct UpdatedParam {
    std::string param;
    std::vector<std::vector<Inequality>> alternatives;  // the proof's guards: one alternative suffices
};

struct UpdatesToStores {
    ir::Function fn;
    std::vector<UpdatedParam> updated;
    std::string report;  // a line per buffer, stored or why not
};

UpdatesToStores updates_to_stores(const ir::Function &f, const std::set<std::string> &candidates);

}  // namespace tad::passes
