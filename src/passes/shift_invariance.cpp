#include "passes/shift_invariance.h"

#include <algorithm>
#include <map>

#include "passes/online_softmax_internal.h"
#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

// Whether every value reaching a store to `outputs` (or a loop) is unchanged when the maximum
// defined by op i shifts.
bool invariant(const ir::Function &f, int i, const std::vector<std::string> &outputs) {
    std::map<ValueId, detail::Shift> t;
    const ValueId m = f.ops[i].result;
    const int axis = detail::varying_axis(f.type(m));
    if (axis < -1) return false;
    t[m] = {0, 1, axis};
    for (size_t j = static_cast<size_t>(i) + 1; j < f.ops.size(); ++j) {
        const ir::Op &op = f.ops[j];
        if (std::none_of(op.operands.begin(), op.operands.end(), [&](ValueId o) { return t.count(o) > 0; })) continue;
        if (op.kind == OpKind::Store &&
            std::find(outputs.begin(), outputs.end(), pointer_base(f, op.operands[0])) == outputs.end())
            continue;  // a saved statistic: no gradient comes back from it
        std::string why;
        const detail::Shift r = detail::propagate(f, op, t, &why);
        if (!why.empty()) return false;
        if (r.tracked()) t[op.result] = r;
    }
    return true;
}

}  // namespace

ir::Function hold_shift_invariant_maxima(const ir::Function &f, const std::vector<std::string> &outputs,
                                         std::string *report) {
    const std::vector<bool> top = top_level(f);
    std::vector<bool> held(f.ops.size(), false);
    bool any = false;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind != OpKind::ReduceMax || !top[i] || !f.type(op.result).is_float()) continue;
        const int at = static_cast<int>(i);
        held[i] = invariant(f, at, outputs);
        if (!held[i]) continue;
        any = true;
        *report += op_at(f, at) + ": held constant (every use is unchanged by a shift of it: its gradient is zero)\n";
    }
    if (!any) return f;
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        copy_op(b, f, f.ops[i], map);
        if (!held[i]) continue;
        const ValueId v = f.ops[i].result;
        b.loc = f.ops[i].loc;
        map[v] = b.append(ir::Op(OpKind::StopGradient, {map[v]}), f.type(v));
        out.values[map[v]].name = f.values[v].name;
    }
    return with_params(std::move(out), f, map, {});
}

}  // namespace tad::passes
