#include "passes/read_back.h"

#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

bool exactness_matters(const ir::Function &f, const std::vector<std::vector<int>> &users, ValueId v) {
    const OpKind k = f.def(v).kind;
    if (k == OpKind::ReduceMax || k == OpKind::ReduceMin || k == OpKind::Maximum || k == OpKind::Minimum) return true;
    for (int i : users.at(v)) {
        const ir::Op &op = f.ops[i];
        const ir::OpClass c = ir::op_info(op.kind).cls;
        if (c == ir::OpClass::Shape && exactness_matters(f, users, op.result)) return true;
        if (c == ir::OpClass::Compare || op.kind == OpKind::Maximum || op.kind == OpKind::Minimum ||
            op.kind == OpKind::ReduceMax || op.kind == OpKind::ReduceMin || op.kind == OpKind::Argmax ||
            op.kind == OpKind::Argmin || op.kind == OpKind::Floor || op.kind == OpKind::Ceil ||
            op.kind == OpKind::Mod || (op.kind == OpKind::Cast && !f.type(op.result).is_float()))
            return true;
    }
    return false;
}

namespace {

// An elementwise op reading x (computed from v) whose value and derivative stay finite at any finite
// x of moderate size: polynomial, bounded or sign-like ops; no divisor computed from v, x nowhere an
// exponent, the argument of an exponential (its overflow), a logarithm or root, or cast to a
// narrower float.
bool smooth_lane_wise(const ir::Function &f, const ir::Op &op, ValueId x, ValueId v) {
    switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Atan:
    case OpKind::Where: return true;
    case OpKind::Cast:
        return !f.type(op.result).is_float() ||
               ir::dtype_rank(f.type(op.result).elem) >= ir::dtype_rank(f.type(x).elem);
    case OpKind::Div: return !cone_any(f, op.operands[1], [&](const ir::Op &o) { return o.result == v; });
    default: return ir::op_info(op.kind).cls == ir::OpClass::Compare;
    }
}

// Whether write `op`'s mask has each of `need` among its conjuncts.
bool masks_out(const ir::Function &f, const ir::Op &op, const std::vector<ValueId> &need) {
    const std::vector<ValueId> have = and_operands(f, op.operands[2]);
    return std::all_of(need.begin(), need.end(),
                       [&](ValueId c) { return std::find(have.begin(), have.end(), c) != have.end(); });
}

// The values a yield at op `end` (a for_end) that reads x carries x into: for each slot it fills,
// the loop's carried value there and its result.
std::vector<ValueId> carried_into(const ir::Function &f, int end, ValueId x) {
    std::vector<ValueId> out;
    for (const ir::Loop &l : ir::loops(f)) {
        if (l.end != end) continue;
        for (size_t k = 0; k < l.args.size(); ++k)
            if (f.ops[end].operands[k] == x) {
                out.push_back(f.ops[l.args[k]].result);
                out.push_back(f.ops[l.results[k]].result);
            }
    }
    return out;
}

}  // namespace

bool lanes_off_unread(const ir::Function &f, const std::vector<std::vector<int>> &users, ValueId v, int save,
                      ValueId mask) {
    if (cone_any(f, mask, [](const ir::Op &op) { return ir::op_info(op.kind).cls == ir::OpClass::Memory; }))
        return false;
    const std::vector<ValueId> need = and_operands(f, mask);
    std::set<ValueId> tainted{v};
    std::vector<ValueId> work{v};
    const auto taint = [&](ValueId r) {
        if (tainted.insert(r).second) work.push_back(r);
    };
    while (!work.empty()) {
        const ValueId x = work.back();
        work.pop_back();
        for (int u : users.at(x)) {
            const ir::Op &op = f.ops[u];
            if (u == save) continue;
            if (op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd) {
                if (op.operands[0] == x || !op.has_mask || op.operands[2] == x || !masks_out(f, op, need)) return false;
                continue;
            }
            if (op.kind == OpKind::ForEnd) {
                for (ValueId r : carried_into(f, u, x)) taint(r);
                continue;
            }
            if (!smooth_lane_wise(f, op, x, v) || !f.type(op.result).same_shape(f.type(v))) return false;
            taint(op.result);
        }
    }
    return true;
}

FinalBuffers::FinalBuffers(ir::Builder &b, const ir::Function &f, const std::vector<std::string> &bases)
    : b_(b), f_(f) {
    for (const std::string &base : bases) {
        const ValueId from = f.params[static_cast<size_t>(f.param_index(base))].value;
        if (final_of_.count(from)) continue;
        params_.push_back(final_param(b, f, base, f.params.size() + params_.size()));
        final_of_[from] = params_.back().value;
    }
}

ValueId FinalBuffers::recompute(ValueId v, const std::vector<ValueId> &map, std::map<ValueId, ValueId> &done) {
    auto it = done.find(v);
    if (it != done.end()) return it->second;
    auto fin = final_of_.find(v);
    if (fin != final_of_.end()) return done[v] = fin->second;
    ir::Op c = f_.def(v);
    bool changed = map[v] == ir::kNoValue;
    for (ValueId &o : c.operands) {
        const ValueId n = recompute(o, map, done);
        changed = changed || n != map[o];
        o = n;
    }
    return done[v] = changed ? b_.append(c, f_.type(v)) : map[v];
}

}  // namespace tad::passes
