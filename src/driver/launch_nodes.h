// A stub whose torch code computes an output or a kernel argument from the grad inputs: the stub runs
// under autograd and each launch is its own autograd node, whose backward is the backward of a
// one-launch stub (docs/stub-autograd.md). That stub's inputs are the views the launch gets (one per
// view, named by the first kernel parameter that gets it), its grad inputs those that require grad
// when it is launched (the trace records it), its outputs the views it writes, each returned as the
// input it is. Its trace goes through derive_chain, merge and plan::backward as any stub's does, so
// the one-launch refusals of flow::analyze apply with their texts.
#pragma once

#include <string>
#include <vector>

#include "ad/reverse.h"
#include "frontend/kernel_file.h"
#include "support/json.h"

namespace tad::driver {

// Whether the trace says torch code computed an output or a kernel argument from the grad inputs.
bool has_torch_code(JsonRef trace);

// The one-launch trace of launch `k` of `trace` (docs/worker-protocol.md's trace record, with the
// launch's views as stub inputs), its stub named `stub`. Refuses a launch that gets two different
// views of one buffer and writes one of them.
Json one_launch_trace(const frontend::KernelFile &kf, JsonRef trace, size_t k, const std::string &stub);

// The generated module of such a stub (emit::emit_node_module), every trace's launches covered:
// launches of one kernel that get alike views and write the same ones, at any position of any
// trace, share a node (so traces may launch different sequences); `explanation`, if given,
// receives the access analysis of each node's backward.
std::string emit_launch_node_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                    ad::LoopPolicy loops, std::string *explanation);

}  // namespace tad::driver
