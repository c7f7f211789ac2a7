#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

ir::Function empty_like(const ir::Function &f) {
    ir::Function out;
    out.name = f.name;
    out.constexprs = f.constexprs;
    out.specialized = f.specialized;
    out.source_path = f.source_path;
    return out;
}

void copy_op(ir::Builder &b, const ir::Function &f, const ir::Op &op, std::vector<ir::ValueId> &map) {
    ir::Op c = op;
    for (ir::ValueId &v : c.operands) v = map.at(v);
    b.loc = op.loc;
    const bool has = op.result != ir::kNoValue;
    const ir::ValueId v = b.append(c, has ? f.type(op.result) : ir::Type{}, has);
    if (!has) return;
    b.func().values[v].name = f.values[op.result].name;
    map[op.result] = v;
}

ir::Param final_param(ir::Builder &b, const ir::Function &f, const std::string &base, size_t index) {
    const ir::ValueId from = f.params[static_cast<size_t>(f.param_index(base))].value;
    ir::Op op(ir::OpKind::Param, {});
    op.ival = static_cast<int64_t>(index);
    op.name = fresh_name(f, base + "_final");
    const ir::ValueId v = b.append(op, f.type(from));
    b.func().values[v].name = op.name;
    return ir::Param{op.name, ir::ParamKind::Pointer, v, base};
}

ir::Function with_params(ir::Function out, const ir::Function &f, const std::vector<ir::ValueId> &map,
                         const std::vector<ir::Param> &finals) {
    out.params = f.params;
    for (ir::Param &p : out.params) p.value = map[p.value];
    out.params.insert(out.params.end(), finals.begin(), finals.end());
    return out;
}

namespace {

// f's ops at the indices `order`, in that order, operands renamed through `repl` first.
ir::Function rebuild(const ir::Function &f, const std::vector<int> &order, const std::vector<ir::ValueId> &repl) {
    ir::Function out = empty_like(f);
    std::vector<ir::ValueId> renum(f.values.size(), ir::kNoValue);
    for (int i : order) {
        ir::Op op = f.ops[static_cast<size_t>(i)];
        for (ir::ValueId &v : op.operands) v = renum.at(repl[v]);
        if (op.result != ir::kNoValue) {
            ir::ValueId nv = static_cast<ir::ValueId>(out.values.size());
            ir::ValueInfo info = f.values[op.result];
            info.def_op = static_cast<int>(out.ops.size());
            out.values.push_back(info);
            renum[op.result] = nv;
            op.result = nv;
        }
        if (op.kind == ir::OpKind::Param) {
            op.ival = static_cast<int64_t>(out.params.size());
            ir::Param p = f.params.at(static_cast<size_t>(f.ops[static_cast<size_t>(i)].ival));
            p.value = op.result;
            out.params.push_back(p);
        }
        out.ops.push_back(std::move(op));
    }
    return out;
}

}  // namespace

ir::Function compact(const ir::Function &f, const std::vector<bool> &keep, const std::vector<ir::ValueId> &repl) {
    std::vector<int> order;
    for (size_t i = 0; i < f.ops.size(); ++i)
        if (keep[i]) order.push_back(static_cast<int>(i));
    return rebuild(f, order, repl);
}

ir::Function reordered(const ir::Function &f, const std::vector<int> &order) {
    std::vector<ir::ValueId> same(f.values.size());
    for (size_t v = 0; v < same.size(); ++v) same[v] = static_cast<ir::ValueId>(v);
    return rebuild(f, order, same);
}

ir::Function cleanup(const ir::Function &f) { return drop_unused_params(dce(cse(f))); }

ir::Function drop_unused_params(const ir::Function &f) {
    std::vector<bool> used(f.values.size(), false);
    for (const ir::Op &op : f.ops)
        for (ir::ValueId v : op.operands) used[v] = true;
    std::vector<bool> keep(f.ops.size(), true);
    for (size_t i = 0; i < f.ops.size(); ++i)
        if (f.ops[i].kind == ir::OpKind::Param && !used[f.ops[i].result]) keep[i] = false;
    std::vector<ir::ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ir::ValueId>(v);
    return compact(f, keep, repl);
}

bool zero_constant(const ir::Function &f, ir::ValueId v) {
    const ir::Op &op = f.def(v);
    if (op.kind == ir::OpKind::Broadcast) return zero_constant(f, op.operands[0]);
    return op.kind == ir::OpKind::Const && op.fval == 0.0 && op.name.empty();
}

bool sizes_a_tile(const ir::Function &f, const std::string &name) {
    return std::any_of(f.values.begin(), f.values.end(), [&](const ir::ValueInfo &v) {
        return std::any_of(v.type.shape.begin(), v.type.shape.end(), [&](const ir::Dim &d) { return d.expr == name; });
    });
}

bool cone_any(const ir::Function &f, ir::ValueId v, const std::function<bool(const ir::Op &)> &p) {
    std::set<ir::ValueId> seen;
    std::vector<ir::ValueId> work = {v};
    while (!work.empty()) {
        const ir::ValueId x = work.back();
        work.pop_back();
        if (!seen.insert(x).second) continue;
        const ir::Op &op = f.def(x);
        if (p(op)) return true;
        for (ir::ValueId o : op.operands) work.push_back(o);
    }
    return false;
}

bool only_user(const std::vector<std::vector<int>> &users, ir::ValueId v, int op) {
    const std::vector<int> &u = users[static_cast<size_t>(v)];
    return u.size() == 1 && u[0] == op;
}

ir::ValueId advance_of(const ir::Function &f, const ir::Loop &l, size_t k) {
    const ir::ValueId arg = f.ops[static_cast<size_t>(l.args[k])].result;
    const ir::Op &next = f.def(f.ops[static_cast<size_t>(l.end)].operands[k]);
    const bool ptr = next.kind == ir::OpKind::AddPtr;
    if (!ptr && next.kind != ir::OpKind::Add) return ir::kNoValue;
    for (int j = 0; j < (ptr ? 1 : 2); ++j) {
        const ir::ValueId amount = next.operands[static_cast<size_t>(1 - j)];
        const ir::Op &a = f.def(amount);
        const ir::ValueId from = a.kind == ir::OpKind::Broadcast ? a.operands[0] : amount;
        const bool invariant = f.values[from].def_op < l.begin || f.def(from).kind == ir::OpKind::Const;
        if (next.operands[static_cast<size_t>(j)] == arg && invariant) return amount;
    }
    return ir::kNoValue;
}

ir::ValueId advanced_by(ir::Builder &b, ir::ValueId init, ir::ValueId amount, ir::ValueId steps) {
    const ir::Type t = b.func().type(amount);  // a copy: the appends below move the function's values
    const bool ptr = b.func().type(init).is_ptr;
    const ir::DType wide = ptr ? ir::DType::I64 : t.elem;
    ir::ValueId n = b.cast(steps, wide);
    if (t.rank() > 0) n = b.broadcast(n, t.shape);
    const ir::ValueId offset = b.binary(ir::OpKind::Mul, b.cast(amount, wide), n);
    return ptr ? b.add_ptr(init, offset) : b.binary(ir::OpKind::Add, init, offset);
}

std::vector<ir::ValueId> and_operands(const ir::Function &f, ir::ValueId v) {
    const ir::Op &op = f.def(v);
    if (op.kind != ir::OpKind::And) return {v};
    std::vector<ir::ValueId> a = and_operands(f, op.operands[0]), b = and_operands(f, op.operands[1]);
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<bool> top_level(const ir::Function &f) {
    std::vector<bool> top(f.ops.size(), true);
    for (const ir::Loop &l : ir::loops(f))
        for (int i = l.begin; i <= l.last(); ++i) top[i] = false;
    return top;
}

std::vector<int> program_axes(const ir::Function &f) {
    std::set<int> axes;
    for (const ir::Op &op : f.ops)
        if (op.kind == ir::OpKind::ProgramId) axes.insert(op.axis);
    return std::vector<int>(axes.begin(), axes.end());
}

std::string op_at(const ir::Function &f, int i) {
    const ir::SrcLoc &l = f.ops[i].loc;
    std::string at = f.ops[i].kind == ir::OpKind::ForBegin ? "loop" : ir::op_name(f.ops[i].kind);
    if (l.line) at += " at " + f.source_path + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
    return at;
}

std::string fresh_name(const ir::Function &f, std::string base) {
    auto taken = [&](const std::string &n) {
        return f.param_index(n) >= 0 || std::any_of(f.constexprs.begin(), f.constexprs.end(),
                                                    [&](const ir::Constexpr &c) { return c.name == n; });
    };
    while (taken(base)) base += "_";
    return base;
}

}  // namespace tad::passes
