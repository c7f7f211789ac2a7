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

// TAD_SPLIT_LOOPS: "on" tries the split; "off" (or unset) does not; anything else is an invalid
// argument. Off by default since session 16: on the H200 (bench/results/2026-12-05-h200-session16.md)
// group norm's split backward at N=16 C=512 HW=4096 G=32 was 1.7% faster in float16 and 6% slower in
// float32 than the unsplit one, whose 512 programs already fill the GPU.
bool splitting(const char *env);

}  // namespace tad::schedule
