#include "specimens.h"

#include "interp/interp.h"

namespace tad::testing {

using ir::Dim;
using ir::DType;
using ir::OpKind;
using ir::ValueId;

namespace {

const Dim kB{4, "BLOCK"};

// A kernel under construction, with shorthands for whole-tile loads and stores.
struct Kernel {
    ir::Function f;
    ir::Builder b{f};

    explicit Kernel(const std::string &name) {
        f.name = name;
        f.constexprs = {{"BLOCK", "4"}};
    }
    Kernel(const Kernel &) = delete;  // b refers to f

    ValueId ptr(const char *name, DType t = DType::F32) {
        return b.param(name, ir::ParamKind::Pointer, ir::Type{t, true, {}});
    }
    ValueId at(ValueId base, ValueId offs) { return b.add_ptr(b.broadcast(base, f.type(offs).shape), offs); }
    ValueId range(int64_t n, const std::string &expr) { return b.arange(0, n, expr); }
    ValueId load(ValueId base, Dim d = kB) {
        return b.load(at(base, range(d.value, d.expr)), ir::kNoValue, ir::kNoValue);
    }
    // A [2, 4] tile: elements 0..7 of `base`, row-major.
    ValueId load_2x4(ValueId base) { return b.reshape(load(base, Dim{8, "8"}), {{2, "2"}, kB}); }
    // Stores v whole, row-major, from element 0 of `base`.
    void store(ValueId base, ValueId v) {
        const ir::Type t = f.type(v);
        if (t.rank() != 1)
            v = b.reshape(t.scalar() ? b.broadcast(v, {Dim{1, "1"}}) : v, {Dim{t.numel(), std::to_string(t.numel())}});
        b.store(at(base, range(f.type(v).shape[0].value, f.type(v).shape[0].expr)), v, ir::kNoValue);
    }
};

ir::Function leaves() {
    Kernel k("leaves");
    ValueId Y = k.ptr("Y", DType::I32);
    ValueId n = k.b.param("n", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId pid = k.b.binary(OpKind::Mul, k.b.program_id(0), k.b.constant(4, DType::I32, "BLOCK"));
    ValueId s = k.b.binary(OpKind::Add, k.b.binary(OpKind::Add, pid, k.b.num_programs(0)), n);
    k.store(Y, k.b.binary(OpKind::Add, k.b.broadcast(s, {kB}), k.b.arange(0, 4, "BLOCK")));
    return std::move(k.f);
}

ir::Function shapes() {
    Kernel k("shapes");
    ValueId X = k.ptr("X"), Y = k.ptr("Y");
    ValueId x = k.load(X);
    ValueId wide = k.b.broadcast(k.b.expand_dims(x, 0), {{2, "2"}, kB});
    k.store(Y, k.b.reshape(k.b.trans(wide), {{8, "2 * BLOCK"}}));
    k.store(Y, k.b.split(k.b.join(x, x), 1));
    return std::move(k.f);
}

ir::Function reductions() {
    Kernel k("reductions");
    ValueId X = k.ptr("X"), Y = k.ptr("Y"), I = k.ptr("I", DType::I32);
    ValueId x = k.load_2x4(X);
    k.store(Y, k.b.reduce(OpKind::ReduceSum, x, 1, false));
    k.store(Y, k.b.reduce(OpKind::ReduceMax, x, 0, true));
    k.store(Y, k.b.reduce(OpKind::ReduceMin, x, -1, false));
    k.store(I, k.b.reduce(OpKind::Argmax, x, 1, false));
    k.store(I, k.b.reduce(OpKind::Argmin, x, 0, true));
    k.store(Y, k.b.cumsum(x, 1, true));
    return std::move(k.f);
}

ir::Function contraction() {
    Kernel k("contraction");
    ValueId A = k.ptr("A"), B = k.ptr("B"), C = k.ptr("C");
    ValueId a = k.load_2x4(A), b = k.b.trans(k.load_2x4(B));
    k.store(C, k.b.dot(a, b, DType::F32, "ieee"));
    return std::move(k.f);
}

ir::Function select_and_convert() {
    Kernel k("select_and_convert");
    ValueId X = k.ptr("X"), Y = k.ptr("Y"), Z = k.ptr("Z", DType::F64);
    ValueId seed = k.b.param("seed", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId x = k.load(X), offs = k.range(4, "BLOCK");
    ValueId half = k.b.broadcast(k.b.constant(0.5, DType::F32), {kB});
    ValueId picked = k.b.where(k.b.binary(OpKind::Gt, x, half), x, k.b.rand(seed, offs));
    picked = k.b.binary(OpKind::Add, picked, k.b.rand(seed, offs, OpKind::Randn));
    k.store(Z, k.b.cast(picked, DType::F64));
    k.store(Y, k.b.cast_like(k.load(Z), x));
    return std::move(k.f);
}

// The ops only a forward rewritten for reverse mode holds: each is operand 0's value.
ir::Function derivation() {
    Kernel k("derivation");
    ValueId X = k.ptr("X"), Y = k.ptr("Y");
    ValueId x = k.load(X);
    ValueId stopped = k.b.append(ir::Op(OpKind::StopGradient, {x}), k.f.type(x));
    ValueId twice = k.b.binary(OpKind::Add, x, x);
    ValueId via = k.b.append(ir::Op(OpKind::GradVia, {stopped, twice}), k.f.type(x));
    k.store(Y, k.b.append(ir::Op(OpKind::ReplayAs, {via, x}), k.f.type(x)));
    return std::move(k.f);
}

ir::Function memory() {
    Kernel k("memory");
    ValueId X = k.ptr("X"), Y = k.ptr("Y"), S = k.ptr("S");
    ValueId n = k.b.param("n", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId offs = k.range(4, "BLOCK");
    ValueId mask = k.b.binary(OpKind::Lt, offs, k.b.broadcast(n, {kB}));
    ValueId zero = k.b.broadcast(k.b.constant(0, DType::F32), {kB});
    ValueId x = k.b.load(k.at(X, offs), mask, zero);
    k.b.store(k.at(Y, offs), x, mask);
    k.b.barrier();
    k.b.atomic_add(k.at(S, offs), k.b.load(k.at(Y, offs), mask, ir::kNoValue), mask, "relaxed");
    return std::move(k.f);
}

ir::Function loop() {
    Kernel k("loop");
    ValueId X = k.ptr("X"), Y = k.ptr("Y");
    ValueId n = k.b.param("n", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId zero = k.b.broadcast(k.b.constant(0, DType::F32), {kB});
    ValueId i = k.b.for_begin(k.b.constant(0, DType::I32), n, k.b.constant(1, DType::I32), "tl.range");
    k.f.values[i].name = "i";
    ValueId acc = k.b.loop_arg(zero, 0);
    k.f.values[acc].name = "acc";
    ValueId offs = k.b.binary(OpKind::Add, k.b.broadcast(k.b.binary(OpKind::Mul, i, k.b.constant(4, DType::I32)), {kB}),
                              k.range(4, "BLOCK"));
    k.b.for_end({k.b.binary(OpKind::Add, acc, k.b.load(k.at(X, offs), ir::kNoValue, ir::kNoValue))});
    ValueId sum = k.b.loop_result(0, k.f.type(acc));
    k.f.values[sum].name = "acc";
    k.store(Y, sum);
    return std::move(k.f);
}

}  // namespace

ir::Function elementwise_specimen(OpKind k, DType elem) {
    const bool binary = ir::op_info(k).cls != ir::OpClass::Unary;
    Kernel s(std::string(ir::op_name(k)) + "_" + ir::dtype_name(elem));
    ValueId X0 = s.ptr("X0", elem), X1 = binary ? s.ptr("X1", elem) : ir::kNoValue;
    const DType out = ir::op_info(k).cls == ir::OpClass::Compare ? DType::I1 : elem;
    ValueId Y = s.ptr("Y", out);
    ValueId x = s.load(X0);
    s.store(Y, binary ? s.b.binary(k, x, s.load(X1)) : s.b.unary(k, x));
    return std::move(s.f);
}

const std::vector<Specimen> &structural_specimens() {
    static const std::vector<Specimen> specimens = {
        {"leaves", leaves()},
        {"shapes", shapes()},
        {"reductions", reductions()},
        {"contraction", contraction()},
        {"select_and_convert", select_and_convert()},
        {"derivation", derivation()},
        {"memory", memory()},
        {"loop", loop()},
    };
    return specimens;
}

std::vector<Specimen> all_specimens() {
    std::vector<Specimen> all = structural_specimens();
    for (const ir::OpInfo &op : ir::op_table()) {
        if (op.float_lane) all.push_back({std::string(op.name) + "_f32", elementwise_specimen(op.kind, DType::F32)});
        if (op.int_lane) all.push_back({std::string(op.name) + "_i32", elementwise_specimen(op.kind, DType::I32)});
    }
    return all;
}

void run_specimen(const ir::Function &f) {
    interp::Memory mem;
    std::vector<interp::ArgValue> args;
    for (const ir::Param &p : f.params) {
        const ir::Type &t = f.type(p.value);
        if (p.kind == ir::ParamKind::Pointer) {
            std::vector<double> data(64);
            for (size_t i = 0; i < data.size(); ++i)
                data[i] = ir::dtype_is_float(t.elem) ? 0.1 + 0.8 * static_cast<double>(i % 7) / 7 : 1.0 + (i % 4);
            args.push_back(interp::ArgValue::pointer(mem.add({p.name, t.elem, data})));
        } else {
            args.push_back(p.kind == ir::ParamKind::Int ? interp::ArgValue::integer(2) : interp::ArgValue::real(0.5));
        }
    }
    interp::run(f, args, {1, 1, 1}, mem);
}

}  // namespace tad::testing
