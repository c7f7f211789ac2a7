// Splitting a backward's loops across programs (passes/split_loops.h) as a launch plan's runs.
//
// A split backward is a variant whose kernels run as transposed runs do (plan.h): on the launch's
// grid with `ways` programs along the split axis (trips 0..ways). The sums kernel stores each
// program's share of the sums into a stash, the rest kernel reads them back.
#pragma once

#include <optional>
#include <string>

#include "ad/reverse.h"
#include "plan/derivation.h"

namespace tad::schedule {

struct SplitKernels {
    plan::Transposed sums, rest;
    passes::Stash stash;
    plan::Guards guards;
};

// `b` split in `ways`, its kernels through `cleanup`; nullopt, and a line in `report` saying why,
// where passes::split_loops refuses.
std::optional<SplitKernels> split(const ad::Backward &b, int ways, const ad::Cleanup &cleanup, std::string *report);

// TAD_SPLIT_LOOPS: "on" (or unset) tries the split; "off" does not; anything else is an invalid
// argument.
bool splitting(const char *env);

}  // namespace tad::schedule
