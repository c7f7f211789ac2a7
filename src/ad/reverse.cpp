#include "ad/reverse.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "ad/rules.h"
#include "support/error.h"

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

std::string shadow_name(const std::string &primal) {
    bool upper = !primal.empty() && std::isupper(static_cast<unsigned char>(primal[0]));
    return (upper ? "D" : "d") + primal;
}

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) { return std::find(v.begin(), v.end(), s) != v.end(); }

class Reverse {
public:
    Reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan)
        : fwd_(fwd), spec_(spec), plan_(plan), b_(bwd_), primal_(fwd.values.size(), ir::kNoValue),
          shadow_(fwd.values.size(), ir::kNoValue), adj_(fwd.values.size(), ir::kNoValue) {}

    Backward run(const std::string &name) {
        bwd_.name = name;
        bwd_.constexprs = fwd_.constexprs;
        bwd_.specialized = fwd_.specialized;
        bwd_.source_path = fwd_.source_path;
        for (const ir::Op &op : fwd_.ops)
            if (op.kind == OpKind::AtomicAdd)
                fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) +
                                              ": unsupported construct 'tl.atomic_add' in a forward kernel: not differentiable yet");
        loops_ = ir::loops(fwd_);
        declare_params();
        replay();
        sweep();
        Backward out;
        out.fn = passes::dce(passes::cse(bwd_));
        out.fn = passes::drop_unused_params(out.fn);
        for (const ir::Param &p : out.fn.params) {
            auto it = shadow_of_.find(p.name);
            out.origins.push_back(it == shadow_of_.end() ? ParamOrigin{ParamOrigin::Primal, p.name}
                                                         : ParamOrigin{ParamOrigin::Shadow, it->second});
        }
        for (const auto &[param, w] : plan_)
            if (read_.count(param)) out.writes[param] = w;
        std::string problem = ir::verify(out.fn);
        if (!problem.empty()) fail(TAD_ERR_INTERNAL, "backward of '" + fwd_.name + "' is invalid IR: " + problem);
        return out;
    }

private:
    const ir::Function &fwd_;
    const GradSpec &spec_;
    const std::map<std::string, passes::GradWrite> &plan_;
    ir::Function bwd_;
    ir::Builder b_;
    std::vector<ValueId> primal_, shadow_, adj_;
    std::map<std::string, std::string> shadow_of_;  // shadow param name -> primal param name
    std::map<std::string, ValueId> shadow_param_;   // primal param name -> shadow param value
    std::map<std::string, bool> read_;

    bool atomic(const std::string &param) const {
        auto it = plan_.find(param);
        return it == plan_.end() || it->second.kind == passes::GradWrite::Atomic;
    }

    void declare_params() {
        for (const ir::Param &p : fwd_.params) {
            const ir::Type &t = fwd_.type(p.value);
            b_.loc = fwd_.def(p.value).loc;
            primal_[p.value] = b_.param(p.name, p.kind, t);
            bool out = contains(spec_.outputs, p.name), in = contains(spec_.wrt, p.name);
            if (p.kind != ir::ParamKind::Pointer || !(out || in)) continue;
            ir::Type st = t;
            // Atomics accumulate half-precision gradients in a float32 buffer.
            if (in && atomic(p.name) && (t.elem == ir::DType::F16 || t.elem == ir::DType::BF16)) st.elem = ir::DType::F32;
            std::string sname = shadow_name(p.name);
            while (fwd_.param_index(sname) >= 0) sname = "_" + sname;
            shadow_param_[p.name] = b_.param(sname, ir::ParamKind::Pointer, st);
            shadow_of_[sname] = p.name;
        }
    }

    ValueId P(ValueId v) const { return primal_.at(v); }

    void replay() {
        for (const ir::Op &op : fwd_.ops)
            if (op.kind != OpKind::Param && op.kind != OpKind::Store) replay_op(op);
    }

    // Appends a copy of forward `op` reading the current replay values.
    void replay_op(const ir::Op &op) {
        b_.loc = op.loc;
        ir::Op copy = op;
        for (ValueId &v : copy.operands) v = P(v);
        // Masked-off lanes of a load without `other` are undefined; the backward reads them as 0
        // so that they cannot turn reductions over the tile into NaN.
        if (op.kind == OpKind::Load && op.has_mask && !op.has_other) {
            const ir::Type &t = fwd_.type(op.result);
            copy.operands.push_back(b_.broadcast(b_.constant(0, t.elem), t.shape));
            copy.has_other = true;
        }
        if (op.result == ir::kNoValue) {
            b_.append(copy, ir::Type{}, false);
            return;
        }
        ValueId r = b_.append(copy, fwd_.type(op.result));
        bwd_.values[r].name = fwd_.values[op.result].name;
        primal_[op.result] = r;
    }

    // The gradient buffer's pointer that mirrors forward pointer value `v`.
    ValueId shadow(ValueId v) {
        if (shadow_[v] != ir::kNoValue) return shadow_[v];
        const ir::Op &op = fwd_.def(v);
        ValueId r;
        switch (op.kind) {
        case OpKind::Param: r = shadow_param_.at(op.name); break;
        case OpKind::Broadcast: r = b_.broadcast(shadow(op.operands[0]), fwd_.type(v).shape); break;
        case OpKind::ExpandDims: r = b_.expand_dims(shadow(op.operands[0]), op.axis); break;
        case OpKind::AddPtr: r = b_.add_ptr(shadow(op.operands[0]), P(op.operands[1])); break;
        default:
            fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) + ": unsupported construct '" +
                                          ir::op_name(op.kind) + "' computing a differentiated pointer");
        }
        if (!fwd_.values[v].name.empty()) bwd_.values[r].name = shadow_name(fwd_.values[v].name);
        return shadow_[v] = r;
    }

    std::string base_param(ValueId p) const {
        for (;;) {
            const ir::Op &op = fwd_.def(p);
            if (op.kind == OpKind::Param) return op.name;
            if (op.kind != OpKind::Broadcast && op.kind != OpKind::AddPtr && op.kind != OpKind::ExpandDims &&
                op.kind != OpKind::LoopArg)
                return "";
            p = op.operands[0];
        }
    }

    void accumulate(ValueId fwd_value, ValueId contribution) {
        if (!fwd_.type(fwd_value).is_float()) return;
        if (!contexts_.empty()) {
            LoopContext &ctx = contexts_.back();
            auto it = ctx.outer.find(fwd_value);
            if (it != ctx.outer.end()) {  // an adjoint leaving the loop: summed over iterations
                it->second = b_.binary(OpKind::Add, it->second, contribution);
                return;
            }
            if (ctx.carried_float.count(fwd_value)) return;  // an accumulator's adjoint is loop-invariant
        }
        ValueId &a = adj_[fwd_value];
        a = a == ir::kNoValue ? contribution : b_.binary(OpKind::Add, a, contribution);
    }

    // ---- loops ---------------------------------------------------------------------------------
    // While a loop's reverse body is built: the adjoints of values defined outside the loop are
    // accumulated in carried values of the reverse loop.
    struct LoopContext {
        std::map<ValueId, ValueId> outer;  // forward value -> its running adjoint in the body
        std::set<ValueId> carried_float;   // forward loop_arg values of the accumulators
    };
    std::vector<LoopContext> contexts_;
    std::vector<ir::Loop> loops_;

    const ir::Loop &loop_ending_at(int i) const {
        for (const ir::Loop &l : loops_)
            if ((l.results.empty() ? l.end : l.results.back()) == i) return l;
        fail(TAD_ERR_INTERNAL, "reverse: no loop ends at op " + std::to_string(i));
    }

    bool is_constant(ValueId v) const {
        const ir::Op &op = fwd_.def(v);
        return op.kind == OpKind::Const || (op.kind == OpKind::Broadcast && is_constant(op.operands[0]));
    }

    bool in_body(const ir::Loop &l, ValueId v) const {
        int d = fwd_.values[v].def_op;
        return d > l.begin && d < l.end;
    }

    // An accumulator: its loop_arg is used once, by the add (or the subtraction from it) that
    // makes its yield. Returns the op index of that update, -1 when the value is only carried, and
    // kNonlinear for any other update.
    static constexpr int kNonlinear = -2;
    int accumulator_update(const ir::Loop &l, size_t k) const {
        ValueId arg = fwd_.ops[l.args[k]].result, yield = fwd_.ops[l.end].operands[k];
        std::vector<int> uses;
        for (int i = l.begin; i <= l.end; ++i)
            for (ValueId v : fwd_.ops[i].operands)
                if (v == arg) uses.push_back(i);
        if (yield == arg && uses.size() == 1) return -1;
        int yield_uses = 0;
        for (int i = l.begin; i <= l.end; ++i)
            for (ValueId v : fwd_.ops[i].operands) yield_uses += v == yield;
        if (uses.size() == 1 && yield_uses == 1) {
            const ir::Op &u = fwd_.ops[uses[0]];
            bool add = u.kind == OpKind::Add, sub = u.kind == OpKind::Sub && u.operands[0] == arg;
            if ((add || sub) && u.result == yield && !(add && u.operands[0] == arg && u.operands[1] == arg)) return uses[0];
        }
        return kNonlinear;
    }

    // Values from outside the loop whose adjoints the body may produce (constants have none to
    // pass on). Builds the gradient pointers of outer pointers once, before the loop.
    std::vector<ValueId> outer_values(const ir::Loop &l) {
        std::vector<ValueId> outer;
        for (int i = l.begin + 1; i < l.end; ++i)
            for (ValueId v : fwd_.ops[i].operands) {
                if (in_body(l, v) || fwd_.ops[i].kind == OpKind::LoopArg) continue;
                std::string base = fwd_.type(v).is_ptr ? base_param(v) : "";
                if (!base.empty() && (contains(spec_.wrt, base) || contains(spec_.outputs, base))) shadow(v);
                if (fwd_.type(v).is_float() && !is_constant(v) && std::find(outer.begin(), outer.end(), v) == outer.end())
                    outer.push_back(v);
            }
        return outer;
    }

    // Integer scalar arithmetic for loop bounds, skipping the identities (x + 0, x * 1, x // 1,
    // (x + 1) - 1) that unit steps and zero starts would leave in the emitted code.
    ValueId int_op(OpKind k, ValueId a, ValueId b) {
        auto is = [&](ValueId v, double c) {
            const ir::Op &op = bwd_.def(v);
            return op.kind == OpKind::Const && op.name.empty() && op.fval == c;
        };
        if ((k == OpKind::Add || k == OpKind::Sub) && is(b, 0)) return a;
        if (k == OpKind::Add && is(a, 0)) return b;
        if ((k == OpKind::Mul || k == OpKind::Div) && is(b, 1)) return a;
        if (k == OpKind::Mul && is(a, 1)) return b;
        const ir::Op &d = bwd_.def(a);
        if (k == OpKind::Sub && d.kind == OpKind::Add && d.operands[1] == b) return d.operands[0];
        if (k == OpKind::Sub && d.kind == OpKind::Add && is(b, 1) && is(d.operands[1], 1)) return d.operands[0];
        return b_.binary(k, a, b);
    }

    bool differentiated_pointer(ValueId v) const {
        std::string base = fwd_.type(v).is_ptr ? base_param(v) : "";
        return !base.empty() && (contains(spec_.wrt, base) || contains(spec_.outputs, base));
    }

    // Reverses a loop with nonlinear float state (h = a·h + x, an online softmax) by recomputation:
    // the reverse loop visits the iterations last to first; for each it reruns the forward loop up to
    // that iteration to recover the carried state, replays the body there and propagates the state's
    // adjoint one step back. No memory beyond registers; O(T²) body evaluations (the tape policy,
    // O(T) with scratch memory, is the alternative still to come).
    void reverse_loop_recompute(const ir::Loop &l) {
        const ir::Op &begin = fwd_.ops[l.begin], &end = fwd_.ops[l.end];
        std::vector<size_t> floats, mirrored;
        for (size_t k = 0; k < l.args.size(); ++k) {
            ValueId arg = fwd_.ops[l.args[k]].result;
            if (fwd_.type(arg).is_float()) floats.push_back(k);
            else if (differentiated_pointer(arg)) mirrored.push_back(k);
        }
        std::vector<ValueId> outer = outer_values(l);
        std::vector<ValueId> saved_primal = primal_, saved_shadow = shadow_, saved_adj = adj_;
        std::vector<ValueId> mirror_inits;
        for (size_t k : mirrored) mirror_inits.push_back(shadow(fwd_.ops[l.args[k]].operands[0]));
        // Trip count n = ceil((hi - lo) / step), computed once.
        b_.loc = begin.loc;
        ValueId lo = P(begin.operands[0]), hi = P(begin.operands[1]), step = P(begin.operands[2]);
        ValueId one = b_.constant(1, bwd_.type(lo).elem);
        ValueId n = int_op(OpKind::Div, int_op(OpKind::Sub, int_op(OpKind::Add, int_op(OpKind::Sub, hi, lo), step), one), step);
        if (bwd_.values[n].name.empty() && bwd_.def(n).kind != OpKind::Param) bwd_.values[n].name = "trips";

        ValueId kk = b_.for_begin(b_.constant(0, bwd_.type(lo).elem), n, one, "range");
        bwd_.values[kk].name = "back";
        int index = 0;
        std::vector<ValueId> state_adj, acc_args;
        for (size_t k : floats) {
            ValueId arg = fwd_.ops[l.args[k]].result;
            ValueId r = fwd_.ops[l.results[k]].result;
            const ir::Type &t = fwd_.type(arg);
            ValueId seed = saved_adj[r] != ir::kNoValue ? saved_adj[r] : b_.broadcast(b_.constant(0, t.elem), t.shape);
            ValueId a = b_.loop_arg(seed, index++);
            bwd_.values[a].name = "d" + fwd_.values[arg].name;
            state_adj.push_back(a);
        }
        LoopContext ctx;
        for (ValueId o : outer) {
            const ir::Type &t = fwd_.type(o);
            ValueId a = b_.loop_arg(b_.broadcast(b_.constant(0, t.elem), t.shape), index++);
            if (!fwd_.values[o].name.empty()) bwd_.values[a].name = "d" + fwd_.values[o].name;
            ctx.outer[o] = a;
            acc_args.push_back(a);
        }
        // The iteration this pass reverses, and the forward loop rerun up to it.
        ValueId k_it = int_op(OpKind::Sub, int_op(OpKind::Sub, n, one), kk);
        ValueId i_k = int_op(OpKind::Add, lo, int_op(OpKind::Mul, k_it, step));
        bwd_.values[i_k].name = fwd_.values[begin.result].name;
        const int body = l.args.empty() ? l.begin + 1 : l.args.back() + 1;
        ValueId j = b_.for_begin(lo, i_k, step, begin.name);
        bwd_.values[j].name = fwd_.values[begin.result].name;
        primal_[begin.result] = j;
        int inner = 0;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ir::Op &arg = fwd_.ops[l.args[k]];
            ValueId a = b_.loop_arg(P(arg.operands[0]), inner++);
            bwd_.values[a].name = fwd_.values[arg.result].name;
            primal_[arg.result] = a;
        }
        for (size_t m = 0; m < mirrored.size(); ++m) {
            ValueId fwd_arg = fwd_.ops[l.args[mirrored[m]]].result;
            ValueId a = b_.loop_arg(mirror_inits[m], inner++);
            bwd_.values[a].name = shadow_name(fwd_.values[fwd_arg].name);
            shadow_[fwd_arg] = a;
        }
        std::vector<ValueId> shadow_outer = shadow_;
        for (int i = body; i < l.end; ++i)
            if (fwd_.ops[i].kind != OpKind::Store) replay_op(fwd_.ops[i]);
        std::vector<ValueId> inner_yields;
        for (size_t k = 0; k < l.args.size(); ++k) inner_yields.push_back(P(end.operands[k]));
        for (size_t k : mirrored) inner_yields.push_back(shadow(end.operands[k]));
        b_.for_end(inner_yields);
        std::vector<ValueId> state;
        for (size_t k = 0; k < inner_yields.size(); ++k) state.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(inner_yields[k])));
        shadow_ = shadow_outer;
        // The body at iteration k, from the recovered state.
        primal_[begin.result] = i_k;
        for (size_t k = 0; k < l.args.size(); ++k) primal_[fwd_.ops[l.args[k]].result] = state[k];
        for (size_t m = 0; m < mirrored.size(); ++m) shadow_[fwd_.ops[l.args[mirrored[m]]].result] = state[l.args.size() + m];
        for (int i = body; i < l.end; ++i)
            if (fwd_.ops[i].kind != OpKind::Store) replay_op(fwd_.ops[i]);
        contexts_.push_back(ctx);
        for (size_t f = 0; f < floats.size(); ++f) accumulate(end.operands[floats[f]], state_adj[f]);
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
        for (size_t k = 0; k < yields.size(); ++k) results.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(yields[k])));
        primal_ = saved_primal;
        shadow_ = saved_shadow;
        adj_ = saved_adj;
        for (size_t f = 0; f < floats.size(); ++f) {
            bwd_.values[results[f]].name = bwd_.values[state_adj[f]].name;
            accumulate(fwd_.ops[l.args[floats[f]]].operands[0], results[f]);  // the inits
        }
        for (size_t o = 0; o < outer.size(); ++o) {
            ValueId r = results[floats.size() + o];
            bwd_.values[r].name = bwd_.values[acc_args[o]].name;
            accumulate(outer[o], r);
        }
    }

    // Reverses an accumulator loop. Accumulators make the iterations independent of each other's
    // adjoints, so the reverse loop runs in forward order: it recomputes each iteration's body
    // (carrying pointers and counters as the forward does) and propagates the accumulators'
    // loop-invariant adjoints through it.
    void reverse_loop(const ir::Loop &l) {
        for (int i = l.begin + 1; i < l.end; ++i)
            if (fwd_.ops[i].kind == OpKind::ForBegin) {
                const ir::Op &op = fwd_.ops[i];
                fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) +
                                              ": unsupported construct 'nested for loop': reverse mode through nested loops is not supported yet");
            }
        for (size_t k = 0; k < l.args.size(); ++k)
            if (fwd_.type(fwd_.ops[l.args[k]].result).is_float() && accumulator_update(l, k) == kNonlinear)
                return reverse_loop_recompute(l);
        const ir::Op &end = fwd_.ops[l.end];
        std::vector<int> update(l.args.size(), -1);
        std::vector<ValueId> seed(l.args.size(), ir::kNoValue);
        std::set<int> skipped;  // accumulator updates: not recomputed
        LoopContext ctx;
        for (size_t k = 0; k < l.args.size(); ++k) {
            ValueId arg = fwd_.ops[l.args[k]].result;
            if (!fwd_.type(arg).is_float()) continue;
            update[k] = accumulator_update(l, k);
            ctx.carried_float.insert(arg);
            if (update[k] >= 0) skipped.insert(update[k]);
            ValueId r = fwd_.ops[l.results[k]].result;
            seed[k] = adj_[r];
            if (seed[k] != ir::kNoValue) accumulate(fwd_.ops[l.args[k]].operands[0], seed[k]);  // the init
        }
        std::vector<ValueId> outer = outer_values(l);

        // The reverse loop carries the forward's non-float state, the gradient pointers that mirror
        // carried pointers, then the outer adjoints.
        const ir::Op &begin = fwd_.ops[l.begin];
        b_.loc = begin.loc;
        std::vector<ValueId> saved_primal = primal_, saved_shadow = shadow_;
        std::vector<size_t> mirrored;
        std::vector<ValueId> shadow_inits;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ir::Op &arg = fwd_.ops[l.args[k]];
            std::string base = fwd_.type(arg.result).is_ptr ? base_param(arg.result) : "";
            if (base.empty() || !(contains(spec_.wrt, base) || contains(spec_.outputs, base))) continue;
            mirrored.push_back(k);
            shadow_inits.push_back(shadow(arg.operands[0]));
        }
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
        for (ValueId o : outer) {
            const ir::Type &t = fwd_.type(o);
            ValueId a = b_.loop_arg(b_.broadcast(b_.constant(0, t.elem), t.shape), index++);
            if (!fwd_.values[o].name.empty()) bwd_.values[a].name = "d" + fwd_.values[o].name;
            ctx.outer[o] = a;
            acc_args.push_back(a);
        }
        const int body = l.args.empty() ? l.begin + 1 : l.args.back() + 1;
        for (int i = body; i < l.end; ++i) {
            const ir::Op &op = fwd_.ops[i];
            if (op.kind != OpKind::Store && !skipped.count(i)) replay_op(op);
        }
        contexts_.push_back(ctx);
        std::vector<ValueId> saved_adj = adj_;
        for (size_t k = 0; k < l.args.size(); ++k) {
            if (update[k] < 0 || seed[k] == ir::kNoValue) continue;
            const ir::Op &u = fwd_.ops[update[k]];
            ValueId arg = fwd_.ops[l.args[k]].result;
            ValueId term = u.operands[0] == arg ? u.operands[1] : u.operands[0];
            accumulate(term, u.kind == OpKind::Sub ? b_.unary(OpKind::Neg, seed[k]) : seed[k]);
        }
        sweep_range(body, l.end);
        std::vector<ValueId> yields;
        for (size_t k : state) yields.push_back(P(end.operands[k]));
        for (size_t k : mirrored) yields.push_back(shadow(end.operands[k]));
        for (ValueId o : outer) yields.push_back(contexts_.back().outer.at(o));
        contexts_.pop_back();
        adj_ = saved_adj;
        b_.loc = end.loc;
        b_.for_end(yields);
        std::vector<ValueId> results;
        for (size_t k = 0; k < yields.size(); ++k) results.push_back(b_.loop_result(static_cast<int>(k), bwd_.type(yields[k])));
        primal_ = saved_primal;  // body values are not visible after the loop
        shadow_ = saved_shadow;
        for (size_t j = 0; j < outer.size(); ++j) {
            ValueId r = results[state.size() + mirrored.size() + j];
            bwd_.values[r].name = bwd_.values[acc_args[j]].name;
            accumulate(outer[j], r);
        }
    }

    void sweep() { sweep_range(0, static_cast<int>(fwd_.ops.size())); }

    // Reverse sweep over forward ops [from, to); a loop inside is reversed as a whole.
    void sweep_range(int from, int to) {
        for (int i = to; i-- > from;) {
            const ir::Op &op = fwd_.ops[i];
            b_.loc = op.loc;
            if (op.kind == OpKind::LoopResult || op.kind == OpKind::ForEnd) {
                const ir::Loop &l = loop_ending_at(i);
                reverse_loop(l);
                i = l.begin;
                continue;
            }
            if (op.kind == OpKind::Store) {
                seed_from_store(op);
                continue;
            }
            if (op.result == ir::kNoValue || adj_[op.result] == ir::kNoValue) continue;
            ValueId g = adj_[op.result];
            // Adjoints are shared between values (an add passes one on to both operands); name
            // them after computed values, not after the scalar parameters they also reach.
            if (op.kind != OpKind::Param && !fwd_.values[op.result].name.empty() && bwd_.values[g].name.empty())
                bwd_.values[g].name = "d" + fwd_.values[op.result].name;
            if (op.kind == OpKind::Load) {
                write_gradient(op, g);
                continue;
            }
            const Rule *rule = rule_for(op.kind);
            if (!rule || rule->cls != RuleClass::Differentiable) continue;
            VjpContext ctx{b_, fwd_, op, [this](ValueId v) { return P(v); }, g,
                           [this](ValueId v, ValueId c) { accumulate(v, c); }};
            rule->vjp(ctx);
        }
    }

    void seed_from_store(const ir::Op &op) {
        std::string base = base_param(op.operands[0]);
        if (!contains(spec_.outputs, base)) return;  // saved statistics and other buffers: no gradient
        ValueId mask = op.has_mask ? P(op.operands[2]) : ir::kNoValue;
        const ir::Type &t = fwd_.type(op.operands[1]);
        ValueId other = mask == ir::kNoValue ? ir::kNoValue : b_.broadcast(b_.constant(0, t.elem), t.shape);
        ValueId g = b_.load(shadow(op.operands[0]), mask, other);
        std::string vname = fwd_.values[op.operands[1]].name;
        // The module also runs on other input dtypes than the trace's: converting the incoming
        // gradient explicitly keeps the backward in the traced compute dtype (float32 typically).
        if (t.is_float()) g = b_.cast(g, t.elem, /*keep=*/true);
        bwd_.values[g].name = "d" + (vname.empty() ? base : vname);
        accumulate(op.operands[1], g);
    }

    void write_gradient(const ir::Op &op, ValueId g) {
        std::string base = base_param(op.operands[0]);
        if (op.has_other) {
            const ir::Op &other = fwd_.def(op.operands[2]);
            bool constant = other.kind == OpKind::Const ||
                            (other.kind == OpKind::Broadcast && fwd_.def(other.operands[0]).kind == OpKind::Const);
            if (!constant) {
                ValueId zero = b_.broadcast(b_.constant(0, bwd_.type(g).elem), bwd_.type(g).shape);
                accumulate(op.operands[2], b_.where(P(op.operands[1]), zero, g));
            }
        }
        if (!contains(spec_.wrt, base)) return;
        read_[base] = true;
        ValueId mask = op.has_mask ? P(op.operands[1]) : ir::kNoValue;
        ValueId ptr = shadow(op.operands[0]);
        if (atomic(base)) {
            b_.atomic_add(ptr, b_.cast(g, bwd_.type(ptr).elem), mask, "relaxed");
        } else {
            b_.store(ptr, b_.cast(g, bwd_.type(ptr).elem), mask);
        }
    }
};

}  // namespace

Backward reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
                 const std::string &name) {
    return Reverse(fwd, spec, plan).run(name);
}

}  // namespace tad::ad
