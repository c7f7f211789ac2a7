// Shadows, as both modes build them: a pointer parameter in spec.wrt or spec.outputs gets a shadow
// parameter (its gradient buffer in reverse mode, its tangent buffer in forward mode), and every
// pointer the forward computes from it gets a shadow computed the same way, so that the shadow
// addresses the same elements of the shadow buffer as the pointer does of the forward's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::ad {

// The shadow's name for a forward name: X -> DX, x_ptr -> dx_ptr.
std::string shadow_name(const std::string &primal);

// The shadow parameter of forward parameter `primal`: shadow_name(primal), prefixed with "_" until
// no forward parameter has that name.
std::string shadow_param_name(const ir::Function &fwd, const std::string &primal);

// The shadow of the pointer that forward op `op` forms from pointers with shadows: the same op on
// their shadows (`shadow_of`), reading the replay (`primal`) of its other operands, and named after
// the forward value. The pointer-forming ops a shadow mirrors are broadcast, expand_dims, add_ptr
// and where (the caller checks that both of its pointers address one buffer); any other throws
// TAD_ERR_UNSUPPORTED.
ir::ValueId mirror_pointer(ir::Builder &b, const ir::Function &fwd, const ir::Op &op,
                           const std::function<ir::ValueId(ir::ValueId)> &shadow_of,
                           const std::vector<ir::ValueId> &primal);

// The diagnostic for a construct a mode does not handle (TAD_ERR_UNSUPPORTED):
// "file:line:col: unsupported construct '<op>' <what>".
[[noreturn]] void unsupported(const ir::Function &fwd, const ir::Op &op, const std::string &what);

}  // namespace tad::ad
