// Reversal of loops with nonlinear float state, last iteration first: each iteration's state is
// recovered by rerunning the forward loop up to it (recompute) or read back from the tape.
#include <set>

#include "ad/reverse_internal.h"
#include "ad/tape.h"

namespace tad::ad::detail {

void Reverse::reverse_loop_recompute(const ir::Loop &l) {
    const ir::Op &begin = fwd_.ops[l.begin], &end = fwd_.ops[l.end];
    // The nonlinear float state is what the reverse loop recovers and carries adjoints of; the
    // accumulators among the carried floats need neither (their adjoints are loop-invariant).
    std::vector<size_t> floats, accumulators, mirrored;
    std::vector<Chain> chains(l.args.size());
    std::vector<ValueId> accumulator_args;
    for (size_t k = 0; k < l.args.size(); ++k) {
        ValueId arg = fwd_.ops[l.args[k]].result;
        if (!fwd_.type(arg).is_float()) {
            if (differentiated_pointer(arg)) mirrored.push_back(k);
            continue;
        }
        chains[k] = accumulator_chain(l, k);
        if (!chains[k].linear) {
            floats.push_back(k);
            continue;
        }
        accumulators.push_back(k);
        accumulator_args.push_back(arg);
    }
    std::vector<ValueId> outer = outer_values(l);
    std::vector<ValueId> saved_primal = primal_, saved_shadow = shadow_, saved_adj = adj_;
    std::vector<ValueId> mirror_inits;
    for (size_t k : mirrored) mirror_inits.push_back(shadow(fwd_.ops[l.args[k]].operands[0]));
    b_.loc = begin.loc;
    ValueId lo = P(begin.operands[0]), step = P(begin.operands[2]);
    ValueId one = b_.constant(1, bwd_.type(lo).elem);
    ValueId n = trip_count(b_, lo, P(begin.operands[1]), step);
    if (bwd_.values[n].name.empty() && bwd_.def(n).kind != OpKind::Param) bwd_.values[n].name = "trips";

    // The loop_args' inits come before the loop.
    std::vector<ValueId> seeds, outer_zeros = zeros_like(outer);
    for (size_t k : floats) {
        ValueId r = fwd_.ops[l.results[k]].result;
        seeds.push_back(saved_adj[r] != ir::kNoValue ? saved_adj[r] : zero_like(r));
    }
    ValueId kk = b_.for_begin(b_.constant(0, bwd_.type(lo).elem), n, one, "range");
    bwd_.values[kk].name = "back";
    int index = 0;
    std::vector<ValueId> state_adj, acc_args;
    for (size_t f = 0; f < floats.size(); ++f) {
        ValueId arg = fwd_.ops[l.args[floats[f]]].result;
        ValueId a = b_.loop_arg(seeds[f], index++);
        bwd_.values[a].name = "d" + fwd_.values[arg].name;
        state_adj.push_back(a);
    }
    LoopContext ctx;
    for (size_t k : accumulators) {
        ctx.carried_float.insert(fwd_.ops[l.args[k]].result);
        for (int link : chains[k].links) ctx.carried_float.insert(fwd_.ops[link].result);
    }
    carry_outer_adjoints(outer, outer_zeros, index, ctx, acc_args);
    // The iteration this pass reverses.
    ValueId k_it = int_op(b_, OpKind::Sub, int_op(b_, OpKind::Sub, n, one), kk);
    ValueId i_k = int_op(b_, OpKind::Add, lo, int_op(b_, OpKind::Mul, k_it, step));
    bwd_.values[i_k].name = fwd_.values[begin.result].name;
    const int body = body_start(l);

    // Its state: from the tape, or by rerunning the forward loop up to it. With a tape the rerun
    // keeps only counters and pointers (never the float state, see choose_taped_loops).
    auto taped = taped_.find(l.begin);
    std::vector<size_t> rerun;
    for (size_t k = 0; k < l.args.size(); ++k) {
        bool is_float = fwd_.type(fwd_.ops[l.args[k]].result).is_float();
        if (!is_float || (taped == taped_.end() && !chains[k].linear)) rerun.push_back(k);
    }
    std::vector<ValueId> state(l.args.size(), ir::kNoValue), mirror_state;
    std::vector<ValueId> shadow_outer = shadow_;
    if (!rerun.empty() || !mirrored.empty()) {
        ValueId j = b_.for_begin(lo, i_k, step, begin.name);
        bwd_.values[j].name = fwd_.values[begin.result].name;
        primal_[begin.result] = j;
        int inner = 0;
        std::vector<ValueId> roots;
        for (size_t k : rerun) {
            const ir::Op &arg = fwd_.ops[l.args[k]];
            ValueId a = b_.loop_arg(P(arg.operands[0]), inner++);
            bwd_.values[a].name = fwd_.values[arg.result].name;
            primal_[arg.result] = a;
            roots.push_back(end.operands[k]);
        }
        for (size_t m = 0; m < mirrored.size(); ++m) {
            ValueId fwd_arg = fwd_.ops[l.args[mirrored[m]]].result;
            ValueId a = b_.loop_arg(mirror_inits[m], inner++);
            bwd_.values[a].name = shadow_name(fwd_.values[fwd_arg].name);
            shadow_[fwd_arg] = a;
        }
        std::set<int> needed = body_cone(l, roots);
        replay_range(body, l.end, [&](int i) { return needed.count(i) > 0; });
        std::vector<ValueId> inner_yields;
        for (size_t k : rerun) inner_yields.push_back(P(end.operands[k]));
        for (size_t k : mirrored) inner_yields.push_back(shadow(end.operands[k]));
        b_.for_end(inner_yields);
        for (size_t r = 0; r < inner_yields.size(); ++r) {
            ValueId v = b_.loop_result(static_cast<int>(r), bwd_.type(inner_yields[r]));
            if (r < rerun.size())
                state[rerun[r]] = v;
            else
                mirror_state.push_back(v);
        }
        shadow_ = shadow_outer;
    }
    if (taped != taped_.end()) {
        const TapeRegion &region = taped->second;
        for (size_t s = 0; s < region.state.size(); ++s) {
            const ir::Type &t = fwd_.type(region.state[s]);
            ValueId ptrs = tape_pointers(b_, region.base, k_it, region.slot, region.offsets[s], t);
            ValueId v = b_.cast(b_.load(ptrs, ir::kNoValue, ir::kNoValue), t.elem);
            bwd_.values[v].name = fwd_.values[region.state[s]].name;
            for (size_t k = 0; k < l.args.size(); ++k)
                if (fwd_.ops[l.args[k]].result == region.state[s]) state[k] = v;
        }
    }
    // The body at iteration k, from the recovered state.
    primal_[begin.result] = i_k;
    for (size_t k = 0; k < l.args.size(); ++k) primal_[fwd_.ops[l.args[k]].result] = state[k];
    for (size_t m = 0; m < mirrored.size(); ++m) shadow_[fwd_.ops[l.args[mirrored[m]]].result] = mirror_state[m];
    std::set<int> unused = body_dependents(l, accumulator_args);
    replay_range(body, l.end, [&](int i) { return !unused.count(i); });
    contexts_.push_back(ctx);
    for (size_t f = 0; f < floats.size(); ++f) accumulate(end.operands[floats[f]], state_adj[f]);
    for (size_t k : accumulators) seed_chain(l, k, chains[k], saved_adj[fwd_.ops[l.results[k]].result]);
    sweep_range(body, l.end);
    std::vector<ValueId> yields;
    for (size_t f = 0; f < floats.size(); ++f) {
        ValueId arg = fwd_.ops[l.args[floats[f]]].result;
        const ir::Type &t = fwd_.type(arg);
        yields.push_back(adj_[arg] != ir::kNoValue ? adj_[arg] : b_.broadcast(b_.constant(0, t.elem), t.shape));
    }
    for (ValueId o : outer) yields.push_back(contexts_.back().outer.at(o));
    contexts_.pop_back();
    b_.loc = end.loc;
    b_.for_end(yields);
    std::vector<ValueId> results;
    for (size_t k = 0; k < yields.size(); ++k)
        results.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(yields[k])));
    primal_ = saved_primal;
    shadow_ = saved_shadow;
    adj_ = saved_adj;
    for (size_t f = 0; f < floats.size(); ++f) {
        bwd_.values[results[f]].name = bwd_.values[state_adj[f]].name;
        accumulate(fwd_.ops[l.args[floats[f]]].operands[0], results[f]);  // the inits
    }
    for (size_t k : accumulators) {
        ValueId seed = saved_adj[fwd_.ops[l.results[k]].result];
        if (seed != ir::kNoValue) accumulate(fwd_.ops[l.args[k]].operands[0], seed);
    }
    for (size_t o = 0; o < outer.size(); ++o) {
        ValueId r = results[floats.size() + o];
        bwd_.values[r].name = bwd_.values[acc_args[o]].name;
        accumulate(outer[o], r);
    }
}

void Reverse::choose_taped_loops() {
    if (spec_.loops != LoopPolicy::Tape) return;
    for (const ir::Loop &l : loops_) {
        if (l.parent != -1 || !nonlinear(l)) continue;
        const ir::Op &end = fwd_.ops[l.end];
        TapeRegion region;
        std::vector<ValueId> roots;
        for (size_t k = 0; k < l.args.size(); ++k) {
            ValueId arg = fwd_.ops[l.args[k]].result;
            if (!fwd_.type(arg).is_float())
                roots.push_back(end.operands[k]);
            else if (!accumulator_chain(l, k).linear)
                region.state.push_back(arg);
        }
        std::set<int> cone = body_cone(l, roots);
        bool independent = true;
        for (ValueId s : region.state) independent = independent && !cone.count(fwd_.values[s].def_op);
        if (!independent) continue;
        taped_[l.begin] = region;
    }
}

void Reverse::begin_tape_region(TapeRegion &region, const ir::Op &begin) {
    b_.loc = begin.loc;
    region.lo = P(begin.operands[0]);
    region.step = P(begin.operands[2]);
    ValueId n = trip_count(b_, region.lo, P(begin.operands[1]), region.step);
    region.slot = b_.constant(0, ir::DType::I32);
    for (ValueId s : region.state) {
        region.offsets.push_back(region.slot);
        region.slot = int_op(b_, OpKind::Add, region.slot, numel_of(b_, fwd_.type(s)));
    }
    if (tape_cursor_ == ir::kNoValue)
        tape_cursor_ = b_.binary(OpKind::Mul, program_index(b_, max_program_axis(fwd_)),
                                 b_.cast(tape_stride_param_, ir::DType::I64));
    region.base = b_.add_ptr(tape_param_, tape_cursor_);
    bwd_.values[region.base].name = "tape";
    ValueId used = b_.cast(int_op(b_, OpKind::Mul, b_.cast(n, ir::DType::I32), region.slot), ir::DType::I64);
    tape_cursor_ = b_.binary(OpKind::Add, tape_cursor_, used);
}

void Reverse::record_tape(const TapeRegion &region, const ir::Op &begin) {
    b_.loc = begin.loc;
    ValueId k = int_op(b_, OpKind::Div, int_op(b_, OpKind::Sub, P(begin.result), region.lo), region.step);
    for (size_t s = 0; s < region.state.size(); ++s) {
        const ir::Type &t = fwd_.type(region.state[s]);
        ValueId ptrs = tape_pointers(b_, region.base, k, region.slot, region.offsets[s], t);
        b_.store(ptrs, b_.cast(P(region.state[s]), ir::DType::F32), ir::kNoValue);
    }
}

}  // namespace tad::ad::detail
