// Emission of readable Triton Python from tile IR, and of the standalone backward module.
#pragma once

#include <string>
#include <vector>

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

struct ModuleInput {
    const frontend::KernelFile *kf = nullptr;
    JsonRef trace;                          // a trace record the backward was generated from
    std::string kernel;                     // the forward kernel
    std::vector<Specialization> specializations;
};

// The whole generated file: the forward kernels and stub copied from the forward file, a launch
// recorder, the backward kernel(s), the backward launcher and a torch.autograd.Function, plus
// `forward(*args, **kwargs)` and `GRAD_INPUTS`.
std::string emit_module(const ModuleInput &in);

}  // namespace tad::emit
