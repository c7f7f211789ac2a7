// A trace record (docs/worker-protocol.md) as the compiler reads it: each launch's arguments as
// lowering bindings and its tensors as references to the call's tensors.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flow/flow.h"
#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "support/json.h"

namespace tad::flow {

// The kernel arguments of one launch of a trace record as lowering bindings.
std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch);

// Pointer parameter -> the tensor of the call it points into, for one launch of a trace record.
std::map<std::string, TensorRef> tensors_of(JsonRef launch);

// The call of a trace record: the stub's parameters and grad inputs, and which outputs are inputs.
Call call_of(const frontend::KernelFile &kf, JsonRef trace);

}  // namespace tad::flow
