// From a forward file and one trace record to backward kernels and the generated module. Pure
// (no worker, no disk): generate and the CPU verifier both call it, so a candidate's metadata can
// always be recomputed from its forward source and trace.
#pragma once

#include <string>
#include <vector>

#include "emit/emit.h"
#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "ir/ir.h"
#include "support/json.h"

namespace tad {

struct Generated {
    std::string kernel;                                  // the forward kernel
    std::vector<frontend::ArgBinding> bindings;          // its arguments in this trace
    ir::Function forward;                                // after CSE
    std::vector<emit::Variant> variants;                 // guarded first, unconditional last
    std::string source;                                  // the emitted module
};

Generated build_backward(const frontend::KernelFile &kf, JsonRef trace);

// The kernel arguments of a trace record's only launch as lowering bindings.
std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch);

}  // namespace tad
