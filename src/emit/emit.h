// Emission of readable Triton Python from tile IR, and of the standalone backward module.
#pragma once

#include <map>
#include <optional>
#include <set>
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

// A tensor of the traced call: stub input `index`, returned output `index`, or temporary `index`
// (a buffer the stub allocates and passes between launches).
struct TensorRef {
    enum Kind { Input, Output, Temp } kind = Input;
    int index = 0;
    bool operator<(const TensorRef &o) const { return kind != o.kind ? kind < o.kind : index < o.index; }
    bool operator==(const TensorRef &o) const { return kind == o.kind && index == o.index; }
};

// The tangent kernel (forward mode) of one specialization, or why forward mode does not handle it.
struct Tangent {
    std::vector<std::pair<std::string, std::string>> key;  // as Specialization::key
    std::optional<ad::Forward> jvp;
    std::string unsupported;  // the reason, when there is no jvp
};

// One launch of the stub and the backward kernels for it.
struct LaunchBackward {
    std::string kernel;  // the forward kernel
    std::map<std::string, TensorRef> tensors;  // pointer parameter -> tensor
    std::vector<Specialization> specializations;  // empty: no gradient flows through the launch
    std::vector<Tangent> tangents;  // forward mode, one per specialization, in its order
    // Pointer parameter -> the launch (this one or a later one) before which the module saves its
    // tensor's contents, because that launch overwrites them (tad::Derived::saved_before).
    std::map<std::string, size_t> saved_before;
};

struct ModuleInput {
    const frontend::KernelFile *kf = nullptr;
    size_t num_outputs = 0;
    std::vector<LaunchBackward> launches;  // forward order
    // Where the launcher finds temporary i of the forward: (launch, pointer parameter).
    std::vector<std::pair<size_t, std::string>> temps;
    std::set<TensorRef> shared;  // shadows accumulated by several launches, or zeroed
    std::map<int, int> aliases;  // output j -> the stub input it is (updated in place)
    std::string jvp_unsupported;  // why the module has no forward mode (empty: it has)
};

// The whole generated file: the forward kernels and stub copied from the forward file, a launch
// recorder, the backward kernels, the backward launcher (the stub's launches in reverse) and a
// torch.autograd.Function, plus `forward(*args, **kwargs)` and `GRAD_INPUTS`.
std::string emit_module(const ModuleInput &in);

// The module's forward-mode section (src/emit/jvp_module.cpp), appended by emit_module: the tangent
// kernels, the launcher `<stub>_jvp(launches, <stub params>, outs, out_layouts, tangents)` running
// them in the forward's order, each dispatching on its specializations like the backward,
// `jvp(*args, tangents=..., **kwargs)` and `JVP_UNSUPPORTED = None`; when some launch has no tangent
// kernel, only a comment and JVP_UNSUPPORTED saying why, so that the backward is generated regardless.
std::string emit_jvp_section(const ModuleInput &in);

}  // namespace tad::emit
