// Reversal of whole loops: what all loops share, and accumulator loops, reversed in forward order.
// Loops with nonlinear state are in reverse_recompute.cpp.
#include <algorithm>
#include <set>

#include "ad/reverse_internal.h"
#include "passes/passes.h"

namespace tad::ad::detail {

const ir::Loop &Reverse::loop_ending_at(int i) const {
    for (const ir::Loop &l : loops_)
        if (last_op(l) == i) return l;
    fail(TAD_ERR_INTERNAL, "reverse: no loop ends at op " + std::to_string(i));
}

const ir::Loop &Reverse::loop_beginning_at(int i) const {
    for (const ir::Loop &l : loops_)
        if (l.begin == i) return l;
    fail(TAD_ERR_INTERNAL, "reverse: no loop begins at op " + std::to_string(i));
}

const ir::Loop &Reverse::loop_of_slot(int i) const {
    for (const ir::Loop &l : loops_)
        if (std::count(l.args.begin(), l.args.end(), i) || std::count(l.results.begin(), l.results.end(), i)) return l;
    fail(TAD_ERR_INTERNAL, "reverse: op " + std::to_string(i) + " carries no loop value");
}

bool Reverse::is_constant(ValueId v) const {
    const ir::Op &op = fwd_.def(v);
    return op.kind == OpKind::Const || (op.kind == OpKind::Broadcast && is_constant(op.operands[0]));
}

bool Reverse::in_body(const ir::Loop &l, ValueId v) const {
    int d = fwd_.values[v].def_op;
    return d > l.begin && d < l.end;
}

Reverse::Chain Reverse::accumulator_chain(const ir::Loop &l, size_t k) const {
    Chain c;
    ValueId v = fwd_.ops[l.args[k]].result, yield = fwd_.ops[l.end].operands[k];
    for (;;) {
        std::vector<int> uses;  // one entry per operand that reads v
        for (int i = l.begin; i <= l.end; ++i)
            for (ValueId o : fwd_.ops[i].operands)
                if (o == v) uses.push_back(i);
        if (uses.size() != 1) return c;
        if (v == yield) {
            c.linear = uses[0] == l.end;
            return c;
        }
        const ir::Op &u = fwd_.ops[uses[0]];
        if (u.kind == OpKind::Add || (u.kind == OpKind::Sub && u.operands[0] == v)) {
            c.links.push_back(uses[0]);
            v = u.result;
        } else if (u.kind == OpKind::LoopArg) {
            const ir::Loop &m = loop_of_slot(uses[0]);
            if (!accumulator_chain(m, static_cast<size_t>(u.ival)).linear) return c;
            int r = m.results[static_cast<size_t>(u.ival)];
            c.links.push_back(r);
            v = fwd_.ops[r].result;
        } else {
            return c;
        }
    }
}

bool Reverse::nonlinear(const ir::Loop &l) const {
    for (size_t k = 0; k < l.args.size(); ++k)
        if (fwd_.type(fwd_.ops[l.args[k]].result).is_float() && !accumulator_chain(l, k).linear) return true;
    return false;
}

bool Reverse::rewrites(const ir::Loop &l) const {
    for (int i = l.begin; i < l.end; ++i)
        if (fwd_.ops[i].kind == OpKind::Store && contains(spec_.rewritten, base_param(fwd_.ops[i].operands[0])))
            return true;
    return false;
}

bool Reverse::replayed_state(const ir::Loop &l, size_t k) const {
    const ValueId arg = fwd_.ops[l.args[k]].result;
    const ir::Op *replay = nullptr;
    for (int i = l.begin; i <= l.end; ++i)
        for (ValueId o : fwd_.ops[i].operands)
            if (o == arg) {
                if (replay || fwd_.ops[i].kind != OpKind::ReplayAs || fwd_.ops[i].operands[0] != arg) return false;
                replay = &fwd_.ops[i];
            }
    if (!replay) return false;
    return !passes::cone_any(fwd_, replay->operands[1], [&](const ir::Op &op) {
        return op.kind == OpKind::LoopArg && fwd_.type(op.result).is_float() &&
               std::find(l.args.begin(), l.args.end(), fwd_.values[op.result].def_op) != l.args.end();
    });
}

std::vector<ValueId> Reverse::outer_values(const ir::Loop &l) {
    std::vector<ValueId> outer;
    for (int i = l.begin + 1; i < l.end; ++i) {
        // l's own inits get the adjoints of its results after the loop; a nested loop's inits from
        // outside l are outer values like any operand.
        if (std::count(l.args.begin(), l.args.end(), i)) continue;
        for (ValueId v : fwd_.ops[i].operands) {
            if (in_body(l, v)) continue;
            if (differentiated_pointer(v)) shadow(v);
            if (fwd_.type(v).is_float() && !is_constant(v) && std::find(outer.begin(), outer.end(), v) == outer.end())
                outer.push_back(v);
        }
    }
    return outer;
}

bool Reverse::differentiated_pointer(ValueId v) const {
    std::string base = fwd_.type(v).is_ptr ? base_param(v) : "";
    return !base.empty() && (contains(spec_.wrt, base) || contains(spec_.outputs, base));
}

bool Reverse::shadow_needed(ValueId v) const {
    for (int i = 0; i < static_cast<int>(fwd_.ops.size()); ++i) {
        const ir::Op &op = fwd_.ops[i];
        for (size_t k = 0; k < op.operands.size(); ++k) {
            if (op.operands[k] != v) continue;
            if (op.kind != OpKind::ForEnd) return true;
            const ir::Loop &q = loop_ending_at(i + static_cast<int>(op.operands.size()));  // a result per yield
            if (shadow_[fwd_.ops[q.args[k]].result] != ir::kNoValue || shadow_needed(fwd_.ops[q.results[k]].result))
                return true;
        }
    }
    return false;
}

bool Reverse::inert(const ir::Loop &l) const {
    for (int r : l.results)
        if (adj_[fwd_.ops[r].result] != ir::kNoValue) return false;
    for (int i = l.begin; i < l.end; ++i)
        if (is_write(fwd_.ops[i]) && contains(spec_.outputs, base_param(fwd_.ops[i].operands[0]))) return false;
    return true;
}

void Reverse::reverse_loop(const ir::Loop &l) {
    if (inert(l)) return;
    if (nonlinear(l) || rewrites(l)) return reverse_loop_recompute(l);
    const ir::Op &end = fwd_.ops[l.end];
    std::vector<Chain> chains(l.args.size());
    std::vector<ValueId> seed(l.args.size(), ir::kNoValue), floats;
    LoopContext ctx;
    for (size_t k = 0; k < l.args.size(); ++k) {
        ValueId arg = fwd_.ops[l.args[k]].result;
        if (!fwd_.type(arg).is_float()) continue;
        floats.push_back(arg);
        chains[k] = accumulator_chain(l, k);
        ctx.carried_float.insert(arg);
        for (int link : chains[k].links) ctx.carried_float.insert(fwd_.ops[link].result);
        ValueId r = fwd_.ops[l.results[k]].result;
        seed[k] = adj_[r];
        if (seed[k] != ir::kNoValue) accumulate(fwd_.ops[l.args[k]].operands[0], seed[k]);  // the init
    }
    std::vector<ValueId> outer = outer_values(l);
    // The accumulators themselves are not recomputed (nor carried): only their chains read them.
    std::set<int> accumulators = body_dependents(l, floats);

    // The reverse loop carries the forward's non-float state, the gradient pointers that mirror
    // carried pointers, then the outer adjoints.
    const ir::Op &begin = fwd_.ops[l.begin];
    b_.loc = begin.loc;
    std::vector<ValueId> saved_primal = primal_, saved_shadow = shadow_;
    std::vector<size_t> mirrored;
    std::vector<ValueId> shadow_inits;
    for (size_t k = 0; k < l.args.size(); ++k) {
        const ir::Op &arg = fwd_.ops[l.args[k]];
        if (!differentiated_pointer(arg.result)) continue;
        mirrored.push_back(k);
        shadow_inits.push_back(shadow(arg.operands[0]));
    }
    std::vector<ValueId> outer_zeros = zeros_like(outer);
    ValueId iv = b_.for_begin(P(begin.operands[0]), P(begin.operands[1]), P(begin.operands[2]), begin.name);
    bwd_.values[iv].name = fwd_.values[begin.result].name;
    primal_[begin.result] = iv;
    int index = 0;
    std::vector<size_t> state;
    for (size_t k = 0; k < l.args.size(); ++k) {
        const ir::Op &arg = fwd_.ops[l.args[k]];
        if (fwd_.type(arg.result).is_float()) continue;
        ValueId a = b_.loop_arg(P(arg.operands[0]), index++);
        bwd_.values[a].name = fwd_.values[arg.result].name;
        primal_[arg.result] = a;
        state.push_back(k);
    }
    for (size_t j = 0; j < mirrored.size(); ++j) {
        ValueId a = b_.loop_arg(shadow_inits[j], index++);
        ValueId fwd_arg = fwd_.ops[l.args[mirrored[j]]].result;
        bwd_.values[a].name = shadow_name(fwd_.values[fwd_arg].name);
        shadow_[fwd_arg] = a;
    }
    std::vector<ValueId> acc_args;
    carry_outer_adjoints(outer, outer_zeros, index, ctx, acc_args);
    replay_range(body_start(l), l.end, [&](int i) { return !accumulators.count(i); });
    contexts_.push_back(ctx);
    std::vector<ValueId> saved_adj = adj_;
    for (size_t k = 0; k < l.args.size(); ++k) seed_chain(l, k, chains[k], seed[k]);
    sweep_range(body_start(l), l.end);
    std::vector<ValueId> yields;
    for (size_t k : state) yields.push_back(P(end.operands[k]));
    for (size_t k : mirrored) yields.push_back(shadow(end.operands[k]));
    for (ValueId o : outer) yields.push_back(contexts_.back().outer.at(o));
    contexts_.pop_back();
    adj_ = saved_adj;
    b_.loc = end.loc;
    b_.for_end(yields);
    std::vector<ValueId> results;
    for (size_t k = 0; k < yields.size(); ++k)
        results.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(yields[k])));
    primal_ = saved_primal;  // body values are not visible after the loop
    shadow_ = saved_shadow;
    for (size_t j = 0; j < outer.size(); ++j) {
        ValueId r = results[state.size() + mirrored.size() + j];
        bwd_.values[r].name = bwd_.values[acc_args[j]].name;
        accumulate(outer[j], r);
    }
}

void Reverse::seed_chain(const ir::Loop &l, size_t k, const Chain &c, ValueId seed) {
    if (seed == ir::kNoValue) return;
    ValueId v = fwd_.ops[l.args[k]].result;
    for (int link : c.links) {
        const ir::Op &u = fwd_.ops[link];
        if (u.kind == OpKind::LoopResult) {
            adj_[u.result] = seed;
        } else {
            ValueId term = u.operands[0] == v ? u.operands[1] : u.operands[0];
            accumulate(term, u.kind == OpKind::Sub ? b_.unary(OpKind::Neg, seed) : seed);
        }
        v = u.result;
    }
}

ValueId Reverse::zero_like(ValueId fwd_value) {
    const ir::Type &t = fwd_.type(fwd_value);
    return b_.broadcast(b_.constant(0, t.elem), t.shape);
}

std::vector<ValueId> Reverse::zeros_like(const std::vector<ValueId> &fwd_values) {
    std::vector<ValueId> out;
    for (ValueId v : fwd_values) out.push_back(zero_like(v));
    return out;
}

void Reverse::carry_outer_adjoints(const std::vector<ValueId> &outer, const std::vector<ValueId> &zeros, int &index,
                                   LoopContext &ctx, std::vector<ValueId> &args) {
    for (size_t i = 0; i < outer.size(); ++i) {
        ValueId o = outer[i];
        ValueId a = b_.loop_arg(zeros[i], index++);
        if (!fwd_.values[o].name.empty()) bwd_.values[a].name = "d" + fwd_.values[o].name;
        ctx.outer[o] = a;
        args.push_back(a);
    }
}

}  // namespace tad::ad::detail
