// The CPU verification tier: the forward kernel and the generated backward (re-parsed from the
// emitted Python) run on the tile-IR interpreter in float64, and each gradient is compared with
// central finite differences of the forward along random directions.
#pragma once

#include <string>

#include "ad/reverse.h"
#include "frontend/kernel_file.h"
#include "runtime/worker.h"
#include "support/json.h"

namespace tad {

struct CpuVerifyInput {
    const frontend::KernelFile &kf;
    std::string backward_source;  // the emitted module
    std::string backward_path;  // for diagnostics
    std::string import_path;  // the forward file the worker traces
    long long max_elements;  // skip dims whose tensors hold more
    unsigned seed;
    ad::LoopPolicy loops = ad::LoopPolicy::Recompute;  // the candidate's (derive_backward)
};

// Verify report (docs/reports.md) over `dims_list`; the worker traces each entry with data.
Json cpu_verify(const CpuVerifyInput &in, JsonRef dims_list, Worker &worker, const ProgressFn &progress);

// Sets "passed" and "summary" of a verify report from its "results".
void summarize_verify(Json &report);

}  // namespace tad
