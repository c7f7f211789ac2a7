#include "ad/tape.h"

#include <algorithm>
#include <cctype>

#include "ad/finish.h"

namespace tad::ad {

using ir::DType;
using ir::OpKind;
using ir::ValueId;

namespace {

bool is_const(const ir::Function &f, ValueId v, double c) {
    const ir::Op &op = f.def(v);
    return op.kind == OpKind::Const && op.name.empty() && op.fval == c;
}

bool all_digits(const std::string &s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

ValueId int_op(ir::Builder &b, OpKind k, ValueId x, ValueId y) {
    const ir::Function &f = b.func();
    if ((k == OpKind::Add || k == OpKind::Sub) && is_const(f, y, 0)) return x;
    if (k == OpKind::Add && is_const(f, x, 0)) return y;
    if ((k == OpKind::Mul || k == OpKind::Div) && is_const(f, y, 1)) return x;
    if (k == OpKind::Mul && is_const(f, x, 1)) return y;
    const ir::Op &d = f.def(x);
    if (k == OpKind::Sub && d.kind == OpKind::Add && d.operands[1] == y) return d.operands[0];
    if (k == OpKind::Sub && d.kind == OpKind::Add && is_const(f, y, 1) && is_const(f, d.operands[1], 1))
        return d.operands[0];
    return b.binary(k, x, y);
}

ValueId trip_count(ir::Builder &b, ValueId lo, ValueId hi, ValueId step) {
    DType t = b.func().type(lo).elem;
    ValueId one = b.constant(1, t), zero = b.constant(0, t);
    ValueId n = int_op(b, OpKind::Div,
                       int_op(b, OpKind::Sub, int_op(b, OpKind::Add, int_op(b, OpKind::Sub, hi, lo), step), one), step);
    // An empty range (hi < lo) would give a negative count: C division truncates toward zero.
    return b.binary(OpKind::Maximum, n, zero);
}

ValueId numel_of(ir::Builder &b, const ir::Type &t) {
    ValueId n = b.constant(1, DType::I32);
    for (const ir::Dim &d : t.shape) {
        std::string name = d.expr.empty() || all_digits(d.expr) ? "" : d.expr;
        n = int_op(b, OpKind::Mul, n, b.constant(static_cast<double>(d.value), DType::I32, name));
    }
    return n;
}

int max_program_axis(const ir::Function &f) {
    int axis = 0;
    for (const ir::Op &op : f.ops)
        if (op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms) axis = std::max(axis, op.axis);
    return axis;
}

ValueId program_index(ir::Builder &b, int max_axis) {
    ValueId p = b.cast(b.program_id(max_axis), DType::I64);
    for (int a = max_axis - 1; a >= 0; --a)
        p = b.binary(OpKind::Add, b.cast(b.program_id(a), DType::I64),
                     b.binary(OpKind::Mul, b.cast(b.num_programs(a), DType::I64), p));
    return p;
}

ValueId tape_pointers(ir::Builder &b, ValueId base, ValueId k, ValueId slot, ValueId offset, const ir::Type &t) {
    ValueId start = int_op(b, OpKind::Add, int_op(b, OpKind::Mul, k, slot), offset);
    if (t.scalar()) return b.add_ptr(base, start);
    // Row-major flat index of each lane: Σ_d arange(dim_d) · (product of the dims after d).
    std::vector<ir::Dim> shape = t.shape;
    ValueId index = ir::kNoValue;
    ir::Type stride_t{DType::I32, false, {}};
    for (size_t d = 0; d < shape.size(); ++d) {
        ValueId r = b.arange(0, shape[d].value, shape[d].expr);
        for (size_t e = 0; e < shape.size(); ++e)
            if (e != d) r = b.expand_dims(r, static_cast<int>(e));  // ascending e lands each 1 in place
        ValueId stride = numel_of(b, stride_t.with_shape(std::vector<ir::Dim>(shape.begin() + d + 1, shape.end())));
        r = b.broadcast(r, shape);
        if (!is_const(b.func(), stride, 1)) r = b.binary(OpKind::Mul, r, b.broadcast(stride, shape));
        index = index == ir::kNoValue ? r : b.binary(OpKind::Add, index, r);
    }
    ValueId offs = b.binary(OpKind::Add, b.broadcast(start, shape), index);
    return b.add_ptr(b.broadcast(base, shape), offs);
}

TapeSizing tape_sizing(const ir::Function &fwd, const std::vector<TapedLoop> &loops, const std::string &name,
                       const std::string &need_name, const Cleanup &cleanup) {
    ir::Function f;
    f.name = name;
    f.constexprs = fwd.constexprs;
    f.specialized = fwd.specialized;
    f.source_path = fwd.source_path;
    ir::Builder b(f);
    std::vector<ValueId> map(fwd.values.size(), ir::kNoValue);
    for (const ir::Param &p : fwd.params) map[p.value] = b.param_like(p, fwd.type(p.value));
    ValueId need_param = b.param(need_name, ir::ParamKind::Pointer, ir::Type{DType::I64, true, {}});
    ValueId need = b.constant(0, DType::I64);
    for (const ir::Op &op : fwd.ops) {
        if (op.kind == OpKind::Param || op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd ||
            op.kind == OpKind::Barrier)
            continue;
        b.loc = op.loc;
        int index = static_cast<int>(&op - fwd.ops.data());
        for (const TapedLoop &l : loops) {
            if (l.begin != index) continue;
            ValueId n = trip_count(b, map[op.operands[0]], map[op.operands[1]], map[op.operands[2]]);
            ValueId slot = b.constant(0, DType::I32);
            for (ValueId s : l.state) slot = int_op(b, OpKind::Add, slot, numel_of(b, fwd.type(s)));
            need =
                int_op(b, OpKind::Add, need, b.cast(int_op(b, OpKind::Mul, b.cast(n, DType::I32), slot), DType::I64));
        }
        ir::Op copy = op;
        for (ValueId &v : copy.operands) v = map[v];
        ValueId r =
            b.append(copy, op.result == ir::kNoValue ? ir::Type{} : fwd.type(op.result), op.result != ir::kNoValue);
        if (op.result != ir::kNoValue) {
            map[op.result] = r;
            f.values[r].name = fwd.values[op.result].name;
        }
    }
    f.values[need].name = "need";
    b.store(b.add_ptr(need_param, program_index(b, max_program_axis(fwd))), need, ir::kNoValue);
    Finished finished = finish_derived(f, {{need_name, {ParamOrigin::TapeNeed, ""}}},
                                       "tape sizing kernel of '" + fwd.name + "'", cleanup);
    return TapeSizing{std::move(finished.fn), std::move(finished.origins)};
}

std::optional<passes::HostExpr> host_need(const ir::Function &sizing) {
    for (const ir::Op &op : sizing.ops) {
        if (op.kind != OpKind::Store) continue;
        std::string why;
        return passes::host_expr(sizing, op.operands[1], &why);
    }
    return std::nullopt;
}

}  // namespace tad::ad
