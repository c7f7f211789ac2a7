// Forward mode: from a forward kernel to its tangent kernel (JVP) with the same grid.
//
// Each tangent program replays its forward program's computation and carries, next to every float
// value, its tangent, computed in program order with the rules table's jvp functions. Pointer
// parameters in spec.wrt and spec.outputs get a shadow parameter addressed exactly like the primal
// (named by shadow_name, as in reverse mode): a load from an input also loads the input's tangent
// through its shadow, a store to an output stores the stored value's tangent through the output's
// shadow instead; where that updates a buffer in place (spec.overwritten), a barrier first lets the
// program's loads finish. Stores to other buffers (saved statistics) are dropped. So with the shadows of
// the inputs holding a direction v, the kernel writes J·v into the shadows of the outputs.
#pragma once

#include <string>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"

namespace tad::ad {

struct Forward {
    ir::Function fn;
    std::vector<ParamOrigin> origins;  // per fn.params (constexprs are the forward's)
};

// Parameters: the forward's that the tangent kernel uses, each followed by its shadow where it has
// one. Throws tad::Error (TAD_ERR_UNSUPPORTED) on constructs forward mode does not handle.
Forward jvp(const ir::Function &fwd, const GradSpec &spec, const std::string &name,
            const Cleanup &cleanup = passes::cleanup);

}  // namespace tad::ad
