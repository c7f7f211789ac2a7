// The backward's replay of forward ops, and the dependency sets that say which of them a replay
// needs. Loops are replayed as loops, nested ones included.
#include "ad/reverse_internal.h"

namespace tad::ad::detail {

void Reverse::replay_range(int from, int to, const std::function<bool(int)> &keep) {
    for (int i = from; i < to; ++i) {
        const ir::Op &op = fwd_.ops[i];
        if (op.kind == OpKind::ForBegin) {
            const ir::Loop &l = loop_beginning_at(i);
            if (keep(i)) replay_loop(l, keep);
            i = last_op(l);
            continue;
        }
        if (op.kind == OpKind::Param || is_write(op) || !keep(i)) continue;
        replay_op(op);
    }
}

void Reverse::replay_loop(const ir::Loop &l, const std::function<bool(int)> &keep) {
    const ir::Op &begin = fwd_.ops[l.begin], &end = fwd_.ops[l.end];
    std::vector<size_t> kept, mirrored;
    for (size_t k = 0; k < l.args.size(); ++k) {
        if (!keep(l.args[k])) continue;
        kept.push_back(k);
        if (differentiated_pointer(fwd_.ops[l.args[k]].result) && shadow_needed(fwd_.ops[l.results[k]].result))
            mirrored.push_back(k);
    }
    std::vector<ValueId> mirror_inits;
    for (size_t k : mirrored) mirror_inits.push_back(shadow(fwd_.ops[l.args[k]].operands[0]));
    auto taped = taped_.find(l.begin);
    if (taped != taped_.end()) begin_tape_region(taped->second, begin);
    replay_op(begin);
    int index = 0;
    for (size_t k : kept) {
        ir::Op arg = fwd_.ops[l.args[k]];
        arg.ival = index++;
        replay_op(arg);
    }
    std::vector<ValueId> saved_shadow = shadow_, mirror_args;
    for (size_t m = 0; m < mirrored.size(); ++m) {
        ValueId fwd_arg = fwd_.ops[l.args[mirrored[m]]].result;
        ValueId a = b_.loop_arg(mirror_inits[m], index++);
        bwd_.values[a].name = shadow_name(fwd_.values[fwd_arg].name);
        shadow_[fwd_arg] = a;
        mirror_args.push_back(a);
    }
    if (taped != taped_.end()) record_tape(taped->second, begin);
    replay_range(body_start(l), l.end, keep);
    std::vector<ValueId> yields;
    for (size_t k : kept) yields.push_back(P(end.operands[k]));
    for (size_t k : mirrored) yields.push_back(shadow(end.operands[k]));
    b_.loc = end.loc;
    b_.for_end(yields);
    index = 0;
    for (size_t k : kept) {
        ir::Op result = fwd_.ops[l.results[k]];
        result.ival = index++;
        replay_op(result);
    }
    // Shadows built in the body are not visible after the loop.
    shadow_ = saved_shadow;
    for (size_t m = 0; m < mirrored.size(); ++m) {
        ValueId r = b_.loop_result(index++, bwd_.type(mirror_args[m]));
        bwd_.values[r].name = bwd_.values[mirror_args[m]].name;
        shadow_[fwd_.ops[l.results[mirrored[m]]].result] = r;
    }
}

std::set<int> Reverse::body_cone(const ir::Loop &l, const std::vector<ValueId> &roots) const {
    std::set<int> ops;
    std::vector<ValueId> work = roots;
    while (!work.empty()) {
        ValueId v = work.back();
        work.pop_back();
        if (!in_body(l, v)) continue;
        int d = fwd_.values[v].def_op;
        if (!ops.insert(d).second) continue;
        const ir::Op &op = fwd_.ops[d];
        for (ValueId o : op.operands) work.push_back(o);
        // The loops around d inside l run it: their bounds are needed.
        for (const ir::Loop &m : loops_)
            if (m.begin > l.begin && m.end < l.end && m.begin <= d && d <= last_op(m) && ops.insert(m.begin).second) {
                ops.insert(m.end);
                for (ValueId o : fwd_.ops[m.begin].operands) work.push_back(o);
            }
        if (op.kind != OpKind::LoopArg && op.kind != OpKind::LoopResult) continue;
        const ir::Loop &m = loop_of_slot(d);
        if (&m == &l) continue;  // l's own state: the caller's
        // One carried value of a nested loop: its loop_arg, loop_result, init and yield.
        size_t k = static_cast<size_t>(op.ival);
        ops.insert(m.results[k]);
        work.push_back(fwd_.ops[m.args[k]].result);
        work.push_back(fwd_.ops[m.end].operands[k]);
    }
    return ops;
}

std::set<int> Reverse::body_dependents(const ir::Loop &l, const std::vector<ValueId> &roots) const {
    std::vector<bool> dep(fwd_.values.size(), false);
    std::set<int> ops;
    for (ValueId r : roots) {
        dep[r] = true;
        if (in_body(l, r)) ops.insert(fwd_.values[r].def_op);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = l.begin + 1; i < l.end; ++i) {
            const ir::Op &op = fwd_.ops[i];
            if (op.result == ir::kNoValue || dep[op.result]) continue;
            bool d = false;
            for (ValueId o : op.operands) d = d || dep[o];
            if (op.kind == OpKind::LoopResult) d = dep[fwd_.ops[loop_of_slot(i).args[op.ival]].result];
            if (op.kind == OpKind::LoopArg) {  // through the init, or through the yield of the previous iteration
                const ir::Loop &m = loop_of_slot(i);
                d = d || (&m != &l && dep[fwd_.ops[m.end].operands[op.ival]]);
            }
            if (!d) continue;
            dep[op.result] = true;
            ops.insert(i);
            changed = true;
        }
    }
    return ops;
}

}  // namespace tad::ad::detail
