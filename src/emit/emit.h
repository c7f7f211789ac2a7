// Emission of readable Triton Python from tile IR, and of the standalone generated module from the
// launch plans (src/plan): the plans' kernels, the launchers that follow their steps, and the
// torch.autograd.Function that ties forward and backward together.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/kernel_file.h"
#include "ir/ir.h"
#include "plan/plan.h"

namespace tad::emit {

// One @triton.jit function. `doc` becomes its docstring.
// `write_parts`: a backward kernel, emitted with its writes in parts (passes/write_parts.h).
std::string emit_kernel(const ir::Function &fn, const std::string &doc, bool write_parts = false);

// The whole generated file: the forward kernels and stub copied from the forward file, a launch
// recorder, the backward kernels and the launcher `<stub>_backward` that follows `backward`, a
// torch.autograd.Function, `forward(*args, **kwargs)` and `GRAD_INPUTS`; then the forward-mode
// section: the tangent kernels, the launcher `<stub>_jvp` that follows `tangent` and `jvp(*args,
// tangents=..., **kwargs)` with `JVP_UNSUPPORTED = None`; or, without a tangent plan, only a comment
// and JVP_UNSUPPORTED saying why (`jvp_unsupported`), so that the backward is generated regardless.
// `original`: the forward file as the user wrote it, where `kf` is it with residual stores inserted
// (frontend/residual_stores.h): each kernel that stores residuals gets a twin without them,
// `<kernel>_without_saves`, copied from it, which the stub launches on calls autograd does not record.
std::string emit_module(const frontend::KernelFile &kf, const plan::Plan &backward, const plan::Plan *tangent,
                        const std::string &jvp_unsupported, const frontend::KernelFile *original = nullptr);

// The suffix of such a twin's name (the module's check judges it as the user's kernel it copies).
inline constexpr const char *kTwinSuffix = "_without_saves";

// The launches of one kind in a stub whose launches are autograd nodes (docs/stub-autograd.md), as
// a stub of their own: `file` is the forward file with the one-launch stub `<stub>_launch<g>`,
// whose params are the views a launch of `kernel` gets (a kernel parameter names each) and whose
// grad_inputs are those that require grad when it is launched; `written` are the params it
// writes, its outputs in order; `backward` is the one-launch stub's backward plan, absent when no
// argument requires grad. A launch at run time takes the node of its kernel and views.
struct LaunchNode {
    frontend::KernelFile file;
    std::string kernel;
    std::vector<std::string> written;
    std::optional<plan::Plan> backward;
};

// Such a stub: a node per kind of launch, its number of outputs and the inputs it updates in place
// and returns.
struct NodeModule {
    std::vector<LaunchNode> nodes;
    size_t num_outputs = 0;
    std::vector<std::string> dirty;
};

// The module of such a stub: the forward's copy and runtime as emit_module's, then per node its
// backward kernels and launcher `<stub>_launch<g>_backward`, the table _NODES of the nodes, and
// `forward(*args, **kwargs)`, which runs the stub under autograd with each launch its own node
// (_LaunchFunction). `jvp` raises NotImplementedError(JVP_UNSUPPORTED) (`jvp_unsupported`).
std::string emit_node_module(const frontend::KernelFile &kf, const NodeModule &m, const std::string &jvp_unsupported);

// The self-check of a generated module `source` emitted for `kf` (src/emit/check.cpp), before any
// caller sees it. It parses `source` with tad's own parser, then checks from the AST alone:
// - `from __future__ import` comes first, if at all (ast.parse accepts it anywhere, Python not);
// - no top-level def, class or assignment is repeated more often than the forward file repeats it
//   (the launched kernels' `K = _Recorded(K)` aside): a definition of tad's would replace one;
// - every function (kernels, launchers, the runtime's and the Function's methods, the entry
//   points) reads only names bound when it reads them: a parameter, an earlier binding of its own
//   (either branch of an earlier `if`), a module-level name, or a builtin (in a @triton.jit body
//   only those Triton resolves: range, min, max, float, ...); code that runs as the module is
//   imported (top-level statements, decorators, defaults, annotations, class bodies) reads only
//   names an earlier top-level statement binds;
// - no function has two parameters of one name;
// - a kernel tad wrote (not copied from the forward file) assigns no constexpr parameter and no
//   parameter before it has read the argument, and once it assigns a name Triton reserves (tl,
//   triton, libdevice, math, torch, the builtins above) it calls it or takes its attributes no more;
// - each launch `K[grid](...)` of a kernel tad wrote passes one positional argument per parameter
//   that is not a constexpr and each constexpr by keyword.
// A fault of the forward file's own code (a name it reads and never defines) is not tad's and is
// allowed in its copy. Throws tad::Error(TAD_ERR_INTERNAL, "generated module: kernel 'k' reads 'x',
// which nothing defines (line 120:9); this is a bug in tad's emitter"): the function, the fault and
// its place in the module (1-based column).
void check_module(const frontend::KernelFile &kf, const std::string &source);

// The same checks on a module tad did not write (an LLM's candidate, driver/optimize.h): the first
// fault, as check_module words it without the "generated module: " and "; this is a bug ..." around
// it (e.g. "unexpected indent in kernel 'k' (line 12:5)", "function 'f' reads 'x', which nothing
// defines (line 40:9)"); "" when there is none.
std::string module_fault(const frontend::KernelFile &kf, const std::string &source);

}  // namespace tad::emit
