// Launch bindings guessed from a forward file's text, so that retrieval lowers kernels to tile IR
// without tracing the stub (which needs Python and torch and takes seconds per file).
//
// For each parameter of `kernel`:
//  - a tl.constexpr: the literal the stub's launch passes (keyword or position), else its default
//    (left unbound, so that lowering takes it), else the int kGuessedConstexpr;
//  - otherwise a float32 tensor when the kernel (or a @triton.jit helper it passes the value to)
//    uses it as a pointer: the base of an address in tl.load / tl.store / tl.atomic_* /
//    tl.make_block_ptr / tl.make_tensor_descriptor (a term of a sum, not a factor), a value
//    assigned to such a base, or `P.dtype.element_ty`; else an int scalar. A pointer whose loaded
//    values are added to an address (`i = tl.load(Idx + r); tl.load(W + i)`) points to int64.
// The guess may be wrong (a float scalar bound as an int changes only types; a string constexpr
// computed in the stub takes an int); what cannot lower is left to the AST features.
#pragma once

#include <string>
#include <vector>

#include "frontend/lower.h"

namespace tad::retrieve {

constexpr int64_t kGuessedConstexpr = 16;

std::vector<frontend::ArgBinding> guess_bindings(const frontend::KernelFile &kf, const std::string &kernel);

// The parameters of @triton.jit function `fn` used as pointers (as above), by name.
std::vector<std::string> pointer_params(const frontend::KernelFile &kf, const std::string &fn);

}  // namespace tad::retrieve
