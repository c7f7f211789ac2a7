#include <algorithm>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

ValueId strip_broadcast(const ir::Function &f, ValueId v) {
    while (f.values[v].def_op >= 0 && f.def(v).kind == OpKind::Broadcast) v = f.def(v).operands[0];
    return v;
}

// A pointer as base parameter + the integer terms added to it (Add trees flattened, broadcasts
// stripped), so `X + row*stride + cols` and `(X + row*stride) + cols` compare equal.
struct Address {
    std::string base;
    std::vector<ValueId> terms;
};

void add_terms(const ir::Function &f, ValueId v, std::vector<ValueId> &out) {
    v = strip_broadcast(f, v);
    const ir::Op &op = f.def(v);
    if (op.kind == OpKind::Add) {
        add_terms(f, op.operands[0], out);
        add_terms(f, op.operands[1], out);
    } else {
        out.push_back(v);
    }
}

bool decompose(const ir::Function &f, ValueId p, Address &a) {
    p = strip_broadcast(f, p);
    const ir::Op &op = f.def(p);
    if (op.kind == OpKind::Param) {
        a.base = op.name;
        return true;
    }
    if (op.kind == OpKind::AddPtr) {
        add_terms(f, op.operands[1], a.terms);
        return decompose(f, op.operands[0], a);
    }
    return false;
}

// Structural equality of two integer terms, allowing different scalar Int parameters in the same
// positions; those pairs are returned as guards (they must be equal at run time).
bool same_term(const ir::Function &f, ValueId a, ValueId b, std::vector<std::pair<std::string, std::string>> &guards) {
    a = strip_broadcast(f, a);
    b = strip_broadcast(f, b);
    if (a == b) return true;
    const ir::Op &x = f.def(a), &y = f.def(b);
    if (x.kind == OpKind::Param && y.kind == OpKind::Param) {
        if (f.params[x.ival].kind != ir::ParamKind::Int || f.params[y.ival].kind != ir::ParamKind::Int) return false;
        guards.emplace_back(x.name, y.name);
        return true;
    }
    if (x.kind != y.kind || x.operands.size() != y.operands.size() || x.kind == OpKind::Load) return false;
    if (x.axis != y.axis || x.fval != y.fval || x.ival != y.ival || x.ival2 != y.ival2 || x.name != y.name)
        return false;
    for (size_t i = 0; i < x.operands.size(); ++i)
        if (!same_term(f, x.operands[i], y.operands[i], guards)) return false;
    return true;
}

bool same_terms(const ir::Function &f, std::vector<ValueId> a, std::vector<ValueId> b,
                std::vector<std::pair<std::string, std::string>> &guards) {
    if (a.size() != b.size()) return false;
    // Exact matches first, then pair the rest in order.
    std::vector<ValueId> ra, rb;
    std::sort(b.begin(), b.end());
    for (ValueId t : a) {
        auto it = std::find(b.begin(), b.end(), t);
        if (it != b.end())
            b.erase(it);
        else
            ra.push_back(t);
    }
    for (size_t i = 0; i < ra.size(); ++i)
        if (!same_term(f, ra[i], b[i], guards)) return false;
    return true;
}

ValueId mask_of(const ir::Function &f, const ir::Op &op) {
    if (!op.has_mask) return ir::kNoValue;
    return strip_broadcast(f, op.operands[op.kind == OpKind::Load ? 1 : 2]);
}

}  // namespace

std::map<std::string, GradWrite> plan_gradient_writes(const ir::Function &f, const std::vector<std::string> &wrt,
                                                      const std::vector<std::string> &outputs) {
    std::map<std::string, GradWrite> plan;
    // A load in a loop reads per iteration; its gradient is accumulated (atomics) for now.
    std::vector<bool> in_loop(f.ops.size(), false);
    for (const ir::Loop &l : ir::loops(f))
        for (int i = l.begin; i <= l.end; ++i) in_loop[i] = true;
    for (const std::string &p : wrt) {
        plan[p] = GradWrite{};
        std::vector<const ir::Op *> loads;
        Address la;
        bool looped = false, simple = true;
        for (size_t i = 0; i < f.ops.size(); ++i) {
            const ir::Op &op = f.ops[i];
            if (op.kind != OpKind::Load || pointer_base(f, op.operands[0]) != p) continue;
            loads.push_back(&op);
            looped = looped || in_loop[i];
            simple = simple && decompose(f, op.operands[0], la);  // not through a loop or tl.where
        }
        if (loads.size() != 1 || looped || !simple) continue;
        for (const ir::Op &op : f.ops) {
            if (op.kind != OpKind::Store) continue;
            Address sa;
            if (!decompose(f, op.operands[0], sa)) continue;
            if (std::find(outputs.begin(), outputs.end(), sa.base) == outputs.end()) continue;
            if (mask_of(f, op) != mask_of(f, *loads[0])) continue;
            if (!f.type(op.operands[0]).same_shape(f.type(loads[0]->operands[0]))) continue;
            std::vector<std::pair<std::string, std::string>> guards;
            if (!same_terms(f, la.terms, sa.terms, guards)) continue;
            plan[p] = GradWrite{GradWrite::Store, sa.base, guards, false, std::nullopt};
            break;
        }
    }
    return plan;
}

}  // namespace tad::passes
