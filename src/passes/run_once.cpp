#include "passes/run_once.h"

#include <algorithm>
#include <map>

#include "passes/host_expr.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// Scalar v as a polynomial of the launch's names, or nullopt.
std::optional<Poly> poly_of(const ir::Function &f, ValueId v) {
    std::string why;
    std::optional<HostExpr> e = host_expr(f, v, &why);
    return e ? Poly::parse(e->str()) : std::nullopt;
}

// Loop l's guards (it runs once), where it qualifies.
std::optional<std::vector<Inequality>> once(const ir::Function &f, const ir::Loop &l) {
    const ir::Op &begin = f.ops[static_cast<size_t>(l.begin)];
    const ir::Op &step = f.def(begin.operands[2]);
    if (l.parent >= 0 || step.kind != OpKind::Const || step.fval <= 0 || !sizes_a_tile(f, step.name))
        return std::nullopt;
    const std::optional<Poly> lo = poly_of(f, begin.operands[0]), hi = poly_of(f, begin.operands[1]),
                              by = poly_of(f, begin.operands[2]);
    if (!lo || !hi || !by) return std::nullopt;
    return std::vector<Inequality>{{*hi, *lo + Poly::constant(1)}, {*lo + *by, *hi}};
}

}  // namespace

std::optional<RunOnce> run_loops_once(const ir::Function &f) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    RunOnce out{empty_like(f), {}, 0};
    std::map<int, const ir::Loop *> begins;  // for_begin op -> its loop, where it runs once
    for (const ir::Loop &l : loops) {
        std::optional<std::vector<Inequality>> g = once(f, l);
        if (!g) continue;
        begins[l.begin] = &l;
        for (const Inequality &x : *g)
            if (std::find(out.guards.begin(), out.guards.end(), x) == out.guards.end()) out.guards.push_back(x);
        ++out.loops;
    }
    if (begins.empty()) return std::nullopt;
    ir::Builder b(out.fn);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    const ir::Loop *in = nullptr;  // the loop being run once
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        const int at = static_cast<int>(i);
        if (begins.count(at)) {
            in = begins.at(at);
            map[op.result] = map[op.operands[0]];  // the loop variable is lo
        } else if (in && op.kind == OpKind::LoopArg && at < in->end && at > in->begin &&
                   std::find(in->args.begin(), in->args.end(), at) != in->args.end()) {
            map[op.result] = map[op.operands[0]];  // its init
        } else if (in && at == in->end) {
            if (in->results.empty()) in = nullptr;
        } else if (in && op.kind == OpKind::LoopResult && at > in->end && at <= in->last()) {
            map[op.result] = map[f.ops[static_cast<size_t>(in->end)].operands.at(static_cast<size_t>(op.ival))];
            if (at == in->last()) in = nullptr;
        } else if (op.kind == OpKind::Param) {
            map[op.result] = b.param_like(f.params.at(static_cast<size_t>(op.ival)), f.type(op.result));
        } else {
            copy_op(b, f, op, map);
        }
    }
    return out;
}

}  // namespace tad::passes
