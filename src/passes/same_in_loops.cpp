#include "passes/same_in_loops.h"

namespace tad::passes {

namespace {

bool inside(const ir::Loop &l, int op) { return l.begin < op && op <= l.last(); }

}  // namespace

bool SameInLoops::operator()(ir::ValueId x, ir::ValueId y, int lx, int ly) {
    using ir::OpKind;
    if (x == y) return true;
    if (x == ir::kNoValue || y == ir::kNoValue) return false;
    const auto key = std::make_tuple(x, y, lx, ly);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    const int ox = f_.values[x].def_op, oy = f_.values[y].def_op;
    const ir::Loop &a = loops_[static_cast<size_t>(lx)], &b = loops_[static_cast<size_t>(ly)];
    bool eq = false;
    if (ox == a.begin && oy == b.begin) {
        eq = true;
    } else if (inside(a, ox) && inside(b, oy)) {
        const ir::Op &p = f_.ops[ox], &q = f_.ops[oy];
        eq = p.kind == q.kind && p.kind != OpKind::LoopArg && p.kind != OpKind::LoopResult &&
             p.kind != OpKind::ForBegin && (p.kind != OpKind::Load || read_only_(p)) &&
             p.operands.size() == q.operands.size() && p.axis == q.axis && p.keep_dims == q.keep_dims &&
             p.has_mask == q.has_mask && p.has_other == q.has_other && p.fval == q.fval && p.ival == q.ival &&
             p.ival2 == q.ival2 && p.name == q.name && f_.type(x) == f_.type(y);
        for (size_t i = 0; eq && i < p.operands.size(); ++i) eq = (*this)(p.operands[i], q.operands[i], lx, ly);
    }
    return memo_[key] = eq;
}

}  // namespace tad::passes
