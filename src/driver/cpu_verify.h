// The CPU verification tier, as the session runs it: for each dims entry the worker traces the stub
// with data, the pipeline derives the plans of that call, and the oracle (src/verify) checks them on
// the interpreter against the emitted module.
#pragma once

#include <string>

#include "ad/reverse.h"
#include "frontend/kernel_file.h"
#include "runtime/worker.h"
#include "support/json.h"

namespace tad::driver {

struct CpuVerifyInput {
    const frontend::KernelFile &kf;
    std::string backward_source;  // the emitted module
    std::string backward_path;  // for diagnostics
    std::string import_path;  // the forward file the worker traces
    long long max_elements;  // skip dims whose tensors hold more
    unsigned seed;
    ad::LoopPolicy loops = ad::LoopPolicy::Auto;  // the candidate's
    // A module tad did not write (an LLM's): the compiler's launch plan is not what it runs, so the
    // whole-stub check alone decides.
    bool whole_stub_only = false;
};

// Verify report (docs/reports.md) over `dims_list`.
Json cpu_verify(const CpuVerifyInput &in, JsonRef dims_list, Worker &worker, const ProgressFn &progress);

}  // namespace tad::driver
