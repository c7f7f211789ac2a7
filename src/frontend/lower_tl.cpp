// triton.language functions other than memory access, and the name tables they use.
#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

const std::map<std::string, OpKind> &unary_math() {
    static const std::map<std::string, OpKind> m = {
        {"exp", OpKind::Exp},
        {"exp2", OpKind::Exp2},
        {"log", OpKind::Log},
        {"log2", OpKind::Log2},
        {"sqrt", OpKind::Sqrt},
        {"rsqrt", OpKind::Rsqrt},
        {"sigmoid", OpKind::Sigmoid},
        {"abs", OpKind::Abs},
        {"erf", OpKind::Erf},
        {"tanh", OpKind::Tanh},
        {"sin", OpKind::Sin},
        {"cos", OpKind::Cos},
        {"floor", OpKind::Floor},
        {"ceil", OpKind::Ceil},
        // libdevice only (no tl. spelling): reached as libdevice.<name> or tl.math.<name>.
        {"log1p", OpKind::Log1p},
        {"expm1", OpKind::Expm1},
        {"tan", OpKind::Tan},
        {"atan", OpKind::Atan},
        {"sinh", OpKind::Sinh},
        {"cosh", OpKind::Cosh},
        {"asin", OpKind::Asin},
        {"acos", OpKind::Acos},
    };
    return m;
}

const std::map<std::string, DType> &dtype_names() {
    static const std::map<std::string, DType> m = {
        {"float16", DType::F16}, {"bfloat16", DType::BF16}, {"float32", DType::F32}, {"float64", DType::F64},
        {"int32", DType::I32},   {"int64", DType::I64},     {"int1", DType::I1},     {"fp16", DType::F16},
        {"fp32", DType::F32},    {"bf16", DType::BF16},     {"fp64", DType::F64},
    };
    return m;
}

CV Lowerer::tl_call(const ast::Node &e, const std::string &name, const std::string &full, const Args &a) {
    if (name == "program_id" || name == "num_programs") {
        const CV *ax = a.get(0, "axis");
        int axis = ax ? static_cast<int>(ax->i) : 0;
        return CV::value(name == "program_id" ? b_.program_id(axis) : b_.num_programs(axis));
    }
    if (name == "arange") {
        const CV &s = need(a, 0, "start", e, "tl.arange"), &t = need(a, 1, "end", e, "tl.arange");
        if (s.kind != CV::Int || t.kind != CV::Int)
            unsupported(e, "tl.arange", "start and end must be constexpr integers");
        std::string len = s.i == 0 ? t.s : paren(t.s) + " - " + paren(s.s);
        ValueId r = b_.arange(0, t.i - s.i, len);
        if (s.i != 0)
            r = b_.binary(
                OpKind::Add, r,
                b_.broadcast(b_.constant(static_cast<double>(s.i), DType::I32, s.s == std::to_string(s.i) ? "" : s.s),
                             fn_.type(r).shape));
        return CV::value(r);
    }
    if (name == "zeros" || name == "full") {
        std::vector<Dim> shape = shape_arg(need(a, 0, "shape", e, "tl." + name), e);
        CV val = name == "zeros" ? CV::integer(0) : need(a, 1, "value", e, "tl.full");
        DType t = dtype_arg(need(a, name == "zeros" ? 1 : 2, "dtype", e, "tl." + name), e);
        double v = val.kind == CV::Float ? val.f : static_cast<double>(val.i);
        return CV::value(b_.broadcast(b_.constant(v, t), shape));
    }
    if (name == "make_block_ptr") return make_block_ptr(e, a);
    if (name == "advance") return advance(e, a);
    if (name == "make_tensor_descriptor") return make_tensor_descriptor(e, a);
    if (name == "load") return load(e, a);
    if (name == "store" || name == "atomic_add") return store(e, name, a);
    if (name == "where")
        return where(need(a, 0, "condition", e, "tl.where"), need(a, 1, "x", e, "tl.where"),
                     need(a, 2, "y", e, "tl.where"), e);
    if (name == "maximum" || name == "minimum") {
        auto [x, y] = unify(need(a, 0, "x", e, "tl." + name), need(a, 1, "y", e, "tl." + name), e);
        return CV::value(b_.binary(name == "maximum" ? OpKind::Maximum : OpKind::Minimum, x, y));
    }
    if (name == "sum" || name == "max" || name == "min" || name == "argmax" || name == "argmin")
        return reduce(e, name, a);
    if (name == "cumsum" || name == "associative_scan") return scan(e, name, a);
    if (name == "reshape" || name == "view") return reshape(e, name, a);
    if (name == "join") {
        auto [x, y] = unify(need(a, 0, "a", e, "tl.join"), need(a, 1, "b", e, "tl.join"), e);
        return CV::value(b_.join(x, y));
    }
    if (name == "split") {
        ValueId v = value_arg(need(a, 0, "a", e, "tl.split"), e);
        const Type &t = fn_.type(v);
        if (t.rank() == 0 || t.shape.back().value != 2)
            unsupported(e, "tl.split of " + t.str(), "the last dim must have size 2");
        CV pair;
        pair.kind = CV::Tuple;
        pair.items = {CV::value(b_.split(v, 0)), CV::value(b_.split(v, 1))};
        return pair;
    }
    if (name == "cat")
        unsupported(
            e, "tl.cat",
            "triton 3.6 may reorder the elements (can_reorder=True is required), so no gradient can be mapped back");
    if (name == "pow") {
        auto [x, y] = unify(need(a, 0, "x", e, full), need(a, 1, "y", e, full), e);
        if (!fn_.type(x).is_float()) {
            x = b_.cast(x, DType::F32);
            y = b_.cast(y, DType::F32);
        }
        return CV::value(b_.binary(OpKind::Pow, x, y));
    }
    // Composites lowered to ops the rules table already has.
    if (name == "fdiv" || name == "div_rn")
        return binop("Div", need(a, 0, "x", e, "tl." + name), need(a, 1, "y", e, "tl." + name), e);
    if (name == "sqrt_rn") return tl_call(e, "sqrt", "tl.sqrt", a);
    if (name == "fma") {  // x·y + z
        CV xy = binop("Mult", need(a, 0, "x", e, "tl.fma"), need(a, 1, "y", e, "tl.fma"), e);
        return binop("Add", xy, need(a, 2, "z", e, "tl.fma"), e);
    }
    if (name == "clamp") {  // min(max(x, lo), hi): at a bound the gradient is shared as for ties
        auto [x, lo] = unify(need(a, 0, "x", e, "tl.clamp"), need(a, 1, "min", e, "tl.clamp"), e);
        ValueId low = b_.binary(OpKind::Maximum, x, lo);
        auto [y, hi] = unify(CV::value(low), need(a, 2, "max", e, "tl.clamp"), e);
        return CV::value(b_.binary(OpKind::Minimum, y, hi));
    }
    if (name == "softmax") {  // exp(x - max) / Σ exp(x - max) along the last dim
        ValueId x = value_arg(need(a, 0, "input", e, "tl.softmax"), e);
        if (!fn_.type(x).is_float()) x = b_.cast(x, DType::F32);
        int last = static_cast<int>(fn_.type(x).rank()) - 1;
        if (last < 0) unsupported(e, "tl.softmax of a scalar", "");
        ValueId m = b_.broadcast(b_.reduce(OpKind::ReduceMax, x, last, true), fn_.type(x).shape);
        ValueId num = b_.unary(OpKind::Exp, b_.binary(OpKind::Sub, x, m));
        ValueId den = b_.broadcast(b_.reduce(OpKind::ReduceSum, num, last, true), fn_.type(x).shape);
        return CV::value(b_.binary(OpKind::Div, num, den));
    }
    if (name == "cast")
        return CV::value(b_.cast(value_arg(need(a, 0, "input", e, "tl.cast"), e),
                                 dtype_arg(need(a, 1, "dtype", e, "tl.cast"), e), true));
    if (name == "broadcast_to") {
        ValueId v = value_arg(need(a, 0, "input", e, "tl.broadcast_to"), e);
        return CV::value(b_.broadcast(v, shape_arg(need(a, 1, "shape", e, "tl.broadcast_to"), e)));
    }
    if (name == "dot") return dot(e, a);
    if (name == "trans" || name == "permute") {
        ValueId v = value_arg(need(a, 0, "input", e, "tl." + name), e);
        if (fn_.type(v).rank() != 2)
            unsupported(e, "tl." + name + " of a " + std::to_string(fn_.type(v).rank()) + "-D tile",
                        "only 2-D tiles are supported");
        if (name == "permute") {
            const CV &dims = need(a, 1, "dims", e, "tl.permute");
            if (dims.kind != CV::Tuple || dims.items.size() != 2 || dims.items[0].i != 1 || dims.items[1].i != 0)
                unsupported(e, "tl.permute", "only (1, 0) on 2-D tiles");
        }
        return CV::value(b_.trans(v));
    }
    if (name == "expand_dims") {
        const CV &ax = need(a, 1, "axis", e, "tl.expand_dims");
        return CV::value(
            b_.expand_dims(value_arg(need(a, 0, "input", e, "tl.expand_dims"), e), static_cast<int>(ax.i)));
    }
    if (name == "static_assert" || name == "device_assert" || name == "static_print") return CV{};
    if (name == "debug_barrier") {
        b_.barrier();
        return CV{};
    }
    if (name == "constexpr") return need(a, 0, "value", e, "tl.constexpr");
    if (name == "rand") {
        ValueId seed = b_.cast(value_arg(need(a, 0, "seed", e, "tl.rand"), e), DType::I32);
        ValueId offs = value_arg(need(a, 1, "offset", e, "tl.rand"), e);
        if (ir::dtype_is_float(fn_.type(offs).elem)) unsupported(e, "tl.rand with float offsets", "");
        return CV::value(b_.rand(seed, offs));
    }
    if (name == "cdiv") {
        const CV &x = need(a, 0, "x", e, "cdiv"), &y = need(a, 1, "div", e, "cdiv");
        if (x.kind == CV::Int && y.kind == CV::Int) return CV::integer((x.i + y.i - 1) / y.i);
        CV num = binop("Add", x, binop("Sub", y, CV::integer(1), e), e);
        return binop("FloorDiv", num, y, e);
    }
    auto um = unary_math().find(name);
    if (um != unary_math().end()) {
        const CV &x = need(a, 0, "x", e, full);
        if (x.compile_time()) unsupported(e, full + " of a constant", "");
        ValueId v = x.v;
        if (!fn_.type(v).is_float() && um->second != OpKind::Abs) v = b_.cast(v, DType::F32);
        return CV::value(b_.unary(um->second, v));
    }
    unsupported(e, full, "not in tad's rules table yet");
}

CV Lowerer::dot(const ast::Node &e, const Args &a) {
    ValueId x = value_arg(need(a, 0, "input", e, "tl.dot"), e), y = value_arg(need(a, 1, "other", e, "tl.dot"), e);
    if (fn_.type(x).rank() != 2 || fn_.type(y).rank() != 2)
        unsupported(e, "tl.dot of 3-D tiles", "batched dots are not supported yet");
    if (fn_.type(x).shape[1].value != fn_.type(y).shape[0].value)
        fail(TAD_ERR_UNSUPPORTED,
             at(e) + ": tl.dot shapes " + fn_.type(x).str() + " and " + fn_.type(y).str() + " do not multiply");
    if (fn_.type(x).elem != fn_.type(y).elem) {
        DType t = promote(fn_.type(x).elem, fn_.type(y).elem);
        x = b_.cast(x, t);
        y = b_.cast(y, t);
    }
    std::string precision;
    const CV *p = a.kw.count("input_precision") ? &a.kw.at("input_precision") : nullptr;
    if (p && p->kind == CV::Str) precision = p->s;
    const CV *tf32 = a.kw.count("allow_tf32") ? &a.kw.at("allow_tf32") : nullptr;
    if (tf32 && tf32->kind == CV::Bool && !tf32->i) precision = "ieee";
    const CV *out = a.kw.count("out_dtype") ? &a.kw.at("out_dtype") : nullptr;
    DType od =
        out && out->kind == CV::DTypeV ? out->dt : (ir::dtype_is_float(fn_.type(x).elem) ? DType::F32 : DType::I32);
    ValueId r = b_.dot(x, y, od, precision);
    const CV *acc = a.get(2, "acc");
    if (!acc || acc->kind == CV::None) return CV::value(r);
    ValueId av = value_arg(*acc, e);
    return CV::value(b_.binary(OpKind::Add, av, b_.cast(r, fn_.type(av).elem)));
}

CV Lowerer::reduce(const ast::Node &e, const std::string &name, const Args &a) {
    ValueId v = value_arg(need(a, 0, "input", e, "tl." + name), e);
    const CV *axis = a.get(1, "axis");
    const CV *keep = a.kw.count("keep_dims") ? &a.kw.at("keep_dims") : nullptr;
    bool indices = a.kw.count("return_indices") && a.kw.at("return_indices").i;
    if (indices && name != "max" && name != "min") unsupported(e, "tl." + name + " with return_indices", "");
    int ax = -1;
    if (axis && axis->kind != CV::None) {
        ax = static_cast<int>(axis->i);
        if (ax < 0) ax += static_cast<int>(fn_.type(v).rank());
    }
    bool kd = keep && keep->i;
    if (name == "argmax" || name == "argmin") {
        const CV *left = a.kw.count("tie_break_left") ? &a.kw.at("tie_break_left") : nullptr;
        if (left && !left->i) unsupported(e, "tl." + name + " with tie_break_left=False", "");
        if (ax < 0) unsupported(e, "tl." + name + " without an axis", "");
        return CV::value(b_.reduce(name == "argmax" ? OpKind::Argmax : OpKind::Argmin, v, ax, kd));
    }
    OpKind k = name == "sum" ? OpKind::ReduceSum : name == "max" ? OpKind::ReduceMax : OpKind::ReduceMin;
    if (k == OpKind::ReduceSum && fn_.type(v).elem == DType::I1) v = b_.cast(v, DType::I32);
    if (ax < 0 && kd) unsupported(e, "tl." + name + " over all dims with keep_dims", "");
    if (ax < 0 && fn_.type(v).rank() == 1) ax = 0;
    if (indices) {  // (values, indices): the first index of the extreme, as tie_break_left=True
        if (ax < 0) unsupported(e, "tl." + name + " with return_indices over all dims", "");
        CV pair;
        pair.kind = CV::Tuple;
        pair.items = {CV::value(b_.reduce(k, v, ax, kd)),
                      CV::value(b_.reduce(name == "max" ? OpKind::Argmax : OpKind::Argmin, v, ax, kd))};
        return pair;
    }
    return CV::value(b_.reduce(k, v, ax, kd));
}

CV Lowerer::scan(const ast::Node &e, const std::string &name, const Args &a) {
    const std::string fn = "tl." + name;
    ValueId v = value_arg(need(a, 0, "input", e, fn), e);
    const CV *axis = a.get(1, "axis");
    int ax = axis && axis->kind == CV::Int ? static_cast<int>(axis->i) : 0;
    if (ax < 0) ax += static_cast<int>(fn_.type(v).rank());
    if (ax < 0 || ax >= static_cast<int>(fn_.type(v).rank()))
        unsupported(e, fn, "axis out of range for " + fn_.type(v).str());
    const CV *rev = a.get(name == "cumsum" ? 2 : 3, "reverse");
    bool reverse = rev && rev->kind != CV::None && rev->i;
    if (name == "associative_scan") {
        const CV &combine = need(a, 2, "combine_fn", e, fn);
        if (combine.kind != CV::Func || !is_add_combiner(combine.s))
            unsupported(e, fn, "only a combine_fn that returns the sum of its two arguments is differentiable");
    } else if (a.get(3, "dtype") && a.get(3, "dtype")->kind == CV::DTypeV) {
        v = b_.cast(v, a.get(3, "dtype")->dt);
    }
    // As Triton's sum scans: bfloat16 in float32, narrow integers in int32.
    DType t = fn_.type(v).elem;
    if (t == DType::BF16) v = b_.cast(v, DType::F32);
    if (t == DType::I1) v = b_.cast(v, DType::I32);
    return CV::value(b_.cumsum(v, ax, reverse));
}

bool Lowerer::is_add_combiner(const std::string &callee) const {
    auto it = jit_.find(callee);
    if (it == jit_.end()) return false;
    const ast::NodeList &params = it->second->node("args")->list("args");
    const ast::NodeList &body = it->second->list("body");
    if (params.size() != 2 || body.empty() || !body.back()->is("Return")) return false;
    ast::NodePtr r = body.back()->node("value");
    if (!r || !r->is("BinOp") || !r->node("op")->is("Add")) return false;
    auto names = [&](const ast::NodePtr &n, size_t i) {
        return n->is("Name") && n->str("id") == params[i]->str("arg");
    };
    ast::NodePtr l = r->node("left"), rr = r->node("right");
    return body.size() == 1 && ((names(l, 0) && names(rr, 1)) || (names(l, 1) && names(rr, 0)));
}

CV Lowerer::reshape(const ast::Node &e, const std::string &name, const Args &a) {
    if (name == "view") unsupported(e, "tl.view", "it does not keep the element order; use tl.reshape");
    const CV *reorder = a.kw.count("can_reorder") ? &a.kw.at("can_reorder") : nullptr;
    if (reorder && reorder->i) unsupported(e, "tl.reshape with can_reorder=True", "the element order is unspecified");
    ValueId v = value_arg(need(a, 0, "input", e, "tl.reshape"), e);
    CV dims;
    if (a.pos.size() == 2 && a.pos[1].kind == CV::Tuple) {
        dims = a.pos[1];
    } else {
        dims.kind = CV::Tuple;
        dims.items.assign(a.pos.begin() + 1, a.pos.end());
    }
    std::vector<Dim> shape = shape_arg(dims, e);
    int64_t n = 1;
    for (const Dim &d : shape) n *= d.value;
    if (n != fn_.type(v).numel())
        fail(TAD_ERR_UNSUPPORTED,
             at(e) + ": tl.reshape of " + fn_.type(v).str() + " to " + std::to_string(n) + " elements");
    return CV::value(b_.reshape(v, shape));
}

}  // namespace tad::frontend::detail
