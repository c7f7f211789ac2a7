#include "passes/lane_ends.h"

#include <string>

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

bool shared_lanes(const ir::Function &f, Affine &a, ValueId p, ValueId *base, ValueId *offset) {
    const ir::Op &add = f.def(p);
    if (add.kind != OpKind::AddPtr || f.type(p).scalar()) return false;
    const ir::Op &b = f.def(add.operands[0]);
    if (b.kind != OpKind::Broadcast || !f.type(b.operands[0]).scalar()) return false;
    const Form &o = a.of(add.operands[1]);
    if (o.affine || o.data >= 0) return false;
    *base = b.operands[0];
    *offset = add.operands[1];
    return true;
}

// Whether tile `v` is the same in every lane: a broadcast scalar.
bool LaneEnds::uniform(ValueId v) const {
    const ir::Op &d = f_.def(v);
    return d.kind == OpKind::Broadcast && f_.type(d.operands[0]).scalar();
}

// An integer cast that keeps every value (a narrowing one wraps, one to i1 tests for zero: not
// monotone).
bool LaneEnds::widening(ValueId from, ValueId to) const {
    const auto plain_int = [](const ir::Type &t) {
        return !t.is_ptr && !ir::dtype_is_float(t.elem) && t.elem != ir::DType::I1;
    };
    const ir::Type &a = f_.type(from), &b = f_.type(to);
    return plain_int(a) && plain_int(b) && ir::dtype_rank(b.elem) >= ir::dtype_rank(a.elem);
}

// Whether `v` is a monotone function of the lane index built as lane_ends.h says; *unit is cleared
// where a multiplication may stretch its steps, *divided set where a division may repeat values.
bool LaneEnds::monotone(ValueId v, bool *unit, bool *divided) const {
    const ir::Op &d = f_.def(v);
    if (uniform(v)) return true;
    if (d.kind == OpKind::Arange) return d.ival == 0;
    if (d.kind == OpKind::Cast) return widening(d.operands[0], v) && monotone(d.operands[0], unit, divided);
    const bool linear = d.kind == OpKind::Add || d.kind == OpKind::Sub || d.kind == OpKind::Mul;
    if (!linear && d.kind != OpKind::Div) return false;
    const bool left = !uniform(d.operands[0]), right = !uniform(d.operands[1]);
    if (left == right || (d.kind == OpKind::Div && right)) return false;
    if (d.kind == OpKind::Mul) *unit = false;
    if (d.kind == OpKind::Div) *divided = true;
    return monotone(d.operands[left ? 0 : 1], unit, divided);
}

// Tile `v` of f_ at lane `lane` (a scalar of the rewrite), where monotone(v); kNoValue otherwise.
ValueId LaneEnds::at_lane(ValueId v, ValueId lane) {
    const ir::Op &d = f_.def(v);
    if (uniform(v)) return map_.at(d.operands[0]);
    if (d.kind == OpKind::Arange) return d.ival == 0 ? lane : ir::kNoValue;
    if (d.kind == OpKind::Cast && widening(d.operands[0], v)) {
        const ValueId x = at_lane(d.operands[0], lane);
        return x == ir::kNoValue ? x : b_.cast(x, f_.type(v).elem);
    }
    const bool linear = d.kind == OpKind::Add || d.kind == OpKind::Sub || d.kind == OpKind::Mul;
    if (!linear && d.kind != OpKind::Div) return ir::kNoValue;
    const bool left = !uniform(d.operands[0]), right = !uniform(d.operands[1]);
    if (left == right || (d.kind == OpKind::Div && right)) return ir::kNoValue;
    const ValueId a = at_lane(d.operands[0], lane), b = at_lane(d.operands[1], lane);
    return a == ir::kNoValue || b == ir::kNoValue ? ir::kNoValue : b_.binary(d.kind, a, b);
}

// The tile's size as the kernel spells it: a literal, or the constexpr it is named by (its value
// in other specializations is not the traced one); kNoValue for other spellings.
ValueId LaneEnds::tile_size(const ir::Dim &n) {
    if (n.expr == std::to_string(n.value)) return b_.constant(static_cast<double>(n.value), ir::DType::I32);
    for (const ir::Constexpr &c : f_.constexprs)
        if (c.name == n.expr) return b_.constant(static_cast<double>(n.value), ir::DType::I32, c.name);
    return ir::kNoValue;
}

// Whether the add's tile size is spelled as tile_size() takes it and its mask is absent or
// `s + tl.arange(0, n) < bound` (s, bound uniform, i32): the active lanes are 0..last.
bool LaneEnds::prefix_mask(const ir::Op &add) const {
    const ir::Type &t = f_.type(add.operands[0]);
    if (t.shape.size() != 1) return false;
    const ir::Dim &n = t.shape[0];
    bool spelled = n.expr == std::to_string(n.value);
    for (const ir::Constexpr &c : f_.constexprs) spelled = spelled || c.name == n.expr;
    if (!spelled) return false;
    if (!add.has_mask) return true;
    const ir::Op &lt = f_.def(add.operands[2]);
    if (lt.kind != OpKind::Lt || !uniform(lt.operands[1])) return false;
    const ir::Op &x = f_.def(lt.operands[0]);
    if (x.kind != OpKind::Add || f_.type(lt.operands[0]).elem != ir::DType::I32) return false;
    const bool start_first = uniform(x.operands[0]);
    const ir::Op &lanes = f_.def(x.operands[start_first ? 1 : 0]);
    return uniform(x.operands[start_first ? 0 : 1]) && lanes.kind == OpKind::Arange && lanes.ival == 0;
}

// The last active lane of an add for which prefix_mask() holds: min(bound - s - 1, n - 1), or
// n - 1 without a mask.
ValueId LaneEnds::last_lane(const ir::Op &add, const ir::Dim &n) {
    const ValueId top = b_.binary(OpKind::Sub, tile_size(n), b_.constant(1, ir::DType::I32));
    if (!add.has_mask) return top;
    const ir::Op &lt = f_.def(add.operands[2]);
    const ir::Op &x = f_.def(lt.operands[0]);
    const ValueId start = x.operands[uniform(x.operands[0]) ? 0 : 1];
    const ValueId bound = map_.at(f_.def(lt.operands[1]).operands[0]);
    const ValueId room = b_.binary(OpKind::Sub, bound, map_.at(f_.def(start).operands[0]));
    return b_.binary(OpKind::Minimum, b_.binary(OpKind::Sub, room, b_.constant(1, ir::DType::I32)), top);
}

bool LaneEnds::repeating_unit_steps(const ir::Op &add) const {
    bool unit = true, divided = false;
    const ValueId offset = f_.def(add.operands[0]).operands[1];
    return prefix_mask(add) && monotone(offset, &unit, &divided) && unit && divided;
}

ValueId LaneEnds::innermost_divisor(const ir::Op &add) const {
    ValueId v = f_.def(add.operands[0]).operands[1], divisor = ir::kNoValue;
    for (;;) {
        const ir::Op &d = f_.def(v);
        if (d.kind == OpKind::Cast) {
            v = d.operands[0];
        } else if (d.kind == OpKind::Add || d.kind == OpKind::Sub || d.kind == OpKind::Mul || d.kind == OpKind::Div) {
            if (d.kind == OpKind::Div) divisor = f_.def(d.operands[1]).operands[0];
            v = d.operands[uniform(d.operands[0]) ? 1 : 0];
        } else {
            return divisor;
        }
    }
}

bool LaneEnds::ends(const ir::Op &add, ValueId *lo, ValueId *hi, ValueId *any) {
    bool unit = true, divided = false;
    const ValueId offset = f_.def(add.operands[0]).operands[1];
    if (!prefix_mask(add) || !monotone(offset, &unit, &divided)) return false;
    const ValueId last = last_lane(add, f_.type(add.operands[0]).shape[0]);
    const ValueId first = at_lane(offset, b_.constant(0, ir::DType::I32));
    const ValueId end = at_lane(offset, last);
    *lo = b_.binary(OpKind::Minimum, first, end);
    *hi = b_.binary(OpKind::Maximum, first, end);
    *any = b_.binary(OpKind::Ge, last, b_.constant(0, ir::DType::I32));
    return true;
}

}  // namespace tad::passes
