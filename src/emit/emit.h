// Emission of readable Triton Python from tile IR, and of the standalone generated module from the
// launch plans (src/plan): the plans' kernels, the launchers that follow their steps, and the
// torch.autograd.Function that ties forward and backward together.
#pragma once

#include <string>

#include "frontend/kernel_file.h"
#include "ir/ir.h"
#include "plan/plan.h"

namespace tad::emit {

// One @triton.jit function. `doc` becomes its docstring.
std::string emit_kernel(const ir::Function &fn, const std::string &doc);

// The whole generated file: the forward kernels and stub copied from the forward file, a launch
// recorder, the backward kernels and the launcher `<stub>_backward` that follows `backward`, a
// torch.autograd.Function, `forward(*args, **kwargs)` and `GRAD_INPUTS`; then the forward-mode
// section: the tangent kernels, the launcher `<stub>_jvp` that follows `tangent` and `jvp(*args,
// tangents=..., **kwargs)` with `JVP_UNSUPPORTED = None`; or, without a tangent plan, only a comment
// and JVP_UNSUPPORTED saying why (`jvp_unsupported`), so that the backward is generated regardless.
std::string emit_module(const frontend::KernelFile &kf, const plan::Plan &backward, const plan::Plan *tangent,
                        const std::string &jvp_unsupported);

}  // namespace tad::emit
