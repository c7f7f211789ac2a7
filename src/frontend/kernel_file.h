// What tad needs to know about a forward file: its @triton.jit functions, the stub marked
// @tad.autodiff(grad_inputs=...), and the optional protocol functions (SWEEP, make_args, reference).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/ast.h"

namespace tad::frontend {

struct StubInfo {
    std::string name;
    ast::NodePtr def;  // the FunctionDef
    std::vector<std::string> params;  // parameter names in order
    std::vector<std::string> grad_inputs;  // resolved to parameter names
    // kernels launched as K[grid](...), in source order, as the stub spells them: a name, `Cls.k`, or
    // each kernel a local it launches may hold (`k = _a if flag else _b`); also inside the file's
    // Python functions the stub calls, a kernel passed to one as an argument spelled by the caller
    std::vector<std::string> launched;
    // Whether the stub, or a function of the file it calls, has control flow (if, a conditional
    // expression, a loop, try, match): which kernels it launches, and how often, may then depend on
    // its arguments.
    bool branches = false;
};

// The prefix of every parameter residual stores add (residual_stores.h): the launcher, the launch
// nodes and the CPU oracle tell tad's buffers from the user's by it, and a user's kernel may not use it.
inline constexpr const char *kResidualPrefix = "TAD_SAVED_";

struct KernelFile {
    ast::File file;
    // name -> FunctionDef: @triton.jit defs by name (in a class also as `Cls.name`), and kernels
    // assigned as `K = triton.jit(fn)` under K and fn
    std::map<std::string, ast::NodePtr> jit_functions;
    std::vector<std::string> jit_order;  // source order
    StubInfo stub;
    bool has_sweep = false, has_make_args = false, has_reference = false;

    const ast::NodePtr &jit(const std::string &name) const;
};

// Parses and analyses a forward file. Errors (tad::Error): TAD_ERR_IO, TAD_ERR_SYNTAX,
// TAD_ERR_NO_KERNEL (no jit function, no stub, stub launching nothing), TAD_ERR_INVALID_ARGUMENT
// (grad_inputs naming an unknown parameter).
// A kernel parameter named TAD_SAVED_... is refused (TAD_ERR_INVALID_ARGUMENT) unless
// `tad_residuals`: the file is one tad edited to save residuals (frontend/residual_stores.h).
KernelFile analyze(ast::File file, bool tad_residuals = false);

// The file's @triton.jit functions, as KernelFile::jit_functions holds them; `order`: their
// function names in source order.
std::map<std::string, ast::NodePtr> jit_functions_of(const ast::File &file, std::vector<std::string> *order = nullptr);

// True if `decorator` is triton.jit / jit / triton.jit(...).
bool is_jit_decorator(const ast::Node &decorator);

// The parameter names of a FunctionDef, in order (posonly, regular, kw-only).
std::vector<std::string> param_names(const ast::Node &function_def);

}  // namespace tad::frontend
