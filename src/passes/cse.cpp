#include <map>
#include <tuple>

#include "passes/passes.h"

namespace tad::passes {

namespace {
using Key = std::tuple<int, std::vector<ir::ValueId>, int, bool, double, int64_t, int64_t, std::string, std::string>;

bool mergeable(ir::OpKind k) {
    return k != ir::OpKind::Param && k != ir::OpKind::Load && k != ir::OpKind::Store && k != ir::OpKind::AtomicAdd;
}
}  // namespace

ir::Function cse(const ir::Function &f) {
    std::vector<ir::ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ir::ValueId>(v);
    std::vector<bool> keep(f.ops.size(), true);
    std::map<Key, ir::ValueId> seen;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (!mergeable(op.kind)) continue;
        std::vector<ir::ValueId> operands;
        for (ir::ValueId v : op.operands) operands.push_back(repl[v]);
        Key key{static_cast<int>(op.kind), operands, op.axis, op.keep_dims, op.fval, op.ival, op.ival2, op.name,
                f.type(op.result).str()};
        auto it = seen.find(key);
        if (it == seen.end()) {
            seen.emplace(std::move(key), op.result);
        } else {
            repl[op.result] = it->second;
            keep[i] = false;
        }
    }
    return compact(f, keep, repl);
}

ir::Function dce(const ir::Function &f) {
    std::vector<bool> live(f.values.size(), false), keep(f.ops.size(), false);
    for (size_t i = f.ops.size(); i-- > 0;) {
        const ir::Op &op = f.ops[i];
        bool effect = op.kind == ir::OpKind::Store || op.kind == ir::OpKind::AtomicAdd || op.kind == ir::OpKind::Param;
        if (!effect && !(op.result != ir::kNoValue && live[op.result])) continue;
        keep[i] = true;
        for (ir::ValueId v : op.operands) live[v] = true;
    }
    std::vector<ir::ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ir::ValueId>(v);
    return compact(f, keep, repl);
}

}  // namespace tad::passes
