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
#include "support/json.h"

namespace tad::frontend {

// How one kernel parameter is bound at launch (from a trace record's "args").
struct ArgBinding {
    enum Kind { Tensor, Int, Float, Bool, None, Str, DType } kind = None;
    std::string name;
    ir::DType dtype = ir::DType::F32;  // Tensor: element type; DType: the value (tl.float16 passed as a constexpr)
    int64_t ival = 0;
    double fval = 0;
    std::string sval;  // Str
    // Tensor given as a host-side TensorDescriptor: the block shape and padding the kernel accesses
    // it with (empty for a plain tensor); its shape and strides come as the Int bindings named by
    // tensor_desc_field.
    std::vector<int64_t> desc_block;
    std::string desc_padding;
};

// The scalar that carries dim `d` of `field` ("shape", "stride" or "block") of the host-side
// descriptor parameter `param`, in the IR, the backward kernels and the generated module's launch
// records (whose recorder expands a descriptor argument under the same names): "<param>_<field><d>".
std::string tensor_desc_field(const std::string &param, const std::string &field, size_t d);

// The Int bindings of a host-side descriptor's shape, strides and block shape, named by
// tensor_desc_field (emitted kernels take them as parameters and constexprs).
std::vector<ArgBinding> tensor_desc_scalars(const std::string &param, const std::vector<int64_t> &shape,
                                            const std::vector<int64_t> &strides, const std::vector<int64_t> &block);

// The arguments of one recorded launch (a trace record's "args", docs/worker-protocol.md) as
// bindings; `path` names the file in refusals. A tensor argument pointing into the middle of its
// tensor (a non-zero "offset") is refused unless `offsets` (the interpreter takes any offset; the
// compiler's dataflow does not model them yet).
std::vector<ArgBinding> launch_bindings(const std::string &path, JsonRef args, bool offsets);

// Lowers `kernel` with its parameters bound by `args` (matched by name; missing constexprs fall back
// to the parameter's default). Parameters annotated tl.constexpr become ir::Function::constexprs.
ir::Function lower_kernel(const KernelFile &kf, const std::string &kernel, const std::vector<ArgBinding> &args);

// Same, for a file that is not a forward file (e.g. tad's own emitted code): only jit functions.
// Unless `host_descriptors`, bindings' desc_block is ignored: emitted backward kernels take a
// host-side descriptor's base pointer and its scalars, each bound by its own name. With it, a
// binding with a desc_block is a descriptor parameter, as in a forward file (the forward kernels
// the emitted module copies, run by tad_interpret).
ir::Function lower_kernel(const ast::File &file, const std::string &kernel, const std::vector<ArgBinding> &args,
                          bool host_descriptors = false);

}  // namespace tad::frontend
