// Hand-built kernels for the interpreter tests: a Function plus Builder shorthands for the patterns
// every Triton kernel repeats (block offsets, pointer + offsets, scalar splats).
#pragma once

#include <vector>

#include "interp/interp.h"

namespace tad::interp::test {

using namespace tad::ir;

struct Kernel {
    Function f;
    Builder b{f};

    explicit Kernel(const char *name) {
        f.name = name;
        f.source_path = "k.py";
        b.loc = SrcLoc{1, 1};
    }
    Kernel(const Kernel &) = delete;  // b refers to f

    ValueId ptr(const char *name, DType t) { return b.param(name, ParamKind::Pointer, Type{t, true, {}}); }
    ValueId int_param(const char *name) { return b.param(name, ParamKind::Int, Type{DType::I32, false, {}}); }
    ValueId c(double v, DType t) { return b.constant(v, t); }
    ValueId op(OpKind k, ValueId x, ValueId y) { return b.binary(k, x, y); }
    // A scalar broadcast to the shape of `like`.
    ValueId splat(ValueId scalar, ValueId like) { return b.broadcast(scalar, f.type(like).shape); }
    ValueId at(ValueId base, ValueId offs) { return b.add_ptr(splat(base, offs), offs); }
    ValueId range(int64_t n) { return b.arange(0, n, std::to_string(n)); }
    // program_id(0) * n + arange(0, n)
    ValueId block(int64_t n) {
        ValueId r = range(n);
        return op(OpKind::Add, splat(op(OpKind::Mul, b.program_id(0), c(double(n), DType::I32)), r), r);
    }
};

inline int add_buffer(Memory &mem, const char *name, DType t, std::vector<double> data) {
    return mem.add(Buffer{name, t, std::move(data)});
}

}  // namespace tad::interp::test
