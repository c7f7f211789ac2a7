// Lowering of one @triton.jit function to tile IR.
//
// The jit function's body is evaluated symbolically: constexpr parameters and Python literals are
// compile-time values, everything that depends on program ids, runtime scalars or memory becomes IR.
// Helper @triton.jit functions are inlined. A construct tad cannot handle is rejected with
// TAD_ERR_UNSUPPORTED and "path:line:col: unsupported construct '<name>' ...".
#pragma once

#include <string>
#include <vector>

#include "frontend/kernel_file.h"
#include "ir/ir.h"

namespace tad::frontend {

// How one kernel parameter is bound at launch (from a trace record's "args").
struct ArgBinding {
    enum Kind { Tensor, Int, Float, Bool, None, Str } kind = None;
    std::string name;
    ir::DType dtype = ir::DType::F32;  // Tensor: element type
    int64_t ival = 0;
    double fval = 0;
    std::string sval;  // Str
};

// Lowers `kernel` with its parameters bound by `args` (matched by name; missing constexprs fall back
// to the parameter's default). Parameters annotated tl.constexpr become ir::Function::constexprs.
ir::Function lower_kernel(const KernelFile &kf, const std::string &kernel, const std::vector<ArgBinding> &args);

// Same, for a file that is not a forward file (e.g. tad's own emitted code): only jit functions.
ir::Function lower_kernel(const ast::File &file, const std::string &kernel, const std::vector<ArgBinding> &args);

}  // namespace tad::frontend
