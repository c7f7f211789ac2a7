#include "passes/stash.h"

#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

std::vector<bool> from_loops(const ir::Function &f) {
    std::vector<bool> out(f.values.size(), false);
    for (const ir::Op &op : f.ops) {
        if (op.result == ir::kNoValue) continue;
        const bool loop = ir::op_info(op.kind).cls == ir::OpClass::Loop;
        out[op.result] = loop || std::any_of(op.operands.begin(), op.operands.end(), [&](ValueId v) { return out[v]; });
    }
    return out;
}

std::vector<bool> costly_to_recompute(const ir::Function &f) {
    std::vector<bool> out(f.values.size(), false);
    std::vector<std::set<ValueId>> loads(f.values.size());  // up to two tile loads each reads
    for (const ir::Op &op : f.ops) {
        if (op.result == ir::kNoValue) continue;
        if (op.kind == OpKind::Load) {
            if (f.type(op.result).rank() > 0) loads[op.result] = {op.result};
            continue;
        }
        const bool self = ir::op_info(op.kind).cls == ir::OpClass::Unary && f.type(op.result).is_float() &&
                          op.kind != OpKind::Neg && op.kind != OpKind::Abs && op.kind != OpKind::Floor &&
                          op.kind != OpKind::Ceil;
        bool costly = self;
        for (ValueId v : op.operands) {
            costly = costly || out[v];
            for (ValueId l : loads[v])
                if (loads[op.result].size() < 2) loads[op.result].insert(l);
        }
        out[op.result] = costly || loads[op.result].size() >= 2;
    }
    return out;
}

namespace {

bool named_constexpr(const ir::Function &f, const std::string &name) {
    return std::any_of(f.constexprs.begin(), f.constexprs.end(),
                       [&](const ir::Constexpr &c) { return c.name == name; });
}

// A dim's size as an integer constant of type `t`: the constexpr's name where one spells it.
ValueId dim_constant(ir::Builder &b, const ir::Dim &d, ir::DType t) {
    const bool literal = d.expr == std::to_string(d.value);
    return b.constant(static_cast<double>(d.value), t, literal ? "" : d.expr);
}

// The row-major index of each lane of a tile of shape `shape`, as i32 of that shape.
ValueId lane_index(ir::Builder &b, const std::vector<ir::Dim> &shape) {
    ValueId index = ir::kNoValue;
    for (size_t k = 0; k < shape.size(); ++k) {
        ValueId r = b.arange(0, shape[k].value, shape[k].expr);
        for (size_t j = 0; j < shape.size(); ++j)
            if (j != k) r = b.expand_dims(r, static_cast<int>(j));
        r = b.broadcast(r, shape);
        for (size_t j = k + 1; j < shape.size(); ++j)
            r = b.binary(OpKind::Mul, r, b.broadcast(dim_constant(b, shape[j], ir::DType::I32), shape));
        index = index == ir::kNoValue ? r : b.binary(OpKind::Add, index, r);
    }
    return index;
}

}  // namespace

std::string stashable(const ir::Function &f, ValueId v) {
    const ir::Type &t = f.type(v);
    if (t.is_ptr || (t.elem != ir::DType::F32 && t.elem != ir::DType::F64))
        return "the value it needs from another loop (" + op_at(f, f.values[v].def_op) + ") is " + t.str() +
               ", not float32 or float64";
    if (!top_level(f)[static_cast<size_t>(f.values[v].def_op)])
        return "the value it needs from another loop (" + op_at(f, f.values[v].def_op) + ") is inside a loop";
    for (const ir::Dim &d : t.shape)
        if (d.expr != std::to_string(d.value) && !named_constexpr(f, d.expr))
            return "the value it needs from another loop (" + op_at(f, f.values[v].def_op) + ") has a dim " + d.expr +
                   " that is neither a constexpr nor a literal";
    return "";
}

std::string converted_like(const ir::Function &f, ValueId v, const std::vector<int> &users) {
    std::string like;
    for (int i : users) {
        const ir::Op &op = f.ops[static_cast<size_t>(i)];
        if (std::find(op.operands.begin(), op.operands.end(), v) == op.operands.end()) continue;
        if (op.kind != OpKind::Cast || op.operands.size() != 2 || op.operands[0] != v) return "";
        const ir::Op &x = f.def(op.operands[1]);
        const std::string p = x.kind == OpKind::Load ? pointer_base(f, x.operands[0]) : "";
        if (p.empty() || (!like.empty() && p != like)) return "";
        like = p;
    }
    return like;
}

Stash stash_of(const ir::Function &f, ValueId v, const std::string &param) {
    Stash s{param, {}};
    for (const ir::Dim &d : f.type(v).shape) s.dims.push_back(d.expr);
    return s;
}

ValueId linear_program(ir::Builder &b, const std::array<ValueId, 3> &ids, const std::array<ValueId, 3> &counts,
                       const std::vector<int> &axes) {
    if (axes.empty()) return b.constant(0, ir::DType::I32);
    ValueId program = ids[axes[0]], stride = counts[axes[0]];
    for (size_t k = 1; k < axes.size(); ++k) {
        program = b.binary(OpKind::Add, program, b.binary(OpKind::Mul, ids[axes[k]], stride));
        if (k + 1 < axes.size()) stride = b.binary(OpKind::Mul, stride, counts[axes[k]]);
    }
    return program;
}

ValueId stash_address(ir::Builder &b, ValueId base, const ir::Type &t, const std::array<ValueId, 3> &ids,
                      const std::array<ValueId, 3> &counts, const std::vector<int> &axes) {
    // In int64: programs times elements passes 2^31 in large launches.
    ValueId first = b.cast(linear_program(b, ids, counts, axes), ir::DType::I64);
    for (const ir::Dim &d : t.shape) first = b.binary(OpKind::Mul, first, dim_constant(b, d, ir::DType::I64));
    const ValueId start = b.add_ptr(base, first);
    if (t.scalar()) return start;
    return b.add_ptr(b.broadcast(start, t.shape), lane_index(b, t.shape));
}

ir::Function store_stashes(const ir::Function &f, const std::vector<bool> &keep,
                           const std::map<ValueId, Stash> &stashes) {
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    std::vector<ir::Param> params;
    const std::vector<int> axes = program_axes(f);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        if (!keep[i]) continue;
        const ir::Op &op = f.ops[i];
        copy_op(b, f, op, map);
        auto s = op.result == ir::kNoValue ? stashes.end() : stashes.find(op.result);
        if (s == stashes.end()) continue;
        const ir::Type t = f.type(op.result);
        ir::Op p(OpKind::Param, {});
        p.ival = static_cast<int64_t>(f.params.size() + params.size());
        p.name = s->second.param;
        const ValueId base = b.append(p, ir::Type{t.elem, true, {}});
        out.values[base].name = p.name;
        params.push_back(ir::Param{p.name, ir::ParamKind::Pointer, base, ""});
        std::array<ValueId, 3> ids{}, counts{};
        for (int axis : axes) {
            ids[axis] = b.program_id(axis);
            counts[axis] = b.num_programs(axis);
        }
        b.store(stash_address(b, base, t, ids, counts, axes), map[op.result], ir::kNoValue);
    }
    return with_params(std::move(out), f, map, params);
}

}  // namespace tad::passes
