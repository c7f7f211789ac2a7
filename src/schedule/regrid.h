// Schedule decision: re-grid a launch's backward whose gradients are reduced over its grid axis
// (passes::regrid), and how the per-program sums are combined.
#pragma once

#include <optional>
#include <string>

#include "ad/reverse.h"
#include "plan/derivation.h"

namespace tad::schedule {

enum class GridReduction {
    Partial,  // default: plain stores into a partial buffer, rows summed in order (deterministic)
    Atomic,  // one relaxed atomic add per program into the gradient
    Off,  // keep the forward's grid and every atomic
};

// TAD_GRID_REDUCTION: "partial" (or unset), "atomic", "off"; anything else is an invalid argument.
GridReduction grid_reduction(const char *env);

// Rewrites `b` (its kernel, and origins for the parameters the rewrite adds) when passes::regrid
// fires; the launcher's side of it, for the plan, when it did. A backward with a tape is left alone
// (its tape is laid out per program of the forward's grid). `report` gets passes::print's text;
// `when`, the run-time conditions the re-gridded kernel needs (empty: none; else the caller keeps
// `b` as it was for launches where they fail).
std::optional<plan::Regrid> regrid(ad::Backward &b, GridReduction mode, plan::Guards *when, std::string *report);

}  // namespace tad::schedule
