#include "passes/combine_atomics.h"

#include <algorithm>
#include <limits>

#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The scalar pointer and the offset tile of `p = broadcast(scalar) + offset`, when the offset is
// an integer tile whose lanes may repeat (not affine, no loaded value); false otherwise.
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

class Combiner {
public:
    explicit Combiner(const ir::Function &f) : f_(f), b_(out_.fn), map_(f.values.size(), ir::kNoValue) {
        out_.fn = empty_like(f);
    }

    CombinedAtomics run() {
        Affine a(f_);
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b_.loc = op.loc;
            ValueId base = ir::kNoValue, offset = ir::kNoValue;
            if (op.kind == OpKind::AtomicAdd && shared_lanes(f_, a, op.operands[0], &base, &offset)) {
                combine(op, map_[base], map_[offset]);
                const std::string p = pointer_base(f_, op.operands[0]);
                if (std::find(out_.params.begin(), out_.params.end(), p) == out_.params.end()) out_.params.push_back(p);
            } else {
                copy(op);
            }
        }
        return std::move(out_);
    }

private:
    const ir::Function &f_;
    CombinedAtomics out_;
    ir::Builder b_;
    std::vector<ValueId> map_;

    void copy(const ir::Op &op) {
        if (op.kind == OpKind::Param) {
            map_[op.result] = b_.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            return;
        }
        copy_op(b_, f_, op, map_);
    }

    ValueId splat(double x, ir::DType t, const std::vector<ir::Dim> &shape) {
        return b_.broadcast(b_.constant(x, t), shape);
    }

    // The whole tile reduced to a scalar.
    ValueId all(OpKind k, ValueId v) { return b_.reduce(k, v, -1, false); }

    // Lanes `x` of the active ones (all lanes when the add has no mask).
    ValueId active(ValueId mask, ValueId x) { return mask == ir::kNoValue ? x : b_.binary(OpKind::And, mask, x); }
    // The tile with inactive lanes set to `fill`.
    ValueId or_fill(ValueId mask, ValueId x, ValueId fill) {
        return mask == ir::kNoValue ? x : b_.where(mask, x, fill);
    }

    // Whether tile `v` is the same in every lane: a broadcast scalar.
    bool uniform(ValueId v) const {
        const ir::Op &d = f_.def(v);
        return d.kind == OpKind::Broadcast && f_.type(d.operands[0]).scalar();
    }

    // An integer cast that keeps every value (a narrowing one wraps, one to i1 tests for zero: not
    // monotone).
    bool widening(ValueId from, ValueId to) const {
        const auto plain_int = [](const ir::Type &t) {
            return !t.is_ptr && !ir::dtype_is_float(t.elem) && t.elem != ir::DType::I1;
        };
        const ir::Type &a = f_.type(from), &b = f_.type(to);
        return plain_int(a) && plain_int(b) && ir::dtype_rank(b.elem) >= ir::dtype_rank(a.elem);
    }

    // Tile `v` of f_ at lane `lane` (a scalar of out_), where v is a monotone function of the lane
    // index: tl.arange(0, n) through +, - and * with uniform operands, division by a uniform value,
    // and widening integer casts (each step is monotone, so their composition is); kNoValue otherwise.
    ValueId at_lane(ValueId v, ValueId lane) {
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
    ValueId tile_size(const ir::Dim &n) {
        if (n.expr == std::to_string(n.value)) return b_.constant(static_cast<double>(n.value), ir::DType::I32);
        for (const ir::Constexpr &c : f_.constexprs)
            if (c.name == n.expr) return b_.constant(static_cast<double>(n.value), ir::DType::I32, c.name);
        return ir::kNoValue;
    }

    // The last active lane of an add whose mask is `s + tl.arange(0, n) < bound` (s, bound uniform;
    // the active lanes are 0..last) or that has none (last = n - 1); kNoValue for other masks.
    ValueId last_lane(const ir::Op &op, const ir::Dim &n) {
        const ValueId size = tile_size(n);
        if (size == ir::kNoValue) return ir::kNoValue;
        const ValueId top = b_.binary(OpKind::Sub, size, b_.constant(1, ir::DType::I32));
        if (!op.has_mask) return top;
        const ir::Op &lt = f_.def(op.operands[2]);
        if (lt.kind != OpKind::Lt || !uniform(lt.operands[1])) return ir::kNoValue;
        const ir::Op &x = f_.def(lt.operands[0]);
        if (x.kind != OpKind::Add || f_.type(lt.operands[0]).elem != ir::DType::I32) return ir::kNoValue;
        const bool start_first = uniform(x.operands[0]);
        const ValueId start = x.operands[start_first ? 0 : 1];
        const ir::Op &lanes = f_.def(x.operands[start_first ? 1 : 0]);
        if (!uniform(start) || lanes.kind != OpKind::Arange || lanes.ival != 0) return ir::kNoValue;
        const ValueId bound = map_.at(f_.def(lt.operands[1]).operands[0]);
        const ValueId room = b_.binary(OpKind::Sub, bound, map_.at(f_.def(start).operands[0]));
        return b_.binary(OpKind::Minimum, b_.binary(OpKind::Sub, room, b_.constant(1, ir::DType::I32)), top);
    }

    // lo / hi and whether some lane is active, in closed form where the offsets are monotone in the
    // lane and the active lanes 0..last: the offsets at lanes 0 and last, in some order. Two scalar
    // evaluations instead of two reductions over the tile (group norm's channel `offs // HW`).
    bool monotone_ends(const ir::Op &op, ValueId *lo, ValueId *hi, ValueId *any) {
        const ir::Type &t = f_.type(op.operands[0]);
        if (t.shape.size() != 1) return false;
        const ValueId offset = f_.def(op.operands[0]).operands[1];
        const ValueId last = last_lane(op, t.shape[0]);
        if (last == ir::kNoValue) return false;
        const ValueId first = at_lane(offset, b_.constant(0, ir::DType::I32));
        const ValueId end = first == ir::kNoValue ? first : at_lane(offset, last);
        if (end == ir::kNoValue) return false;
        *lo = b_.binary(OpKind::Minimum, first, end);
        *hi = b_.binary(OpKind::Maximum, first, end);
        *any = b_.binary(OpKind::Ge, last, b_.constant(0, ir::DType::I32));
        return true;
    }

    // lo / hi: the least and greatest active offset (as reductions, or in closed form where
    // monotone_ends() applies); `few`: hi is lo or lo + 1, so every active lane is at one of them (a
    // scalar test: no count of the lanes at neither).
    void combine(const ir::Op &op, ValueId base, ValueId offset) {
        const ir::Type t = out_.fn.type(offset);  // a copy: appending ops moves the values
        const ValueId value = map_.at(op.operands[1]);
        const ValueId mask = op.has_mask ? map_.at(op.operands[2]) : ir::kNoValue;
        ValueId lo = ir::kNoValue, hi = ir::kNoValue, ordered = ir::kNoValue;
        if (!monotone_ends(op, &lo, &hi, &ordered)) {
            // Beyond every offset, and exact as a double (the IR's constants are).
            const double top = t.elem == ir::DType::I64 ? 4611686018427387904.0 : std::numeric_limits<int32_t>::max();
            lo = all(OpKind::ReduceMin, or_fill(mask, offset, splat(top, t.elem, t.shape)));
            const double bottom = t.elem == ir::DType::I64 ? -top : std::numeric_limits<int32_t>::min();
            hi = all(OpKind::ReduceMax, or_fill(mask, offset, splat(bottom, t.elem, t.shape)));
            // No active lane: lo = top > hi. lo + 1 may wrap there, but then lo <= hi fails first.
            ordered = b_.binary(OpKind::Le, lo, hi);
        }
        const ValueId next = b_.binary(OpKind::Add, lo, b_.constant(1, t.elem));
        const ValueId few = b_.binary(OpKind::And, ordered, b_.binary(OpKind::Le, hi, next));
        const ValueId at_lo = active(mask, b_.binary(OpKind::Eq, offset, b_.broadcast(lo, t.shape)));
        const ValueId at_hi = active(mask, b_.binary(OpKind::Gt, offset, b_.broadcast(lo, t.shape)));
        const ValueId zero = splat(0, out_.fn.type(value).elem, t.shape);
        const ValueId sum_lo = all(OpKind::ReduceSum, b_.where(at_lo, value, zero));
        const ValueId sum_hi = all(OpKind::ReduceSum, b_.where(at_hi, value, zero));
        b_.atomic_add(b_.add_ptr(base, lo), sum_lo, few, op.name);
        b_.atomic_add(b_.add_ptr(base, hi), sum_hi, b_.binary(OpKind::And, few, b_.binary(OpKind::Lt, lo, hi)),
                      op.name);
        const ValueId many = b_.broadcast(b_.unary(OpKind::Not, few), t.shape);
        b_.atomic_add(map_.at(op.operands[0]), value, active(mask, many), op.name);
    }
};

}  // namespace

CombinedAtomics combine_atomics(const ir::Function &f) { return Combiner(f).run(); }

}  // namespace tad::passes
