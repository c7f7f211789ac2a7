// Schedule decisions for a launch's backward: how each gradient buffer is written.
//
// Reverse mode turns every forward load of a differentiated input into a write of its gradient
// through the same addresses. Each parameter's options, fastest first: a plain store that mirrors a
// forward store with the same addresses (passes::plan_gradient_writes), possibly only where pairs
// of scalar arguments are equal (`stride_x == stride_y`); a plain store into a buffer of the
// input's dtype (zeroed unless its stores' coverage holds) where the access analysis (passes/access.h)
// proves the writes disjoint, possibly only under bounds (`stride >= 2*N`), or all but a scatter's
// (those then move to a kernel of their own: schedule/scatter.h); relaxed atomic adds
// into a float32 buffer. Shadows several launches share are always atomics. Guarded options give
// several variants, tried in order at run time; the last needs no guards.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "passes/passes.h"
#include "passes/stash.h"
#include "plan/derivation.h"

namespace tad::schedule {

// How the gradients of one backward variant are written, and when the variant applies.
struct WritePlan {
    std::map<std::string, passes::GradWrite> writes;  // per wrt parameter
    plan::Guards guards;  // empty: always
};

// The variants of one launch's backward, tried in this order (the last has no guards). `shared`:
// wrt parameters whose shadow other launches also write (always atomics).
std::vector<WritePlan> gradient_writes(const ir::Function &fwd, const ad::GradSpec &spec,
                                       const std::set<std::string> &shared);

// Whether every gradient of the variant is written with atomics.
bool all_atomic(const WritePlan &w);

// A schedule pass's switch `name` from its environment value `env`: "on" (or unset) is true, "off"
// false, anything else an invalid argument naming the variable.
bool switched_on(const char *name, const char *env);

// TAD_EARLY_LOADS: "on" (or unset) issues each backward kernel's loads early (passes/early_loads.h);
// "off" keeps the order reverse mode wrote; anything else is an invalid argument.
bool early_loading(const char *env);

// TAD_LIFT_REDUCTIONS: "on" (or unset) carries a loop's running reductions as tiles
// (passes/lift_reductions.h); "off" keeps them scalars; anything else is an invalid argument.
bool lifting_reductions(const char *env);

// TAD_FUSE_LOOPS: "on" (or unset) takes loop-invariant factors out of running sums
// (passes/factor_sums.h) and fuses sibling loops (passes/fuse_loops.h); "off" leaves the loops as
// they are; anything else is an invalid argument.
bool fusing_loops(const char *env);

// TAD_REVERSE_REREADS: "on" (or unset) runs a loop that reads again what an earlier loop read last
// iteration first (passes/reverse_rereads.h); "off" keeps its order; anything else is an invalid
// argument.
bool reversing_rereads(const char *env);

// A proof's alternatives of run-time conditions (passes::writes_distinct) as guards: all of the one
// alternative, or an Any over several.
plan::Guards guards_of(const std::vector<std::vector<passes::Inequality>> &alternatives);

// The origins of `fn`'s parameters, by name from the kernel it was cut from; a parameter that kernel
// lacks is bound by the plan (a stash among `stashes`, else the grid size G).
std::vector<ad::ParamOrigin> origins_by_name(const ir::Function &fn, const ad::Backward &from,
                                             const std::vector<passes::Stash> &stashes);

// Text form of a write plan (the pipeline's IR dump, tests).
std::string print(const WritePlan &w);

}  // namespace tad::schedule
