// Tensor descriptors (Triton 3.6): tl.make_tensor_descriptor(base, shape, strides, block_shape)
// describes a strided tensor read and written one block_shape tile at a time, at element offsets
// given per access (desc.load(offsets), desc.store(offsets, value), desc.atomic_add(offsets, value)).
// Out-of-bounds lanes read the padding (zero, or NaN) and are not written. That is a block pointer
// with a boundary check on every dim, so each access lowers through block_window to a pointer tile
// and an in-bounds mask, and the backward needs nothing of its own: it never emits descriptors
// (which on a GPU would need triton.set_allocator), only the masked pointer arithmetic.
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

std::vector<CV> list_items(const CV &c) { return c.kind == CV::Tuple ? c.items : std::vector<CV>{c}; }

// A Python int or an integer scalar of the IR: what shapes, strides and offsets may be.
bool int_scalar(const CV &c, const ir::Function &f) {
    if (c.kind == CV::Int) return true;
    if (c.kind != CV::Value) return false;
    const Type &t = f.type(c.v);
    return t.scalar() && !t.is_ptr && !ir::dtype_is_float(t.elem);
}

}  // namespace

CV Lowerer::make_tensor_descriptor(const ast::Node &e, const Args &a) {
    const std::string fn = "tl.make_tensor_descriptor";
    ValueId base = value_arg(need(a, 0, "base", e, fn), e);
    if (!fn_.type(base).is_ptr || !fn_.type(base).scalar()) unsupported(e, fn, "base must be a scalar pointer");
    std::vector<CV> shape = list_items(need(a, 1, "shape", e, fn)), strides = list_items(need(a, 2, "strides", e, fn));
    std::vector<Dim> block = shape_arg(need(a, 3, "block_shape", e, fn), e);
    const size_t r = block.size();
    if (r < 1 || r > 5) unsupported(e, fn, "a descriptor has 1 to 5 dims");
    if (shape.size() != r || strides.size() != r)
        unsupported(e, fn, "shape, strides and block_shape must have the same length");
    CV desc;
    desc.kind = CV::TensorDesc;
    desc.v = base;
    desc.block = block;
    desc.s = "zero";
    if (const CV *pad = a.get(4, "padding_option")) {
        consume(*pad);
        if (pad->kind != CV::Str || (pad->s != "zero" && pad->s != "nan"))
            unsupported(e, fn, "padding_option must be 'zero' or 'nan'");
        if (pad->s == "nan" && !ir::dtype_is_float(fn_.type(base).elem))
            unsupported(e, fn, "padding_option='nan' needs a float tensor");
        desc.s = pad->s;
    }
    for (const auto *list : {&shape, &strides})
        for (const CV &c : *list) {
            if (!int_scalar(c, fn_)) unsupported(e, fn, "shape and strides must be integer scalars");
            desc.items.push_back(c);
        }
    // A run-time last stride is accepted: Triton specializes an integer argument equal to 1 into the
    // constant, so a stride parameter passes there exactly when it is 1 at launch.
    const CV &last = strides.back();
    if (last.kind == CV::Int && last.i != 1)
        unsupported(e, fn, "the last stride must be 1 (Triton requires the last dim to be contiguous)");
    return desc;
}

// The launch record's Int bindings of the descriptor's shape, then strides, in the names
// tensor_desc_field gives them (which no kernel parameter may take).
std::vector<const ArgBinding *> Lowerer::host_desc_scalars(const ast::Node &p, const ArgBinding &base,
                                                           const std::vector<ArgBinding> &args,
                                                           const ast::NodeList &params) {
    const std::string &name = base.name;
    std::vector<const ArgBinding *> scalars;
    for (const char *field : {"shape", "stride"})
        for (size_t d = 0; d < base.desc_block.size(); ++d) {
            std::string fname = tensor_desc_field(name, field, d);
            for (const auto &q : params)
                if (q->str("arg") == fname)
                    unsupported(p, "TensorDescriptor argument '" + name + "'",
                                "kernel parameter '" + fname + "' takes the name tad gives its " + field);
            const ArgBinding *b = nullptr;
            for (const ArgBinding &a : args)
                if (a.name == fname && a.kind == ArgBinding::Int) b = &a;
            if (!b)
                fail(TAD_ERR_INVALID_ARGUMENT,
                     at(p) + ": the launch record has no " + field + " of TensorDescriptor argument '" + name + "'");
            scalars.push_back(b);
        }
    return scalars;
}

CV Lowerer::host_tensor_desc(const ast::Node &p, const ArgBinding &base, const std::vector<ArgBinding> &args,
                             const ast::NodeList &params) {
    const std::string &name = base.name;
    const size_t r = base.desc_block.size();
    const std::vector<const ArgBinding *> scalars = host_desc_scalars(p, base, args, params);
    if (scalars.back()->ival != 1)
        unsupported(p, "TensorDescriptor argument '" + name + "'", "the last dim must be contiguous (stride 1)");
    CV desc;
    desc.kind = CV::TensorDesc;
    desc.v = b_.param(name, ir::ParamKind::Pointer, Type{base.dtype, true, {}});
    desc.s = base.desc_padding.empty() ? "zero" : base.desc_padding;
    if (desc.s != "zero" && desc.s != "nan")
        unsupported(p, "TensorDescriptor argument '" + name + "'", "padding must be 'zero' or 'nan'");
    // Shapes and strides stay run-time scalars, so one backward serves every tensor size; the last
    // stride is the constant 1 that TensorDescriptor asserts on the host.
    for (size_t k = 0; k + 1 < scalars.size(); ++k) {
        const ArgBinding &b = *scalars[k];
        bool wide = b.ival > INT32_MAX || b.ival < INT32_MIN;
        desc.items.push_back(
            CV::value(b_.param(b.name, ir::ParamKind::Int, Type{wide ? DType::I64 : DType::I32, false, {}})));
    }
    desc.items.push_back(CV::integer(1));
    for (size_t d = 0; d < r; ++d) {
        std::string bname = tensor_desc_field(name, "block", d);
        desc.block.push_back(Dim{base.desc_block[d], bname});
        add_constexpr(bname, CV::integer(base.desc_block[d], bname));
    }
    return desc;
}

CV Lowerer::tensor_desc_attribute(const ast::Node &e, const CV &desc, const std::string &attr) {
    const size_t r = desc.block.size();
    if (attr == "load" || attr == "store" || attr == "atomic_add" || attr == "atomic_min" || attr == "atomic_max" ||
        attr == "atomic_and" || attr == "atomic_or" || attr == "atomic_xor" || attr == "gather" || attr == "scatter") {
        CV m = CV::named(CV::Method, attr);
        m.items.push_back(desc);
        return m;
    }
    if (attr == "dtype") return CV::dtype(fn_.type(desc.v).elem);
    CV t;
    t.kind = CV::Tuple;
    if (attr == "block_shape") {
        for (const Dim &d : desc.block) t.items.push_back(from_dim(d));
        return t;
    }
    if (attr == "shape" || attr == "strides") {
        size_t first = attr == "shape" ? 0 : r;
        t.items.assign(desc.items.begin() + static_cast<std::ptrdiff_t>(first),
                       desc.items.begin() + static_cast<std::ptrdiff_t>(first + r));
        return t;
    }
    unsupported(e, "tensor descriptor attribute '." + attr + "'", "");
}

CV Lowerer::tensor_desc_method(const ast::Node &e, const CV &desc, const std::string &name, const Args &a) {
    const std::string fn = "desc." + name;
    if (name == "gather" || name == "scatter")
        unsupported(e, fn, "row-gathered descriptor access is not lowered yet; use desc.load / desc.store per tile");
    if (name != "load" && name != "store" && name != "atomic_add")
        unsupported(e, fn, "only load, store and atomic_add of a tensor descriptor are differentiable");
    const size_t r = desc.block.size();
    std::vector<CV> offsets = list_items(need(a, 0, "offsets", e, fn));
    if (offsets.size() != r)
        unsupported(e, fn, "needs one offset per dim of the descriptor (" + std::to_string(r) + ")");
    CV window = desc;
    window.kind = CV::BlockPtr;
    for (const CV &o : offsets) {
        if (!int_scalar(o, fn_)) unsupported(e, fn, "offsets must be integer scalars");
        window.items.push_back(o);
    }
    auto [p, m] = block_window(e, window, std::vector<bool>(r, true));
    const Type pt = fn_.type(p);  // a copy: the ops added below may grow the value table
    m = predicated(m, pt.shape);
    if (name == "load") {
        ValueId pad = b_.constant(desc.s == "nan" ? NAN : 0.0, pt.elem);
        return CV::value(b_.load(p, m, b_.broadcast(pad, pt.shape)));
    }
    const CV &value = need(a, 1, "value", e, fn);
    bool block_tile = value.kind == CV::Value && fn_.type(value.v).rank() == r;
    for (size_t d = 0; block_tile && d < r; ++d) block_tile = fn_.type(value.v).shape[d].value == desc.block[d].value;
    if (!block_tile) unsupported(e, fn, "the value must be a tile of the descriptor's block shape");
    if (name == "atomic_add" && pt.elem != DType::F32 && pt.elem != DType::F16 && pt.elem != DType::BF16 &&
        pt.elem != DType::I32)
        unsupported(e, fn, "Triton's descriptor atomic_add takes float32, float16, bfloat16 or int32 tensors");
    // Triton casts a stored value to the descriptor's element type.
    ValueId v = b_.cast(value.v, pt.elem);
    if (name == "store")
        b_.store(p, v, m);
    else
        b_.atomic_add(p, v, m, "relaxed");
    return CV{};
}

}  // namespace tad::frontend::detail
