// Reversal of loops with nonlinear float state, last iteration first: each iteration's state is
// recovered by rerunning the forward loop up to it (recompute) or read back from the tape.
#include <algorithm>
#include <set>

#include "ad/reverse_internal.h"
#include "ad/tape.h"
#include "passes/host_expr.h"
#include "passes/passes.h"

namespace tad::ad::detail {

void Reverse::reverse_loop_recompute(const ir::Loop &l) {
    Recompute r(l);
    classify_carried(r);
    r.outer = outer_values(l);
    r.saved_primal = primal_;
    r.saved_shadow = shadow_;
    r.saved_adj = adj_;
    for (size_t k : r.mirrored) r.mirror_inits.push_back(shadow(fwd_.ops[l.args[k]].operands[0]));
    open_reverse_loop(r);
    recover_state(r);
    std::vector<ValueId> yields = sweep_iteration(r);
    close_reverse_loop(r, yields);
}

// The nonlinear float state is what the reverse loop recovers and carries adjoints of; the
// accumulators among the carried floats need neither (their adjoints are loop-invariant).
void Reverse::classify_carried(Recompute &r) const {
    const ir::Loop &l = r.l;
    r.chains.resize(l.args.size());
    for (size_t k = 0; k < l.args.size(); ++k) {
        ValueId arg = fwd_.ops[l.args[k]].result;
        if (!fwd_.type(arg).is_float()) {
            if (differentiated_pointer(arg)) r.mirrored.push_back(k);
            continue;
        }
        r.chains[k] = accumulator_chain(l, k);
        if (!r.chains[k].linear) {
            r.floats.push_back(k);
            continue;
        }
        r.accumulators.push_back(k);
        r.accumulator_args.push_back(arg);
    }
}

void Reverse::open_reverse_loop(Recompute &r) {
    const ir::Loop &l = r.l;
    const ir::Op &begin = fwd_.ops[l.begin];
    b_.loc = begin.loc;
    r.lo = P(begin.operands[0]);
    r.step = P(begin.operands[2]);
    r.one = b_.constant(1, bwd_.type(r.lo).elem);
    r.trips = trip_count(b_, r.lo, P(begin.operands[1]), r.step);
    if (bwd_.values[r.trips].name.empty() && bwd_.def(r.trips).kind != OpKind::Param)
        bwd_.values[r.trips].name = "trips";

    // The loop_args' inits come before the loop.
    std::vector<ValueId> outer_zeros = zeros_like(r.outer), seeds;
    for (size_t k : r.floats) {
        ValueId res = fwd_.ops[l.results[k]].result;
        seeds.push_back(r.saved_adj[res] != ir::kNoValue ? r.saved_adj[res] : zero_like(res));
    }
    ValueId back = b_.for_begin(b_.constant(0, bwd_.type(r.lo).elem), r.trips, r.one, "range");
    bwd_.values[back].name = "back";
    int index = 0;
    for (size_t f = 0; f < r.floats.size(); ++f) {
        ValueId arg = fwd_.ops[l.args[r.floats[f]]].result;
        ValueId a = b_.loop_arg(seeds[f], index++);
        bwd_.values[a].name = "d" + fwd_.values[arg].name;
        r.state_adj.push_back(a);
    }
    for (size_t k : r.accumulators) {
        r.ctx.carried_float.insert(fwd_.ops[l.args[k]].result);
        for (int link : r.chains[k].links) r.ctx.carried_float.insert(fwd_.ops[link].result);
    }
    carry_outer_adjoints(r.outer, outer_zeros, index, r.ctx, r.acc_args);
    // The iteration this pass reverses.
    r.k_it = int_op(b_, OpKind::Sub, int_op(b_, OpKind::Sub, r.trips, r.one), back);
    r.i_k = int_op(b_, OpKind::Add, r.lo, int_op(b_, OpKind::Mul, r.k_it, r.step));
    bwd_.values[r.i_k].name = fwd_.values[begin.result].name;
}

// With a tape the rerun keeps only counters and pointers (never the float state, see
// choose_taped_loops).
void Reverse::recover_state(Recompute &r) {
    const ir::Loop &l = r.l;
    auto taped = taped_.find(l.begin);
    std::vector<size_t> rerun;
    for (size_t k = 0; k < l.args.size(); ++k) {
        bool is_float = fwd_.type(fwd_.ops[l.args[k]].result).is_float();
        if (!is_float || (taped == taped_.end() && !r.chains[k].linear && !replayed_state(l, k))) rerun.push_back(k);
    }
    r.state.assign(l.args.size(), ir::kNoValue);
    if ((!rerun.empty() || !r.mirrored.empty()) && !advance_to_iteration(r, rerun)) rerun_to_iteration(r, rerun);
    if (taped != taped_.end()) read_tape(r, taped->second);
}

// for j in range(lo, i_k, step): the forward loop's body, as far as the rerun state needs it.
void Reverse::rerun_to_iteration(Recompute &r, const std::vector<size_t> &rerun) {
    const ir::Loop &l = r.l;
    const ir::Op &begin = fwd_.ops[l.begin], &end = fwd_.ops[l.end];
    std::vector<ValueId> shadow_outer = shadow_;
    b_.loc = begin.loc;  // LoopPolicy::Auto finds the forward loop of a rerun that survives by it
    ValueId j = b_.for_begin(r.lo, r.i_k, r.step, begin.name);
    bwd_.ops[static_cast<size_t>(bwd_.values[j].def_op)].ival2 = 1;
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
    for (size_t m = 0; m < r.mirrored.size(); ++m) {
        ValueId fwd_arg = fwd_.ops[l.args[r.mirrored[m]]].result;
        ValueId a = b_.loop_arg(r.mirror_inits[m], inner++);
        bwd_.values[a].name = shadow_name(fwd_.values[fwd_arg].name);
        shadow_[fwd_arg] = a;
    }
    std::set<int> needed = body_cone(l, roots);
    replay_range(body_start(l), l.end, [&](int i) { return needed.count(i) > 0; });
    std::vector<ValueId> yields;
    for (size_t k : rerun) yields.push_back(P(end.operands[k]));
    for (size_t k : r.mirrored) yields.push_back(shadow(end.operands[k]));
    b_.for_end(yields);
    for (size_t y = 0; y < yields.size(); ++y) {
        ValueId v = b_.loop_result(static_cast<int>(y), bwd_.type(yields[y]));
        if (y < rerun.size())
            r.state[rerun[y]] = v;
        else
            r.mirror_state.push_back(v);
    }
    shadow_ = shadow_outer;
}

bool Reverse::advance_to_iteration(Recompute &r, const std::vector<size_t> &rerun) {
    const ir::Loop &l = r.l;
    std::vector<size_t> all = rerun;
    all.insert(all.end(), r.mirrored.begin(), r.mirrored.end());
    for (size_t k : all)
        if (fwd_.type(fwd_.ops[l.args[k]].result).is_float() || passes::advance_of(fwd_, l, k) == ir::kNoValue)
            return false;
    b_.loc = fwd_.ops[l.begin].loc;
    for (size_t k : rerun) r.state[k] = advanced(r, P(fwd_.ops[l.args[k]].operands[0]), k);
    for (size_t m = 0; m < r.mirrored.size(); ++m)
        r.mirror_state.push_back(advanced(r, r.mirror_inits[m], r.mirrored[m]));
    return true;
}

// Loop-invariant value v of l's body (an advance's amount) before the loop: its replay where the
// forward computes it before l, else a copy of its constant or a broadcast of such a value.
ValueId Reverse::before_loop(const ir::Loop &l, ValueId v) {
    const ir::Op &op = fwd_.def(v);
    if (fwd_.values[v].def_op < l.begin) return P(v);
    if (op.kind == OpKind::Const) return b_.append(op, fwd_.type(v));
    return b_.broadcast(before_loop(l, op.operands[0]), fwd_.type(v).shape);
}

// Carried value k at iteration k_it from `init` (its value, or its mirror's): init + k_it · amount,
// the amount as the forward computes it before the loop (or broadcast here, as the body does).
ValueId Reverse::advanced(const Recompute &r, ValueId init, size_t k) {
    return passes::advanced_by(b_, init, before_loop(r.l, passes::advance_of(fwd_, r.l, k)), r.k_it);
}

void Reverse::read_tape(Recompute &r, const TapeRegion &region) {
    const ir::Loop &l = r.l;
    for (size_t s = 0; s < region.state.size(); ++s) {
        const ir::Type &t = fwd_.type(region.state[s]);
        ValueId ptrs = tape_pointers(b_, region.base, r.k_it, region.slot, region.offsets[s], t);
        ValueId v = b_.cast(b_.load(ptrs, ir::kNoValue, ir::kNoValue), t.elem);
        bwd_.values[v].name = fwd_.values[region.state[s]].name;
        for (size_t k = 0; k < l.args.size(); ++k)
            if (fwd_.ops[l.args[k]].result == region.state[s]) r.state[k] = v;
    }
}

std::vector<ValueId> Reverse::sweep_iteration(Recompute &r) {
    const ir::Loop &l = r.l;
    const ir::Op &end = fwd_.ops[l.end];
    const int body = body_start(l);
    primal_[fwd_.ops[l.begin].result] = r.i_k;
    for (size_t k = 0; k < l.args.size(); ++k) primal_[fwd_.ops[l.args[k]].result] = r.state[k];
    for (size_t m = 0; m < r.mirrored.size(); ++m) shadow_[fwd_.ops[l.args[r.mirrored[m]]].result] = r.mirror_state[m];
    std::set<int> unused = body_dependents(l, r.accumulator_args);
    replay_range(body, l.end, [&](int i) { return !unused.count(i); });
    contexts_.push_back(r.ctx);
    for (size_t f = 0; f < r.floats.size(); ++f) accumulate(end.operands[r.floats[f]], r.state_adj[f]);
    for (size_t k : r.accumulators) seed_chain(l, k, r.chains[k], r.saved_adj[fwd_.ops[l.results[k]].result]);
    sweep_range(body, l.end);
    std::vector<ValueId> yields;
    for (size_t k : r.floats) {
        ValueId arg = fwd_.ops[l.args[k]].result;
        const ir::Type &t = fwd_.type(arg);
        yields.push_back(adj_[arg] != ir::kNoValue ? adj_[arg] : b_.broadcast(b_.constant(0, t.elem), t.shape));
    }
    for (ValueId o : r.outer) yields.push_back(contexts_.back().outer.at(o));
    contexts_.pop_back();
    return yields;
}

void Reverse::close_reverse_loop(Recompute &r, const std::vector<ValueId> &yields) {
    const ir::Loop &l = r.l;
    b_.loc = fwd_.ops[l.end].loc;
    b_.for_end(yields);
    std::vector<ValueId> results;
    for (size_t k = 0; k < yields.size(); ++k)
        results.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(yields[k])));
    primal_ = r.saved_primal;
    shadow_ = r.saved_shadow;
    adj_ = r.saved_adj;
    for (size_t f = 0; f < r.floats.size(); ++f) {
        bwd_.values[results[f]].name = bwd_.values[r.state_adj[f]].name;
        accumulate(fwd_.ops[l.args[r.floats[f]]].operands[0], results[f]);  // the inits
    }
    for (size_t k : r.accumulators) {
        ValueId seed = r.saved_adj[fwd_.ops[l.results[k]].result];
        if (seed != ir::kNoValue) accumulate(fwd_.ops[l.args[k]].operands[0], seed);
    }
    for (size_t o = 0; o < r.outer.size(); ++o) {
        ValueId res = results[r.floats.size() + o];
        bwd_.values[res].name = bwd_.values[r.acc_args[o]].name;
        accumulate(r.outer[o], res);
    }
}

// Whether the host computes loop l's trip count: its bounds and step are expressions of integer
// parameters and constexprs (passes::host_expr), the same in every program.
static bool host_trips(const ir::Function &f, const ir::Loop &l) {
    std::string why;
    for (ValueId v : f.ops[static_cast<size_t>(l.begin)].operands)
        if (!passes::host_expr(f, v, &why)) return false;
    return true;
}

void Reverse::choose_taped_loops() {
    if (spec_.loops == LoopPolicy::Recompute) return;
    for (const ir::Loop &l : loops_) {
        if (l.parent != -1 || !nonlinear(l)) continue;
        if (spec_.loops == LoopPolicy::Auto &&
            (!host_trips(fwd_, l) || !std::count(spec_.taped.begin(), spec_.taped.end(), l.begin)))
            continue;
        const ir::Op &end = fwd_.ops[l.end];
        TapeRegion region;
        std::vector<ValueId> roots;
        for (size_t k = 0; k < l.args.size(); ++k) {
            ValueId arg = fwd_.ops[l.args[k]].result;
            if (!fwd_.type(arg).is_float())
                roots.push_back(end.operands[k]);
            else if (!accumulator_chain(l, k).linear && !replayed_state(l, k))
                region.state.push_back(arg);
        }
        if (region.state.empty()) continue;
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
