#include "ad/shadow.h"

#include <cctype>

#include "support/error.h"

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

std::string shadow_name(const std::string &primal) {
    bool upper = !primal.empty() && std::isupper(static_cast<unsigned char>(primal[0]));
    return (upper ? "D" : "d") + primal;
}

std::string shadow_param_name(const ir::Function &fwd, const std::string &primal) {
    std::string name = shadow_name(primal);
    while (fwd.param_index(name) >= 0) name = "_" + name;
    return name;
}

ValueId mirror_pointer(ir::Builder &b, const ir::Function &fwd, const ir::Op &op,
                       const std::function<ValueId(ValueId)> &shadow_of, const std::vector<ValueId> &primal) {
    ValueId s = ir::kNoValue;
    switch (op.kind) {
    case OpKind::Broadcast: s = b.broadcast(shadow_of(op.operands[0]), fwd.type(op.result).shape); break;
    case OpKind::ExpandDims: s = b.expand_dims(shadow_of(op.operands[0]), op.axis); break;
    case OpKind::AddPtr: s = b.add_ptr(shadow_of(op.operands[0]), primal.at(op.operands[1])); break;
    case OpKind::Where: {
        // The second pointer's shadow first: where shadows are built on demand (reverse mode), the
        // order the emitted backwards have always had.
        ValueId no = shadow_of(op.operands[2]), yes = shadow_of(op.operands[1]);
        s = b.where(primal.at(op.operands[0]), yes, no);
        break;
    }
    default: unsupported(fwd, op, "computing a differentiated pointer");
    }
    const std::string &name = fwd.values[op.result].name;
    if (!name.empty()) b.func().values[s].name = shadow_name(name);
    return s;
}

void unsupported(const ir::Function &fwd, const ir::Op &op, const std::string &what) {
    fail(TAD_ERR_UNSUPPORTED, where(fwd.source_path, op.loc.line, op.loc.col) + ": unsupported construct '" +
                                  ir::op_name(op.kind) + "' " + what);
}

}  // namespace tad::ad
