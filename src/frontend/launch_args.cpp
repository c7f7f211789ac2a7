// A recorded launch's arguments (a trace record's "args") as lowering bindings: shared by the
// compiler's reading of a trace (src/flow) and by the interpreter's entry point (src/verify).
#include "frontend/lower.h"
#include "frontend/lower_internal.h"
#include "support/error.h"

namespace tad::frontend {

namespace {

ArgBinding tensor_binding(const std::string &path, JsonRef a, const std::string &name, bool offsets) {
    ArgBinding b;
    b.name = name;
    b.kind = ArgBinding::Tensor;
    if (!ir::dtype_from_torch(a.at("dtype").str(), &b.dtype))
        fail(TAD_ERR_UNSUPPORTED,
             path + ": kernel argument '" + name + "' has unsupported dtype " + a.at("dtype").str());
    if (!offsets && a.int_or("offset", 0) != 0)
        fail(TAD_ERR_UNSUPPORTED, path + ": kernel argument '" + name +
                                      "' points into the middle of a stub tensor; offset views are not supported yet");
    return b;
}

std::vector<int64_t> ints(JsonRef a, const char *key) {
    std::vector<int64_t> v;
    for (size_t d = 0; d < a.at(key).size(); ++d) v.push_back(a.at(key)[d].integer());
    return v;
}

// A triton.language dtype as the trace shows it (its repr: "triton.language.fp16"; the CPU
// stand-in's "triton.language.float16").
bool triton_dtype(const std::string &repr, ir::DType *out) {
    const std::string prefix = "triton.language.";
    if (repr.rfind(prefix, 0) != 0) return false;
    auto it = detail::dtype_names().find(repr.substr(prefix.size()));
    if (it == detail::dtype_names().end()) return false;
    *out = it->second;
    return true;
}

// A scalar argument, or a refusal naming what it is.
ArgBinding scalar_binding(const std::string &path, JsonRef a, const std::string &name, const std::string &kind) {
    ArgBinding b;
    b.name = name;
    if (kind == "int") {
        b.kind = ArgBinding::Int;
        b.ival = a.at("value").integer();
    } else if (kind == "float") {
        b.kind = ArgBinding::Float;
        b.fval = a.at("value").num();
    } else if (kind == "bool") {
        b.kind = ArgBinding::Bool;
        b.ival = a.at("value").boolean();
    } else if (kind == "none") {
        b.kind = ArgBinding::None;
    } else if (kind == "str") {
        b.kind = ArgBinding::Str;
        b.sval = a.at("value").str();
    } else if (kind == "other" && triton_dtype(a.at("value").str(), &b.dtype)) {
        b.kind = ArgBinding::DType;
    } else if (kind == "other" && a.at("value").str().rfind("triton.language.", 0) == 0) {
        fail(TAD_ERR_UNSUPPORTED, path + ": unsupported construct 'dtype " + a.at("value").str() + "': '" + name +
                                      "' is a dtype tad has no type for (it has float16, bfloat16, float32, float64, "
                                      "int32, int64 and int1)");
    } else {
        fail(TAD_ERR_UNSUPPORTED,
             path + ": unsupported construct 'kernel argument of kind " + kind + "': '" + name +
                 "' must be a tensor, a number, a bool, a string, None or a triton.language dtype");
    }
    return b;
}

}  // namespace

std::vector<ArgBinding> launch_bindings(const std::string &path, JsonRef args, bool offsets) {
    std::vector<ArgBinding> out;
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        std::string name = a.at("name").str(), kind = a.at("kind").str();
        if (kind == "tensor") {
            out.push_back(tensor_binding(path, a, name, offsets));
        } else if (kind == "tensor_desc") {
            // A host-side TensorDescriptor: its base tensor, plus its shape, strides and block as scalars.
            ArgBinding b = tensor_binding(path, a, name, offsets);
            b.desc_block = ints(a, "block_shape");
            b.desc_padding = a.str_or("padding", "zero");
            out.push_back(b);
            for (const ArgBinding &s : tensor_desc_scalars(name, ints(a, "shape"), ints(a, "strides"), b.desc_block))
                out.push_back(s);
        } else {
            out.push_back(scalar_binding(path, a, name, kind));
        }
    }
    return out;
}

}  // namespace tad::frontend
