// From a forward file and trace records to backward kernels and the generated module. Pure (no
// worker, no disk): generate and the CPU verifier both call it, so a candidate's metadata can
// always be recomputed from its forward source and traces.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "emit/emit.h"
#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "ir/ir.h"
#include "support/json.h"

namespace tad {

// The backward of one launch of a traced call.
struct Derived {
    std::string kernel;  // the forward kernel
    std::vector<frontend::ArgBinding> bindings;  // its arguments in this trace
    ir::Function forward;  // after CSE
    ad::GradSpec spec;  // the gradients that flow through this launch
    std::map<std::string, emit::TensorRef> tensors;  // pointer parameter -> tensor of the call
    // The backward kernels for this call's static branches; no variants when no gradient flows
    // through the launch (it reads no differentiated tensor, or writes nothing differentiated).
    emit::Specialization specialization;
    // Pointer parameter -> the first launch, this one or a later one, that writes its tensor: the
    // backward reads a copy of the tensor saved before that launch.
    std::map<std::string, size_t> saved_before;
};

// The backward of a traced call: its launches in forward order (the backward runs them last to
// first). A tensor's shadow is one buffer shared by every launch that touches it: the cotangent of
// a temporary or output the forward writes, then read by the writer's backward; the gradient of a
// stub input. Shadows in `shared` get contributions from several launches, or are zeroed where a
// launch overwrites its tensor (GradSpec::overwritten), and are atomic in every launch.
struct Chain {
    std::vector<Derived> launches;
    std::set<emit::TensorRef> shared;
    std::map<int, int> aliases;  // output j -> the stub input it is (updated in place and returned)
};

// `loops`: how loops with nonlinear carried state are reversed (ad::LoopPolicy).
Chain derive_chain(const frontend::KernelFile &kf, JsonRef trace, ad::LoopPolicy loops = ad::LoopPolicy::Recompute);

// The tangent kernel (forward mode) of a derived launch with the same GradSpec, named like its
// backward (`<kernel>_jvp` plus the launch's and the specialization's suffix); without a kernel, and
// with the reason, where forward mode does not handle the launch (src/capi/jvp_derive.cpp).
emit::Tangent derive_jvp(const Derived &d);

// The generated module covering every specialization among `traces` (the first one's argument
// layout is used for the launcher).
std::string emit_backward_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                 ad::LoopPolicy loops = ad::LoopPolicy::Recompute);

// Whether lowering the kernels for `trace` resolves static `if`s on constexprs (then each
// combination of those constexprs needs its own backward).
bool has_specializations(const frontend::KernelFile &kf, JsonRef trace);

// Whether `trace` specializes the kernel's static branches differently from every trace in `seen`.
bool new_specialization(const frontend::KernelFile &kf, JsonRef trace, const std::vector<JsonRef> &seen);

// The kernel arguments of one launch of a trace record as lowering bindings.
std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch);

}  // namespace tad
