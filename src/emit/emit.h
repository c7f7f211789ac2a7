// Emission of readable Triton Python from tile IR, and of the standalone backward module.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ad/forward.h"
#include "ad/reverse.h"
#include "frontend/kernel_file.h"
#include "ir/ir.h"
#include "support/json.h"

namespace tad::emit {

// One @triton.jit function. `doc` becomes its docstring.
std::string emit_kernel(const ir::Function &fn, const std::string &doc);

// A backward kernel and the run-time condition under which the launcher uses it.
struct Variant {
    ad::Backward bwd;
    std::vector<std::pair<std::string, std::string>> guards;  // scalar args that must be equal
};

// The backward of one specialization: the values of the constexprs that chose static branches
// (empty when none did), and its variants, tried in order (the last has no guards).
struct Specialization {
    std::vector<std::pair<std::string, std::string>> key;  // constexpr name -> Python literal
    std::vector<Variant> variants;
};

// The tangent kernel (forward mode) of one specialization, or why forward mode does not handle it.
struct Tangent {
    std::vector<std::pair<std::string, std::string>> key;  // as Specialization::key
    std::optional<ad::Forward> jvp;
    std::string unsupported;  // the reason, when there is no jvp
};

struct ModuleInput {
    const frontend::KernelFile *kf = nullptr;
    JsonRef trace;                          // a trace record the backward was generated from
    std::string kernel;                     // the forward kernel
    std::vector<Specialization> specializations;
    std::vector<Tangent> tangents;  // per specialization, in the same order (none: no forward mode)
};

// The whole generated file: the forward kernels and stub copied from the forward file, a launch
// recorder, the backward kernel(s), the backward launcher and a torch.autograd.Function, plus
// `forward(*args, **kwargs)` and `GRAD_INPUTS`.
std::string emit_module(const ModuleInput &in);

// The module's forward-mode section (src/emit/jvp_module.cpp), appended by emit_module: the tangent
// kernels, the launcher `<stub>_jvp(launch, <stub params>, out_layouts, tangents)` dispatching on
// the specializations like the backward's, `jvp(*args, tangents=..., **kwargs)` and
// `JVP_UNSUPPORTED = None`; when some specialization has no tangent kernel (or there are none), only
// a comment and JVP_UNSUPPORTED saying why, so that the backward is generated regardless.
std::string emit_jvp_section(const ModuleInput &in);

}  // namespace tad::emit
