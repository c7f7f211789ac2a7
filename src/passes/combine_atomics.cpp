#include "passes/combine_atomics.h"

#include <algorithm>
#include <limits>

#include "passes/affine.h"
#include "passes/lane_ends.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

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
            // segment_atomics.h's adds: what it left are its lanes' own adds past kMaxSegments addresses.
            if (op.kind == OpKind::AtomicAdd && shared_lanes(f_, a, op.operands[0], &base, &offset) &&
                !LaneEnds(f_, b_, map_).repeating_unit_steps(op)) {
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

    // lo / hi: the least and greatest active offset (as reductions, or in closed form where
    // LaneEnds::ends() applies); `few`: hi is lo or lo + 1, so every active lane is at one of them (a
    // scalar test: no count of the lanes at neither).
    void combine(const ir::Op &op, ValueId base, ValueId offset) {
        const ir::Type t = out_.fn.type(offset);  // a copy: appending ops moves the values
        const ValueId value = map_.at(op.operands[1]);
        const ValueId mask = op.has_mask ? map_.at(op.operands[2]) : ir::kNoValue;
        ValueId lo = ir::kNoValue, hi = ir::kNoValue, ordered = ir::kNoValue;
        if (!LaneEnds(f_, b_, map_).ends(op, &lo, &hi, &ordered)) {
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
