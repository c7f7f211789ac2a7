// Schedule decision: gradients a backward adds to in several loops, added once (passes::merge_loop_adds),
// or at shifted lanes outside loops, gathered into one add (passes::gather_shifted_adds),
// and adds no two writes share, stored plainly in the input's dtype (passes::adds_to_stores).
#pragma once

#include <optional>
#include <set>
#include <string>

#include "ad/reverse.h"
#include "plan/derivation.h"

namespace tad::schedule {

// Rewrites `b` with its adds at wrapped addresses (`x % d`) moved to `x` under `x < d`
// (passes/unwrap_adds.h); returns the report (a line per add at a wrapped address).
std::string unwrap_adds(ad::Backward &b);

// Rewrites `b` with each buffer's adds across sibling loops merged into the last, then its adds at
// shifted lanes gathered; returns the report (a line per buffer added to in several loops or at
// several addresses outside loops) and adds the merged shadow parameters to `merged`.
std::string merge_adds(ad::Backward &b, std::set<std::string> *merged);

// `b` with the atomic adds of the shadow parameters in `merged` (less those whose primal is in
// `keep`: shadows that other launches or parameters also write) that no two writes share turned into
// stores, their buffers in the input's dtype, and the updates in place of the other atomic shadows
// (passes/updates_to_stores.h) turned into stores, their buffers as they were; the proofs' guards
// are appended to `guards`. nullopt when none is, and for a backward with a tape. `report` gets a
// line per gradient stored or kept.
// `aliased`: forward parameters whose tensor another parameter of the launch also reaches (their
// updates stay adds: the other parameter's accesses to the element are not the pass's to see).
std::optional<ad::Backward> stored_adds(const ad::Backward &b, const std::set<std::string> &merged,
                                        const std::set<std::string> &keep, const std::set<std::string> &aliased,
                                        plan::Guards *guards, std::string *report);

}  // namespace tad::schedule
