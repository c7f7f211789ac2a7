// Reverse mode: from a forward kernel to a backward kernel with the same grid.
//
// Each backward program replays its forward program's computation (recompute, no tape), then walks
// the forward ops in reverse, accumulating adjoints with the rules table. Pointer parameters that
// need gradients get a shadow parameter (the gradient buffer) addressed exactly like the primal:
// a forward store to an output becomes a load of the output's gradient, a forward load of an input
// becomes a store (or a relaxed atomic add, see passes::plan_gradient_writes) into its gradient.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/passes.h"

namespace tad::ad {

struct GradSpec {
    std::vector<std::string> wrt;      // pointer parameters whose gradients are wanted
    std::vector<std::string> outputs;  // pointer parameters that are differentiable outputs
};

// Where a backward parameter comes from.
struct ParamOrigin {
    enum Kind { Primal, Shadow } kind = Primal;
    std::string primal;  // the forward parameter (itself, or the one it shadows)
};

struct Backward {
    ir::Function fn;
    std::vector<ParamOrigin> origins;                  // per fn.params (constexprs are the forward's)
    std::map<std::string, passes::GradWrite> writes;   // per wrt parameter that the kernel reads
};

// `plan` chooses store vs atomic per wrt parameter (passes::plan_gradient_writes on cse(fwd)).
Backward reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
                 const std::string &name);

// Backward parameter name for the shadow of `primal`: X -> DX, x_ptr -> dx_ptr.
std::string shadow_name(const std::string &primal);

}  // namespace tad::ad
