#include "ad/replay.h"

namespace tad::ad {

ir::ValueId replay_op(ir::Builder &b, const ir::Function &fwd, const ir::Op &op, std::vector<ir::ValueId> &primal) {
    if (op.kind == ir::OpKind::StopGradient || op.kind == ir::OpKind::GradVia)
        return primal[op.result] = primal.at(op.operands[0]);  // derivation-only: the value is operand 0's
    if (op.kind == ir::OpKind::ReplayAs)  // v's value, from here on, is w's (the rule of v's op reads it too)
        return primal[op.result] = primal[op.operands[0]] = primal.at(op.operands[1]);
    b.loc = op.loc;
    ir::Op copy = op;
    for (ir::ValueId &v : copy.operands) v = primal.at(v);
    if (op.kind == ir::OpKind::Load && op.has_mask && !op.has_other) {
        const ir::Type &t = fwd.type(op.result);
        copy.operands.push_back(b.broadcast(b.constant(0, t.elem), t.shape));
        copy.has_other = true;
    }
    if (op.result == ir::kNoValue) {
        b.append(copy, ir::Type{}, false);
        return ir::kNoValue;
    }
    ir::ValueId r = b.append(copy, fwd.type(op.result));
    b.func().values[r].name = fwd.values[op.result].name;
    primal[op.result] = r;
    return r;
}

}  // namespace tad::ad
