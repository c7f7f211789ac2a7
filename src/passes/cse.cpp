#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>

#include "passes/passes.h"

namespace tad::passes {

namespace {
// A constant's value by its bits: -0.0 is not 0.0, and NaN must compare (as a double it breaks the
// map's order).
using Key = std::tuple<int, std::vector<ir::ValueId>, int, bool, bool, bool, uint64_t, int64_t, int64_t, std::string,
                       std::string>;

uint64_t bits(double x) {
    uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

bool structural(ir::OpKind k) {
    return k == ir::OpKind::ForBegin || k == ir::OpKind::LoopArg || k == ir::OpKind::ForEnd ||
           k == ir::OpKind::LoopResult;
}

bool mergeable(ir::OpKind k) {
    return k != ir::OpKind::Param && k != ir::OpKind::Load && k != ir::OpKind::Store && k != ir::OpKind::AtomicAdd &&
           k != ir::OpKind::Barrier && !structural(k);
}
// Whether v is the literal `c` (not a constexpr's name: another launch may set it; not -0.0:
// x - (-0.0) is x + 0.0, which makes -0.0 +0.0), or a broadcast or expand_dims of one.
bool splat(const ir::Function &f, ir::ValueId v, double c) {
    const ir::Op &op = f.def(v);
    if (op.kind == ir::OpKind::Broadcast || op.kind == ir::OpKind::ExpandDims) return splat(f, op.operands[0], c);
    return op.kind == ir::OpKind::Const && op.name.empty() && op.fval == c && !std::signbit(op.fval);
}

// The operand an op leaves unchanged, bit for bit: x * 1, 1 * x, x / 1, x - 0, and x + 0 on integers
// (a float -0.0 + 0.0 is +0.0); kNoValue otherwise.
ir::ValueId identity(const ir::Function &f, const ir::Op &op, const std::vector<ir::ValueId> &repl) {
    if (op.operands.size() != 2) return ir::kNoValue;
    const ir::ValueId a = repl[op.operands[0]], b = repl[op.operands[1]];
    const bool integer = !f.type(op.result).is_float();
    ir::ValueId x = ir::kNoValue;
    if (op.kind == ir::OpKind::Mul) x = splat(f, b, 1) ? a : splat(f, a, 1) ? b : ir::kNoValue;
    if (op.kind == ir::OpKind::Div && splat(f, b, 1)) x = a;
    if (op.kind == ir::OpKind::Sub && splat(f, b, 0)) x = a;
    if (op.kind == ir::OpKind::Add && integer) x = splat(f, b, 0) ? a : splat(f, a, 0) ? b : ir::kNoValue;
    return x != ir::kNoValue && f.type(x) == f.type(op.result) ? x : ir::kNoValue;
}

// The loads of f from parameters it never stores or adds to (memory_params), by op index.
std::vector<bool> read_only_loads_of(const ir::Function &f) {
    const MemoryParams m = memory_params(f);
    std::vector<bool> out(f.ops.size(), false);
    for (const Access &a : m.accesses)
        if (a.kind == ir::OpKind::Load && !m.stored.count(a.param)) out[static_cast<size_t>(a.op)] = true;
    return out;
}
}  // namespace

ir::Function cse(const ir::Function &f, bool read_only_loads) {
    const std::vector<bool> read_only = read_only_loads ? read_only_loads_of(f) : std::vector<bool>{};
    auto merges = [&](size_t i) {
        const ir::Op &op = f.ops[i];
        return op.kind == ir::OpKind::Load ? read_only_loads && read_only[i] : mergeable(op.kind);
    };
    std::vector<ir::ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ir::ValueId>(v);
    std::vector<bool> keep(f.ops.size(), true);
    // One table per open loop body: what a body computes is not visible after the loop.
    std::vector<std::map<Key, ir::ValueId>> scopes(1);
    auto find = [&](const Key &k) -> const ir::ValueId * {
        for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
            auto it = s->find(k);
            if (it != s->end()) return &it->second;
        }
        return nullptr;
    };
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind == ir::OpKind::ForBegin) scopes.emplace_back();
        if (op.kind == ir::OpKind::ForEnd) scopes.pop_back();
        if (!merges(i)) continue;
        if (const ir::ValueId same = identity(f, op, repl); same != ir::kNoValue) {
            repl[op.result] = same;
            keep[i] = false;
            continue;
        }
        std::vector<ir::ValueId> operands;
        for (ir::ValueId v : op.operands) operands.push_back(repl[v]);
        Key key{static_cast<int>(op.kind),
                operands,
                op.axis,
                op.keep_dims,
                op.has_mask,
                op.has_other,
                bits(op.fval),
                op.ival,
                op.ival2,
                op.name,
                f.type(op.result).str()};
        if (const ir::ValueId *prev = find(key)) {
            repl[op.result] = *prev;
            keep[i] = false;
        } else {
            scopes.back().emplace(std::move(key), op.result);
        }
    }
    return compact(f, keep, repl);
}

}  // namespace tad::passes
