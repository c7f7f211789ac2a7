#include "ad/reverse_internal.h"

#include <algorithm>

#include "ad/finish.h"
#include "ad/rules.h"
#include "ad/shadow.h"
#include "ad/tape.h"

namespace tad::ad {

namespace detail {

bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

Backward Reverse::run(const std::string &name) {
    bwd_.name = name;
    bwd_.constexprs = fwd_.constexprs;
    bwd_.specialized = fwd_.specialized;
    bwd_.source_path = fwd_.source_path;
    std::string malformed;
    loops_ = ir::loops(fwd_, &malformed);
    if (!malformed.empty()) fail(TAD_ERR_INTERNAL, "forward of '" + fwd_.name + "' has malformed loops: " + malformed);
    choose_taped_loops();
    declare_params();
    replay();
    sweep();
    Finished finished = finish_derived(bwd_, derived_params_, "backward of '" + fwd_.name + "'", cleanup_);
    Backward out;
    out.fn = std::move(finished.fn);
    out.origins = std::move(finished.origins);
    if (!taped_.empty()) {
        std::vector<TapedLoop> loops;
        for (const auto &[begin, region] : taped_) loops.push_back({begin, region.state});
        out.tape = tape_sizing(fwd_, loops, name + "_tape_size", fresh_param_name("tape_need"), cleanup_);
    }
    for (const auto &[param, w] : plan_)
        if (read_.count(param)) out.writes[param] = w;
    return out;
}

bool Reverse::atomic(const std::string &param) const {
    auto it = plan_.find(param);
    return it == plan_.end() || it->second.kind == passes::GradWrite::Atomic;
}

void Reverse::declare_params() {
    for (const ir::Param &p : fwd_.params) {
        const ir::Type &t = fwd_.type(p.value);
        b_.loc = fwd_.def(p.value).loc;
        primal_[p.value] = b_.param_like(p, t);
        bool out = contains(spec_.outputs, p.name), in = contains(spec_.wrt, p.name);
        if (p.kind != ir::ParamKind::Pointer || !(out || in)) continue;
        ir::Type st = t;
        // Atomics accumulate half-precision gradients in a float32 buffer; so does a split gradient
        // (its scatter adds onto stored values: rounding those first could cancel what it adds).
        auto w = plan_.find(p.name);
        const bool split = w != plan_.end() && w->second.split;
        if (in && (atomic(p.name) || split) && (t.elem == ir::DType::F16 || t.elem == ir::DType::BF16))
            st.elem = ir::DType::F32;
        std::string sname = shadow_param_name(fwd_, p.name);
        shadow_param_[p.name] = b_.param(sname, ir::ParamKind::Pointer, st);
        derived_params_[sname] = {ParamOrigin::Shadow, p.name};
    }
    if (taped_.empty()) return;
    std::string tape = fresh_param_name("Tape");
    derived_params_[tape] = {ParamOrigin::Tape, ""};
    tape_param_ = b_.param(tape, ir::ParamKind::Pointer, ir::Type{ir::DType::F32, true, {}});
    std::string stride = fresh_param_name("tape_stride");
    derived_params_[stride] = {ParamOrigin::TapeStride, ""};
    tape_stride_param_ = b_.param(stride, ir::ParamKind::Int, ir::Type{ir::DType::I32, false, {}});
}

std::string Reverse::fresh_param_name(std::string name) const {
    while (fwd_.param_index(name) >= 0 || derived_params_.count(name)) name = "_" + name;
    return name;
}

ValueId Reverse::shadow(ValueId v) {
    if (shadow_[v] != ir::kNoValue) return shadow_[v];
    const ir::Op &op = fwd_.def(v);
    auto shadow_of = [this](ValueId p) { return shadow(p); };
    if (op.kind != OpKind::Param) return shadow_[v] = mirror_pointer(b_, fwd_, op, shadow_of, primal_);
    ValueId r = shadow_param_.at(op.name);
    if (!fwd_.values[v].name.empty()) bwd_.values[r].name = shadow_name(fwd_.values[v].name);
    return shadow_[v] = r;
}

std::string Reverse::base_param(ValueId p) const { return passes::pointer_base(fwd_, p); }

void Reverse::accumulate(ValueId fwd_value, ValueId contribution) {
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

void Reverse::sweep_range(int from, int to) {
    for (int i = to; i-- > from;) {
        const ir::Op &op = fwd_.ops[i];
        b_.loc = op.loc;
        if (op.kind == OpKind::LoopResult || op.kind == OpKind::ForEnd) {
            const ir::Loop &l = loop_ending_at(i);
            reverse_loop(l);
            i = l.begin;
            continue;
        }
        if (op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd) {
            seed_from_store(op);
            continue;
        }
        if (op.kind == OpKind::Load && adj_[op.result] == ir::kNoValue) {
            write_zero_gradient(op);
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
        VjpContext ctx{
            {b_, fwd_, op, [this](ValueId v) { return P(v); }}, g, [this](ValueId v, ValueId c) { accumulate(v, c); }};
        rule->vjp(ctx);
    }
}

void Reverse::seed_from_store(const ir::Op &op) {
    std::string base = base_param(op.operands[0]);
    if (!contains(spec_.outputs, base)) return;  // saved statistics and other buffers: no gradient
    ValueId mask = op.has_mask ? P(op.operands[2]) : ir::kNoValue;
    const ir::Type &t = fwd_.type(op.operands[1]);
    ValueId other = mask == ir::kNoValue ? ir::kNoValue : b_.broadcast(b_.constant(0, t.elem), t.shape);
    ValueId g = b_.load(shadow(op.operands[0]), mask, other);
    if (op.kind == OpKind::Store && (contains(spec_.overwritten, base) || contains(spec_.rewritten, base))) {
        // The load, the zeroing store and the gradient's atomic adds may each spread the tile over
        // the program's threads differently: barriers keep them in order (found on the GPU).
        const ir::Type &st = bwd_.type(g);
        b_.barrier();
        b_.store(shadow(op.operands[0]), b_.broadcast(b_.constant(0, st.elem), st.shape), mask);
        b_.barrier();
    }
    std::string vname = fwd_.values[op.operands[1]].name;
    // The module also runs on other input dtypes than the trace's: converting the incoming
    // gradient explicitly keeps the backward in the traced compute dtype (float32 typically).
    if (t.is_float()) g = b_.cast(g, t.elem, /*keep=*/true);
    bwd_.values[g].name = "d" + (vname.empty() ? base : vname);
    accumulate(op.operands[1], g);
}

void Reverse::write_gradient(const ir::Op &op, ValueId g) {
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

// A load whose value reaches no output (`x1 > 0` deciding a tl.where) still gets its gradient's
// plain store, of zeros: the plan takes the buffer's coverage from every load of the parameter, and
// leaves it unfilled where that covers the tensor.
void Reverse::write_zero_gradient(const ir::Op &op) {
    const std::string base = base_param(op.operands[0]);
    if (!contains(spec_.wrt, base) || atomic(base)) return;
    read_[base] = true;
    const ValueId ptr = shadow(op.operands[0]);
    const ir::Type &t = bwd_.type(ptr);
    const ValueId zero = b_.constant(0, t.elem);
    b_.store(ptr, t.scalar() ? zero : b_.broadcast(zero, t.shape), op.has_mask ? P(op.operands[1]) : ir::kNoValue);
}

}  // namespace detail

namespace {

// The forward loops whose rerun (ForBegin marked `rerun`, at the forward loop's location) is in `bwd`.
std::vector<int> rerun_loops(const ir::Function &fwd, const ir::Function &bwd) {
    std::vector<int> out;
    for (const ir::Op &r : bwd.ops) {
        if (r.kind != ir::OpKind::ForBegin || !r.ival2) continue;
        for (size_t i = 0; i < fwd.ops.size(); ++i)
            if (fwd.ops[i].kind == ir::OpKind::ForBegin && fwd.ops[i].loc.line == r.loc.line &&
                fwd.ops[i].loc.col == r.loc.col && !std::count(out.begin(), out.end(), static_cast<int>(i)))
                out.push_back(static_cast<int>(i));
    }
    return out;
}

}  // namespace

Backward reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
                 const std::string &name, const Cleanup &cleanup) {
    if (spec.loops != LoopPolicy::Auto) return detail::Reverse(fwd, spec, plan, cleanup).run(name);
    GradSpec recompute = spec;
    recompute.loops = LoopPolicy::Recompute;
    Backward b = detail::Reverse(fwd, recompute, plan, cleanup).run(name);
    GradSpec taped = spec;
    taped.taped = rerun_loops(fwd, b.fn);
    if (taped.taped.empty()) return b;
    return detail::Reverse(fwd, taped, plan, cleanup).run(name);
}

}  // namespace tad::ad
