#include <stdexcept>

#include "ir/ir.h"

namespace tad::ir {

namespace {
bool is_compare(OpKind k) {
    return k == OpKind::Lt || k == OpKind::Le || k == OpKind::Gt || k == OpKind::Ge || k == OpKind::Eq ||
           k == OpKind::Ne;
}
}  // namespace

ValueId Builder::append(Op op, const Type &t, bool has_result) {
    op.loc = loc;
    if (has_result) {
        op.result = static_cast<ValueId>(f_.values.size());
        f_.values.push_back(ValueInfo{t, static_cast<int>(f_.ops.size()), ""});
    }
    f_.ops.push_back(std::move(op));
    return has_result ? f_.ops.back().result : kNoValue;
}

ValueId Builder::param(const std::string &name, ParamKind kind, Type t) {
    Op op{OpKind::Param, {}};
    op.ival = static_cast<int64_t>(f_.params.size());
    op.name = name;
    ValueId v = append(op, t);
    f_.values[v].name = name;
    f_.params.push_back(Param{name, kind, v});
    return v;
}

ValueId Builder::param_like(const Param &p, Type t) {
    const ValueId v = param(p.name, p.kind, std::move(t));
    f_.params.back().final_of = p.final_of;
    return v;
}

ValueId Builder::constant(double v, DType t, const std::string &constexpr_name) {
    Op op{OpKind::Const, {}};
    op.fval = v;
    op.name = constexpr_name;
    return append(op, Type{t, false, {}});
}

ValueId Builder::program_id(int axis) {
    Op op{OpKind::ProgramId, {}};
    op.axis = axis;
    return append(op, Type{DType::I32, false, {}});
}

ValueId Builder::num_programs(int axis) {
    Op op{OpKind::NumPrograms, {}};
    op.axis = axis;
    return append(op, Type{DType::I32, false, {}});
}

ValueId Builder::arange(int64_t start, int64_t end, const std::string &len_expr) {
    Op op{OpKind::Arange, {}};
    op.ival = start;
    op.ival2 = end;
    return append(op, Type{DType::I32, false, {Dim{end - start, len_expr}}});
}

ValueId Builder::broadcast(ValueId v, std::vector<Dim> shape) {
    const Type &t = f_.type(v);
    if (t.shape.size() == shape.size()) {
        bool same = true;
        for (size_t i = 0; i < shape.size(); ++i) same = same && t.shape[i].value == shape[i].value;
        if (same) return v;
    }
    return append(Op{OpKind::Broadcast, {v}}, t.with_shape(shape));
}

ValueId Builder::expand_dims(ValueId v, int axis) {
    Type t = f_.type(v);
    t.shape.insert(t.shape.begin() + axis, Dim{1, "1"});
    Op op{OpKind::ExpandDims, {v}};
    op.axis = axis;
    return append(op, t);
}

ValueId Builder::trans(ValueId v) {
    Type t = f_.type(v);
    std::swap(t.shape[0], t.shape[1]);
    return append(Op{OpKind::Trans, {v}}, t);
}

ValueId Builder::reshape(ValueId v, std::vector<Dim> shape) {
    return append(Op{OpKind::Reshape, {v}}, f_.type(v).with_shape(std::move(shape)));
}

ValueId Builder::join(ValueId a, ValueId b) {
    Type t = f_.type(a);
    t.shape.push_back(Dim{2, "2"});
    return append(Op{OpKind::Join, {a, b}}, t);
}

ValueId Builder::split(ValueId v, int index) {
    Type t = f_.type(v);
    t.shape.pop_back();
    Op op{OpKind::Split, {v}};
    op.ival = index;
    return append(op, t);
}

ValueId Builder::dot(ValueId a, ValueId b, DType out, const std::string &precision) {
    Op op{OpKind::Dot, {a, b}};
    op.name = precision;
    Type t{out, false, {f_.type(a).shape[0], f_.type(b).shape[1]}};
    return append(op, t);
}

ValueId Builder::binary(OpKind k, ValueId a, ValueId b) {
    Type t = f_.type(a);
    if (is_compare(k)) t = t.with_elem(DType::I1);
    return append(Op{k, {a, b}}, t);
}

ValueId Builder::unary(OpKind k, ValueId a) { return append(Op{k, {a}}, f_.type(a)); }

ValueId Builder::where(ValueId c, ValueId a, ValueId b) { return append(Op{OpKind::Where, {c, a, b}}, f_.type(a)); }

ValueId Builder::rand(ValueId seed, ValueId offsets, OpKind kind) {
    return append(Op{kind, {seed, offsets}}, f_.type(offsets).with_elem(DType::F32));
}

ValueId Builder::cast(ValueId v, DType to, bool keep) {
    const Type &t = f_.type(v);
    if (!keep && !t.is_ptr && t.elem == to) return v;
    return append(Op{OpKind::Cast, {v}}, t.with_elem(to));
}

ValueId Builder::cast_like(ValueId v, ValueId like) {
    return append(Op{OpKind::Cast, {v, like}}, f_.type(v).with_elem(f_.type(like).elem));
}

ValueId Builder::add_ptr(ValueId p, ValueId off) { return append(Op{OpKind::AddPtr, {p, off}}, f_.type(p)); }

ValueId Builder::reduce(OpKind k, ValueId v, int axis, bool keep_dims) {
    Type t = f_.type(v);
    if (axis < 0) {
        t.shape.clear();
    } else if (keep_dims) {
        t.shape[axis] = Dim{1, "1"};
    } else {
        t.shape.erase(t.shape.begin() + axis);
    }
    if (k == OpKind::Argmax || k == OpKind::Argmin) t = t.with_elem(DType::I32);
    Op op{k, {v}};
    op.axis = axis;
    op.keep_dims = keep_dims;
    return append(op, t);
}

ValueId Builder::cumsum(ValueId v, int axis, bool reverse) {
    Op op{OpKind::CumSum, {v}};
    op.axis = axis;
    op.ival = reverse;
    return append(op, f_.type(v));
}

ValueId Builder::load(ValueId p, ValueId mask, ValueId other) {
    Op op{OpKind::Load, {p}};
    if (mask != kNoValue) {
        op.has_mask = true;
        op.operands.push_back(mask);
    }
    if (other != kNoValue) {
        if (mask == kNoValue) throw std::logic_error("load with `other` needs a mask");
        op.has_other = true;
        op.operands.push_back(other);
    }
    return append(op, f_.type(p).with_elem(f_.type(p).elem));
}

void Builder::store(ValueId p, ValueId v, ValueId mask) {
    Op op{OpKind::Store, {p, v}};
    if (mask != kNoValue) {
        op.has_mask = true;
        op.operands.push_back(mask);
    }
    append(op, Type{}, false);
}

void Builder::barrier() { append(Op{OpKind::Barrier}, Type{}, false); }

void Builder::atomic_add(ValueId p, ValueId v, ValueId mask, const std::string &sem) {
    Op op{OpKind::AtomicAdd, {p, v}};
    if (mask != kNoValue) {
        op.has_mask = true;
        op.operands.push_back(mask);
    }
    op.name = sem;
    append(op, Type{}, false);
}

ValueId Builder::for_begin(ValueId lo, ValueId hi, ValueId step, const std::string &iterator) {
    Op op{OpKind::ForBegin, {lo, hi, step}};
    op.name = iterator;
    return append(op, f_.type(lo));
}

ValueId Builder::loop_arg(ValueId init, int index) {
    Op op{OpKind::LoopArg, {init}};
    op.ival = index;
    return append(op, f_.type(init));
}

void Builder::for_end(const std::vector<ValueId> &yields) { append(Op{OpKind::ForEnd, yields}, Type{}, false); }

ValueId Builder::loop_result(int index, const Type &t) {
    Op op{OpKind::LoopResult, {}};
    op.ival = index;
    return append(op, t);
}

}  // namespace tad::ir
