// unsaved_accumulators (unsaved_accumulators.h).
#include "passes/unsaved_accumulators.h"

#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

bool holds_dot(const ir::Function &f, const ir::Loop &l) {
    for (int i = l.begin; i < l.end; ++i)
        if (f.ops[i].kind == OpKind::Dot) return true;
    return false;
}

// Whether v is computed from a load: a value that may have a gradient of its own.
bool loaded(const ir::Function &f, ValueId v) {
    return cone_any(f, v, [](const ir::Op &op) { return op.kind == OpKind::Load; });
}

// Whether reverse mode of op (reading a value of `from`) needs none of what it reads of it: op is
// linear in it, and a product's or quotient's other operand has no gradient that would need it.
bool linear_in(const ir::Function &f, const ir::Op &op, const std::set<ValueId> &from) {
    auto in = [&](int k) { return from.count(op.operands[static_cast<size_t>(k)]) > 0; };
    auto constant = [&](int k) { return !in(k) && !loaded(f, op.operands[static_cast<size_t>(k)]); };
    switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Neg:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::ReduceSum:
    case OpKind::Store: return true;
    case OpKind::Cast: return f.type(op.result).is_float();
    case OpKind::Mul: return constant(in(0) ? 1 : 0);
    case OpKind::Div: return !in(1) && constant(1);
    case OpKind::Where: return !in(0);
    default: return false;
    }
}

// The candidate of loop result `r` (op index) of a top-level loop, or one with store -1.
UnsavedAccumulator candidate(const ir::Function &f, const ir::Loop &l, size_t k) {
    const ir::Op &res = f.ops[l.results[k]];
    const ValueId r = res.result;
    UnsavedAccumulator out{l.begin, f.values[r].name, -1, ""};
    if (out.name.empty() || !f.type(r).is_float() || f.type(r).rank() == 0) return out;
    if (!zero_constant(f, f.ops[l.args[k]].operands[0])) return out;
    std::set<ValueId> from = {r};
    int store = -1;
    const std::vector<bool> top = top_level(f);
    for (int i = l.last() + 1; i < static_cast<int>(f.ops.size()); ++i) {
        const ir::Op &op = f.ops[i];
        if (std::none_of(op.operands.begin(), op.operands.end(), [&](ValueId v) { return from.count(v) > 0; }))
            continue;
        if (op.result != ir::kNoValue) from.insert(op.result);
        if (op.kind == OpKind::Store && store < 0 && top[i] && from.count(op.operands[1]) &&
            f.type(op.operands[1]).same_shape(f.type(r)) && !pointer_base(f, op.operands[0]).empty())
            store = i;
    }
    if (store < 0 || !value_needed(f, r)) return out;
    out.store = store;
    out.like = pointer_base(f, f.ops[store].operands[0]);
    return out;
}

}  // namespace

bool value_needed(const ir::Function &f, ValueId v) {
    std::set<ValueId> from = {v};
    for (size_t i = static_cast<size_t>(f.values[v].def_op) + 1; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (std::none_of(op.operands.begin(), op.operands.end(), [&](ValueId x) { return from.count(x) > 0; }))
            continue;
        if (!linear_in(f, op, from)) return true;
        if (op.result != ir::kNoValue) from.insert(op.result);
    }
    return false;
}

std::vector<UnsavedAccumulator> unsaved_accumulators(const ir::Function &f) {
    std::vector<UnsavedAccumulator> out;
    for (const ir::Loop &l : ir::loops(f)) {
        if (l.parent >= 0 || !holds_dot(f, l)) continue;
        for (size_t k = 0; k < l.results.size(); ++k) {
            UnsavedAccumulator c = candidate(f, l, k);
            if (c.store >= 0) out.push_back(std::move(c));
        }
    }
    return out;
}

}  // namespace tad::passes
