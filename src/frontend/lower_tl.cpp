// triton.language functions other than memory access, and the name tables they use.
#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

const std::map<std::string, OpKind> &unary_math() {
    static const std::map<std::string, OpKind> m = [] {
        std::map<std::string, OpKind> names;
        for (const ir::OpInfo &op : ir::op_table())
            if (op.cls == ir::OpClass::Unary && *op.tl_name) names[op.tl_name] = op.kind;
        return names;
    }();
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

// How a user gives tad the derivative of what it has no rule for (docs/compiler.md).
const char *const kDifferentiateAs =
    "call it from a @triton.jit helper and give that helper a differentiable definition in "
    "TAD_DIFFERENTIATE_AS = {helper: definition}";

// Each function by its name without the module prefix; unary math comes from the op table instead.
const std::map<std::string, Lowerer::TlLowering> &Lowerer::tl_lowerings() {
    using L = Lowerer;
    using C = const TlCall &;
    static const std::map<std::string, TlLowering> m = {
        {"program_id", [](L &l, C c) { return l.tl_program_id(c); }},
        {"num_programs", [](L &l, C c) { return l.tl_program_id(c); }},
        {"arange", [](L &l, C c) { return l.tl_arange(c); }},
        {"zeros", [](L &l, C c) { return l.tl_full(c); }},
        {"full", [](L &l, C c) { return l.tl_full(c); }},
        {"zeros_like", [](L &l, C c) { return l.tl_zeros_like(c); }},
        {"make_block_ptr", [](L &l, C c) { return l.make_block_ptr(c.e, c.a); }},
        {"advance", [](L &l, C c) { return l.advance(c.e, c.a); }},
        {"make_tensor_descriptor", [](L &l, C c) { return l.make_tensor_descriptor(c.e, c.a); }},
        {"load", [](L &l, C c) { return l.load(c.e, c.a); }},
        {"store", [](L &l, C c) { return l.store(c.e, c.name, c.a); }},
        {"atomic_add", [](L &l, C c) { return l.store(c.e, c.name, c.a); }},
        {"where", [](L &l, C c) { return l.tl_where(c); }},
        {"maximum", [](L &l, C c) { return l.tl_extremum(c, OpKind::Maximum); }},
        {"minimum", [](L &l, C c) { return l.tl_extremum(c, OpKind::Minimum); }},
        {"sum", [](L &l, C c) { return l.reduce(c.e, c.name, c.a); }},
        {"max", [](L &l, C c) { return l.reduce(c.e, c.name, c.a); }},
        {"min", [](L &l, C c) { return l.reduce(c.e, c.name, c.a); }},
        {"argmax", [](L &l, C c) { return l.reduce(c.e, c.name, c.a); }},
        {"argmin", [](L &l, C c) { return l.reduce(c.e, c.name, c.a); }},
        {"cumsum", [](L &l, C c) { return l.scan(c.e, c.name, c.a); }},
        {"associative_scan", [](L &l, C c) { return l.scan(c.e, c.name, c.a); }},
        {"reshape", [](L &l, C c) { return l.reshape(c.e, c.name, c.a); }},
        {"view", [](L &l, C c) { return l.reshape(c.e, c.name, c.a); }},
        {"join", [](L &l, C c) { return l.tl_join(c); }},
        {"split", [](L &l, C c) { return l.tl_split(c); }},
        {"cat", [](L &l, C c) { return l.tl_cat(c); }},
        {"pow", [](L &l, C c) { return l.tl_pow(c); }},
        // Composites lowered to ops the rules table already has.
        {"fdiv", [](L &l, C c) { return l.tl_div(c); }},
        {"div_rn", [](L &l, C c) { return l.tl_div(c); }},
        {"sqrt_rn", [](L &l, C c) { return l.tl_call(c.e, "sqrt", "tl.sqrt", c.a); }},
        {"fma", [](L &l, C c) { return l.tl_fma(c); }},
        {"clamp", [](L &l, C c) { return l.tl_clamp(c); }},
        {"softmax", [](L &l, C c) { return l.tl_softmax(c); }},
        {"cast", [](L &l, C c) { return l.tl_cast(c); }},
        {"broadcast_to", [](L &l, C c) { return l.tl_broadcast_to(c); }},
        {"dot", [](L &l, C c) { return l.dot(c.e, c.a); }},
        {"trans", [](L &l, C c) { return l.tl_trans(c); }},
        {"permute", [](L &l, C c) { return l.tl_trans(c); }},
        {"expand_dims", [](L &l, C c) { return l.tl_expand_dims(c); }},
        {"static_assert", [](L &, C) { return CV{}; }},
        {"device_assert", [](L &, C) { return CV{}; }},
        {"static_print", [](L &, C) { return CV{}; }},
        {"debug_barrier", [](L &l, C) { return l.tl_debug_barrier(); }},
        {"constexpr", [](L &l, C c) { return l.need(c.a, 0, "value", c.e, "tl.constexpr"); }},
        {"rand", [](L &l, C c) { return l.tl_rand(c); }},
        {"randn", [](L &l, C c) { return l.tl_rand(c); }},
        {"cdiv", [](L &l, C c) { return l.tl_cdiv(c); }},
        {"next_power_of_2", [](L &l, C c) { return l.next_power_of_2(c); }},
        // Hints to Triton's compiler: the value itself, or nothing.
        {"multiple_of", [](L &l, C c) { return l.need(c.a, 0, "input", c.e, c.full); }},
        {"max_contiguous", [](L &l, C c) { return l.need(c.a, 0, "input", c.e, c.full); }},
        {"max_constancy", [](L &l, C c) { return l.need(c.a, 0, "input", c.e, c.full); }},
        {"assume", [](L &, C) { return CV{}; }},
    };
    return m;
}

CV Lowerer::tl_call(const ast::Node &e, const std::string &name, const std::string &full, const Args &a) {
    const TlCall c{e, name, full, a};
    // An argument whose spelling does not name the constexprs it came from can only be used by
    // value, whatever the lowering below does with it. (Symbolic ones are consumed where a lowering
    // uses them by value: int_of, flag_of, str_of, dim_of, materialize.) Functions that leave no
    // trace in the IR, or pass their argument on, consume nothing.
    static const std::set<std::string> traceless = {"static_assert", "device_assert",  "static_print",  "constexpr",
                                                    "multiple_of",   "max_contiguous", "max_constancy", "assume"};
    if (!traceless.count(name)) {
        for (const CV &x : a.pos) consume_baked(x);
        for (const auto &[k, x] : a.kw) consume_baked(x);
    }
    auto lowering = tl_lowerings().find(name);
    if (lowering != tl_lowerings().end()) return lowering->second(*this, c);
    auto um = unary_math().find(name);
    if (um != unary_math().end()) return tl_unary_math(c, um->second);
    if (name.rfind("atomic_", 0) == 0)  // a store, which no helper definition can stand in for
        unsupported(e, full,
                    "of Triton's atomics tad differentiates tl.atomic_add only; compute this one with torch in the "
                    "stub");
    unsupported(e, full,
                name == "inline_asm_elementwise"
                    ? "tad cannot differentiate inline assembly; " + std::string(kDifferentiateAs)
                    : "not in tad's rules table yet; " + std::string(kDifferentiateAs));
}

// An integer operand is computed in f32 unless the op is defined on integers.
CV Lowerer::tl_unary_math(const TlCall &c, OpKind k) {
    const CV &x = need(c.a, 0, "x", c.e, c.full);
    if (x.compile_time()) unsupported(c.e, c.full + " of a constant", "");
    ValueId v = x.v;
    if (!fn_.type(v).is_float() && !ir::op_info(k).int_lane) v = b_.cast(v, DType::F32);
    return CV::value(b_.unary(k, v));
}

CV Lowerer::tl_program_id(const TlCall &c) {
    const CV *ax = c.a.get(0, "axis");
    const int axis = ax ? static_cast<int>(int_of(*ax, c.e, "tl." + c.name + "'s axis")) : 0;
    if (axis < 0 || axis > 2)
        unsupported(c.e, "tl." + c.name + "(" + std::to_string(axis) + ")", "the axis is 0, 1 or 2");
    return CV::value(c.name == "program_id" ? b_.program_id(axis) : b_.num_programs(axis));
}

CV Lowerer::tl_arange(const TlCall &c) {
    const CV &s = need(c.a, 0, "start", c.e, "tl.arange"), &t = need(c.a, 1, "end", c.e, "tl.arange");
    if (s.kind != CV::Int || t.kind != CV::Int)
        unsupported(c.e, "tl.arange", "start and end must be constexpr integers");
    // A literal start of 0 is left out; a constexpr start is kept even where it is 0, so that what
    // is recorded never depends on the value (every trace then records the same constexprs).
    const bool from_zero = s.i == 0 && s.deps.empty();
    std::string len = std::to_string(t.i - s.i);
    if (spellable(s) && spellable(t))
        len = from_zero ? spelling(t) : paren(spelling(t)) + " - " + paren(spelling(s));
    else
        consume(t), consume(s);
    ValueId r = b_.arange(0, t.i - s.i, len);
    if (from_zero) return CV::value(r);
    Type i32{DType::I32, false, {}};
    ValueId start = b_.broadcast(b_.cast(materialize(s, &i32, c.e), DType::I32), fn_.type(r).shape);
    return CV::value(b_.binary(OpKind::Add, r, start));
}

CV Lowerer::tl_full(const TlCall &c) {
    const bool zeros = c.name == "zeros";
    std::vector<Dim> shape = shape_arg(need(c.a, 0, "shape", c.e, "tl." + c.name), c.e);
    CV val = zeros ? CV::integer(0) : need(c.a, 1, "value", c.e, "tl.full");
    DType t = dtype_arg(need(c.a, zeros ? 1 : 2, "dtype", c.e, "tl." + c.name), c.e);
    // A constexpr value stays spelled by its name (materialize); a run-time scalar is splat.
    if (val.kind == CV::Value && !fn_.type(val.v).scalar())
        unsupported(c.e, "tl.full with a tile value", "the value must be a number or a scalar");
    if (val.kind != CV::Value && val.kind != CV::Int && val.kind != CV::Float && val.kind != CV::Bool)
        unsupported(c.e, "tl.full", "the value must be a number or a scalar");
    Type like{t, false, {}};
    return CV::value(b_.broadcast(b_.cast(materialize(val, &like, c.e), t), shape));
}

// Zeros of the input's shape (its dims keep their spellings) and element type, as Triton defines it.
CV Lowerer::tl_zeros_like(const TlCall &c) {
    ValueId x = value_arg(need(c.a, 0, "input", c.e, "tl.zeros_like"), c.e);
    const Type t = fn_.type(x);
    if (t.is_ptr) unsupported(c.e, "tl.zeros_like of a pointer", "");
    Type like{t.elem, false, {}};
    return CV::value(b_.broadcast(b_.cast(materialize(CV::integer(0), &like, c.e), t.elem), t.shape));
}

CV Lowerer::tl_where(const TlCall &c) {
    return where(need(c.a, 0, "condition", c.e, "tl.where"), need(c.a, 1, "x", c.e, "tl.where"),
                 need(c.a, 2, "y", c.e, "tl.where"), c.e);
}

CV Lowerer::tl_extremum(const TlCall &c, OpKind k) {
    auto [x, y] = unify(need(c.a, 0, "x", c.e, "tl." + c.name), need(c.a, 1, "y", c.e, "tl." + c.name), c.e);
    return CV::value(b_.binary(k, x, y));
}

CV Lowerer::tl_join(const TlCall &c) {
    auto [x, y] = unify(need(c.a, 0, "a", c.e, "tl.join"), need(c.a, 1, "b", c.e, "tl.join"), c.e);
    return CV::value(b_.join(x, y));
}

CV Lowerer::tl_split(const TlCall &c) {
    ValueId v = value_arg(need(c.a, 0, "a", c.e, "tl.split"), c.e);
    const Type &t = fn_.type(v);
    if (t.rank() == 0 || t.shape.back().value != 2)
        unsupported(c.e, "tl.split of " + t.str(), "the last dim must have size 2");
    CV pair;
    pair.kind = CV::Tuple;
    pair.items = {CV::value(b_.split(v, 0)), CV::value(b_.split(v, 1))};
    return pair;
}

CV Lowerer::tl_cat(const TlCall &c) {
    unsupported(
        c.e, "tl.cat",
        "triton 3.6 may reorder the elements (can_reorder=True is required), so no gradient can be mapped back");
}

CV Lowerer::tl_pow(const TlCall &c) {
    auto [x, y] = unify(need(c.a, 0, "x", c.e, c.full), need(c.a, 1, "y", c.e, c.full), c.e);
    if (!fn_.type(x).is_float()) {
        x = b_.cast(x, DType::F32);
        y = b_.cast(y, DType::F32);
    }
    return CV::value(b_.binary(OpKind::Pow, x, y));
}

CV Lowerer::tl_div(const TlCall &c) {
    return binop("Div", need(c.a, 0, "x", c.e, "tl." + c.name), need(c.a, 1, "y", c.e, "tl." + c.name), c.e);
}

CV Lowerer::tl_fma(const TlCall &c) {  // x·y + z
    CV xy = binop("Mult", need(c.a, 0, "x", c.e, "tl.fma"), need(c.a, 1, "y", c.e, "tl.fma"), c.e);
    return binop("Add", xy, need(c.a, 2, "z", c.e, "tl.fma"), c.e);
}

CV Lowerer::tl_clamp(const TlCall &c) {  // min(max(x, lo), hi): at a bound the gradient is shared as for ties
    auto [x, lo] = unify(need(c.a, 0, "x", c.e, "tl.clamp"), need(c.a, 1, "min", c.e, "tl.clamp"), c.e);
    ValueId low = b_.binary(OpKind::Maximum, x, lo);
    auto [y, hi] = unify(CV::value(low), need(c.a, 2, "max", c.e, "tl.clamp"), c.e);
    return CV::value(b_.binary(OpKind::Minimum, y, hi));
}

CV Lowerer::tl_softmax(const TlCall &c) {  // exp(x - max) / Σ exp(x - max) along the last dim
    ValueId x = value_arg(need(c.a, 0, "input", c.e, "tl.softmax"), c.e);
    if (!fn_.type(x).is_float()) x = b_.cast(x, DType::F32);
    int last = static_cast<int>(fn_.type(x).rank()) - 1;
    if (last < 0) unsupported(c.e, "tl.softmax of a scalar", "");
    ValueId m = b_.broadcast(b_.reduce(OpKind::ReduceMax, x, last, true), fn_.type(x).shape);
    ValueId num = b_.unary(OpKind::Exp, b_.binary(OpKind::Sub, x, m));
    ValueId den = b_.broadcast(b_.reduce(OpKind::ReduceSum, num, last, true), fn_.type(x).shape);
    return CV::value(b_.binary(OpKind::Div, num, den));
}

CV Lowerer::tl_cast(const TlCall &c) {
    return CV::value(b_.cast(value_arg(need(c.a, 0, "input", c.e, "tl.cast"), c.e),
                             dtype_arg(need(c.a, 1, "dtype", c.e, "tl.cast"), c.e), true));
}

CV Lowerer::tl_broadcast_to(const TlCall &c) {
    ValueId v = value_arg(need(c.a, 0, "input", c.e, "tl.broadcast_to"), c.e);
    return CV::value(b_.broadcast(v, shape_arg(need(c.a, 1, "shape", c.e, "tl.broadcast_to"), c.e)));
}

CV Lowerer::tl_trans(const TlCall &c) {
    ValueId v = value_arg(need(c.a, 0, "input", c.e, "tl." + c.name), c.e);
    if (fn_.type(v).rank() != 2)
        unsupported(c.e, "tl." + c.name + " of a " + std::to_string(fn_.type(v).rank()) + "-D tile",
                    "only 2-D tiles are supported");
    if (c.name == "permute") {
        const CV &dims = need(c.a, 1, "dims", c.e, "tl.permute");
        if (dims.kind != CV::Tuple || dims.items.size() != 2 || int_of(dims.items[0], c.e, "tl.permute's dims") != 1 ||
            int_of(dims.items[1], c.e, "tl.permute's dims") != 0)
            unsupported(c.e, "tl.permute", "only (1, 0) on 2-D tiles");
    }
    return CV::value(b_.trans(v));
}

CV Lowerer::tl_expand_dims(const TlCall &c) {
    ValueId v = value_arg(need(c.a, 0, "input", c.e, "tl.expand_dims"), c.e);
    const auto rank = static_cast<int64_t>(fn_.type(v).rank());
    int64_t ax = int_of(need(c.a, 1, "axis", c.e, "tl.expand_dims"), c.e, "tl.expand_dims's axis");
    if (ax < -(rank + 1) || ax > rank)
        unsupported(c.e, "tl.expand_dims", "axis " + std::to_string(ax) + " out of range for " + fn_.type(v).str());
    return CV::value(b_.expand_dims(v, static_cast<int>(ax < 0 ? ax + rank + 1 : ax)));
}

CV Lowerer::tl_debug_barrier() {
    b_.barrier();
    return CV{};
}

// tl.rand and tl.randn: replayed by the backward, no gradient.
CV Lowerer::tl_rand(const TlCall &c) {
    const std::string fn = "tl." + c.name;
    ValueId seed = b_.cast(value_arg(need(c.a, 0, "seed", c.e, fn), c.e), DType::I32);
    ValueId offs = value_arg(need(c.a, 1, "offset", c.e, fn), c.e);
    if (ir::dtype_is_float(fn_.type(offs).elem)) unsupported(c.e, fn + " with float offsets", "");
    return CV::value(b_.rand(seed, offs, c.name == "randn" ? OpKind::Randn : OpKind::Rand));
}

CV Lowerer::tl_cdiv(const TlCall &c) {
    const CV &x = need(c.a, 0, "x", c.e, "cdiv"), &y = need(c.a, 1, "div", c.e, "cdiv");
    // (x + div - 1) // div, as triton.language.cdiv computes it: on constexprs folded with its
    // spelling, so a trip count or a dim computed by cdiv stays symbolic.
    CV num = binop("Add", x, binop("Sub", y, CV::integer(1), c.e), c.e);
    return binop("FloorDiv", num, y, c.e);
}

// triton.next_power_of_2 of a constexpr: folded without a spelling (specialized where used).
CV Lowerer::next_power_of_2(const TlCall &c) {
    const CV &x = need(c.a, 0, "n", c.e, c.full);
    if (x.kind != CV::Int) unsupported(c.e, c.full, "takes a constexpr integer in a kernel");
    int64_t p = 1;
    while (p < x.i) p <<= 1;
    CV r = CV::integer(p);
    r.deps = x.deps;
    return r;
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
    std::string precision = str_of(a.kw.count("input_precision") ? &a.kw.at("input_precision") : nullptr);
    const CV *tf32 = a.kw.count("allow_tf32") ? &a.kw.at("allow_tf32") : nullptr;
    if (tf32 && tf32->kind == CV::Bool && !flag_of(tf32)) precision = "ieee";
    const CV *out = a.kw.count("out_dtype") ? &a.kw.at("out_dtype") : nullptr;
    DType od = out && out->kind == CV::DTypeV ? dtype_arg(*out, e)
                                              : (ir::dtype_is_float(fn_.type(x).elem) ? DType::F32 : DType::I32);
    ValueId r = b_.dot(x, y, od, precision);
    const CV *acc = a.get(2, "acc");
    if (!acc || acc->kind == CV::None) return CV::value(r);
    ValueId av = value_arg(*acc, e);
    return CV::value(b_.binary(OpKind::Add, av, b_.cast(r, fn_.type(av).elem)));
}

CV Lowerer::reduce(const ast::Node &e, const std::string &name, const Args &a) {
    ValueId v = value_arg(need(a, 0, "input", e, "tl." + name), e);
    const CV *axis = a.get(1, "axis");
    const bool indices = flag_of(a.kw.count("return_indices") ? &a.kw.at("return_indices") : nullptr);
    if (indices && name != "max" && name != "min") unsupported(e, "tl." + name + " with return_indices", "");
    int ax = -1;
    if (axis && axis->kind != CV::None) ax = reduce_axis(e, name, *axis, fn_.type(v));
    const bool kd = flag_of(a.kw.count("keep_dims") ? &a.kw.at("keep_dims") : nullptr);
    if (name == "argmax" || name == "argmin") {
        const CV *left = a.kw.count("tie_break_left") ? &a.kw.at("tie_break_left") : nullptr;
        if (left && !flag_of(left)) unsupported(e, "tl." + name + " with tie_break_left=False", "");
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

int Lowerer::reduce_axis(const ast::Node &e, const std::string &name, const CV &axis, const Type &t) {
    const std::string fn = "tl." + name;
    if (axis.kind == CV::Value) {
        const bool extremum = name == "max" || name == "min";
        const std::string elementwise = name == "max" ? "maximum" : "minimum";
        unsupported(e, fn + " with a tile as its axis",
                    extremum
                        ? "the second argument of " + fn + " is the axis, a constexpr integer; for the elementwise " +
                              elementwise + " of two tiles use tl." + elementwise + "(a, b)"
                        : "the axis must be a constexpr integer");
    }
    const int64_t ax = int_of(axis, e, fn + "'s axis");
    const auto rank = static_cast<int64_t>(t.rank());
    if (ax < -rank || ax >= rank) unsupported(e, fn, "axis " + std::to_string(ax) + " out of range for " + t.str());
    return static_cast<int>(ax < 0 ? ax + rank : ax);
}

CV Lowerer::scan(const ast::Node &e, const std::string &name, const Args &a) {
    const std::string fn = "tl." + name;
    // The combine_fn first: a scan of a tuple of tiles (a linear recurrence's) has another one.
    if (name == "associative_scan") {
        const CV &combine = need(a, 2, "combine_fn", e, fn);
        if (combine.kind != CV::Func || !is_add_combiner(combine.s))
            unsupported(e, fn + (combine.kind == CV::Func ? " with combine_fn " + combine.s : ""),
                        "tad differentiates a scan whose combine_fn returns the sum of its two arguments (a "
                        "cumsum); for another one, " +
                            std::string(kDifferentiateAs));
    }
    ValueId v = value_arg(need(a, 0, "input", e, fn), e);
    const CV *axis = a.get(1, "axis");
    const int ax = axis && axis->kind != CV::None ? reduce_axis(e, name, *axis, fn_.type(v)) : 0;
    if (fn_.type(v).rank() == 0) unsupported(e, fn, "axis out of range for " + fn_.type(v).str());
    const bool reverse = flag_of(a.get(name == "cumsum" ? 2 : 3, "reverse"));
    if (name != "associative_scan" && a.get(3, "dtype") && a.get(3, "dtype")->kind == CV::DTypeV) {
        v = b_.cast(v, dtype_arg(*a.get(3, "dtype"), e));
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
    if (flag_of(reorder)) unsupported(e, "tl.reshape with can_reorder=True", "the element order is unspecified");
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
