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
