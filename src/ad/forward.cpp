#include "ad/forward.h"

#include <algorithm>
#include <map>

#include "ad/finish.h"
#include "ad/replay.h"
#include "ad/rules.h"
#include "ad/shadow.h"
#include "support/error.h"

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

class Jvp {
public:
    Jvp(const ir::Function &fwd, const GradSpec &spec, const Cleanup &cleanup)
        : fwd_(fwd),
          spec_(spec),
          cleanup_(cleanup),
          b_(out_),
          primal_(fwd.values.size(), ir::kNoValue),
          tangent_(fwd.values.size(), ir::kNoValue),
          base_(fwd.values.size()) {}

    Forward run(const std::string &name) {
        out_.name = name;
        out_.constexprs = fwd_.constexprs;
        out_.specialized = fwd_.specialized;
        out_.source_path = fwd_.source_path;
        declare_params();
        for (const ir::Loop &l : ir::loops(fwd_)) {
            loop_at_[l.begin] = l;
            loop_at_[l.end] = l;
        }
        for (size_t i = 0; i < fwd_.ops.size(); ++i) {
            auto l = loop_at_.find(static_cast<int>(i));
            if (l == loop_at_.end())
                visit(fwd_.ops[i]);
            else if (fwd_.ops[i].kind == OpKind::ForBegin)
                begin_loop(l->second);
            else
                end_loop(l->second);
        }
        Finished finished = finish_derived(out_, derived_params_, "tangent kernel of '" + fwd_.name + "'", cleanup_);
        return Forward{std::move(finished.fn), std::move(finished.origins)};
    }

private:
    const ir::Function &fwd_;
    const GradSpec &spec_;
    const Cleanup &cleanup_;
    ir::Function out_;
    ir::Builder b_;
    // Per forward value: its replay, and its tangent (kNoValue when zero). A pointer's "tangent" is
    // its shadow: the same address arithmetic on the parameter's tangent buffer.
    std::vector<ValueId> primal_, tangent_;
    std::vector<std::string> base_;  // per shadowed pointer value: its parameter
    std::map<std::string, ParamOrigin> derived_params_;  // the shadow parameters, by name
    std::map<int, ir::Loop> loop_at_;  // by for_begin and by for_end op index
    // Per loop (by for_begin): the carried values that carry a tangent too, in carried order.
    std::map<int, std::vector<size_t>> carried_tangents_;

    ValueId P(ValueId v) const { return primal_.at(v); }

    [[noreturn]] void unsupported(const ir::Op &op, const std::string &what) const { ad::unsupported(fwd_, op, what); }

    void declare_params() {
        for (const ir::Param &p : fwd_.params) {
            const ir::Type &t = fwd_.type(p.value);
            b_.loc = fwd_.def(p.value).loc;
            primal_[p.value] = b_.param_like(p, t);
            if (p.kind != ir::ParamKind::Pointer || !(contains(spec_.wrt, p.name) || contains(spec_.outputs, p.name)))
                continue;
            std::string sname = shadow_param_name(fwd_, p.name);
            tangent_[p.value] = b_.param(sname, ir::ParamKind::Pointer, t);
            base_[p.value] = p.name;
            derived_params_[sname] = {ParamOrigin::Shadow, p.name};
        }
    }

    // A loop carries, after the primal values, the tangent of every float value it carries (zero at
    // first where the initial value has none: its update may still get one) and the shadow of
    // every shadowed pointer it carries.
    void begin_loop(const ir::Loop &l) {
        const ir::Op &begin = fwd_.ops[l.begin];
        b_.loc = begin.loc;
        std::vector<size_t> &with = carried_tangents_[l.begin];
        std::vector<ValueId> inits;  // made before the loop: a loop_arg's init is defined outside it
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ir::Op &arg = fwd_.ops[l.args[k]];
            const ir::Type &t = fwd_.type(arg.result);
            if (!(t.is_ptr ? tangent_[arg.operands[0]] != ir::kNoValue : t.is_float())) continue;
            with.push_back(k);
            const ValueId init = tangent_[arg.operands[0]];
            inits.push_back(init == ir::kNoValue ? zeros(t) : init);
        }
        ValueId iv = b_.for_begin(P(begin.operands[0]), P(begin.operands[1]), P(begin.operands[2]), begin.name);
        out_.values[iv].name = fwd_.values[begin.result].name;
        primal_[begin.result] = iv;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ir::Op &arg = fwd_.ops[l.args[k]];
            ValueId a = b_.loop_arg(P(arg.operands[0]), static_cast<int>(k));
            out_.values[a].name = fwd_.values[arg.result].name;
            primal_[arg.result] = a;
        }
        for (size_t j = 0; j < with.size(); ++j) {
            const ir::Op &arg = fwd_.ops[l.args[with[j]]];
            ValueId a = b_.loop_arg(inits[j], static_cast<int>(l.args.size() + j));
            tangent_[arg.result] = a;
            if (fwd_.type(arg.result).is_ptr) {
                base_[arg.result] = base_[arg.operands[0]];
                if (!fwd_.values[arg.result].name.empty())
                    out_.values[a].name = shadow_name(fwd_.values[arg.result].name);
            } else if (!fwd_.values[arg.result].name.empty()) {
                out_.values[a].name = "d" + fwd_.values[arg.result].name;
            }
        }
    }

    void end_loop(const ir::Loop &l) {
        const ir::Op &end = fwd_.ops[l.end];
        b_.loc = end.loc;
        const std::vector<size_t> &with = carried_tangents_.at(l.begin);
        std::vector<ValueId> yields;
        for (ValueId y : end.operands) yields.push_back(P(y));
        for (size_t k : with) {
            ValueId y = end.operands[k];
            ValueId t = tangent_[y];
            if (fwd_.type(y).is_ptr && (t == ir::kNoValue || base_[y] != base_[fwd_.ops[l.args[k]].result]))
                unsupported(end, "carrying a differentiated pointer that the loop body does not advance from itself");
            yields.push_back(t == ir::kNoValue ? zeros(fwd_.type(y)) : t);
        }
        for (size_t k = 0; k < end.operands.size(); ++k)
            if (fwd_.type(end.operands[k]).is_ptr && tangent_[end.operands[k]] != ir::kNoValue &&
                std::find(with.begin(), with.end(), k) == with.end())
                unsupported(end, "carrying a differentiated pointer that starts from another buffer");
        b_.for_end(yields);
        for (size_t k = 0; k < l.results.size(); ++k) {
            const ir::Op &res = fwd_.ops[l.results[k]];
            ValueId r = b_.loop_result(static_cast<int>(k), fwd_.type(res.result));
            out_.values[r].name = fwd_.values[res.result].name;
            primal_[res.result] = r;
        }
        for (size_t j = 0; j < with.size(); ++j) {
            const ir::Op &res = fwd_.ops[l.results[with[j]]];
            ValueId r = b_.loop_result(static_cast<int>(l.args.size() + j), fwd_.type(res.result));
            tangent_[res.result] = r;
            if (fwd_.type(res.result).is_ptr)
                base_[res.result] = base_[fwd_.ops[l.args[with[j]]].result];
            else if (!fwd_.values[res.result].name.empty())
                out_.values[r].name = "d" + fwd_.values[res.result].name;
        }
    }

    void visit(const ir::Op &op) {
        if (op.kind == OpKind::Param || op.kind == OpKind::LoopArg || op.kind == OpKind::LoopResult) return;
        b_.loc = op.loc;
        const Rule *rule = rule_for(op.kind);
        if (!rule || rule->cls == RuleClass::Control) unsupported(op, "in forward mode");
        if (op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd) return store_tangent(op);
        replay_op(b_, fwd_, op, primal_);
        if (op.kind == OpKind::Barrier) return;
        if (fwd_.type(op.result).is_ptr) return shadow_pointer(op);
        if (!fwd_.type(op.result).is_float()) return;  // integers and masks carry no tangent
        ValueId t = op.kind == OpKind::Load ? load_tangent(op) : rule_tangent(*rule, op);
        if (t == ir::kNoValue) return;
        if (!fwd_.values[op.result].name.empty() && out_.values[t].name.empty())
            out_.values[t].name = "d" + fwd_.values[op.result].name;
        tangent_[op.result] = t;
    }

    ValueId zeros(const ir::Type &t) { return b_.broadcast(b_.constant(0, t.elem), t.shape); }

    // Pointer arithmetic on a shadowed pointer is mirrored on the shadow (ad::mirror_pointer); a
    // where picks between the shadows of two pointers into one buffer.
    void shadow_pointer(const ir::Op &op) {
        bool pick = op.kind == OpKind::Where && tangent_[op.operands[1]] != ir::kNoValue &&
                    tangent_[op.operands[2]] != ir::kNoValue && base_[op.operands[1]] == base_[op.operands[2]];
        if (!pick && (op.operands.empty() || tangent_[op.operands[0]] == ir::kNoValue)) {
            for (ValueId v : op.operands)
                if (tangent_[v] != ir::kNoValue) unsupported(op, "computing a differentiated pointer");
            return;
        }
        auto shadow_of = [this](ValueId v) { return tangent_[v]; };
        tangent_[op.result] = mirror_pointer(b_, fwd_, op, shadow_of, primal_);
        base_[op.result] = base_[op.operands[pick ? 1 : 0]];
    }

    // ẏ = load(Ẋ, mask, other=ȯther) from an input; ẏ = [mask] ? 0 : ȯther from any other buffer.
    ValueId load_tangent(const ir::Op &op) {
        ValueId ptr = op.operands[0];
        bool input = tangent_[ptr] != ir::kNoValue && contains(spec_.wrt, base_[ptr]);
        ValueId other = op.has_other ? tangent_[op.operands[2]] : ir::kNoValue;
        if (!input && other == ir::kNoValue) return ir::kNoValue;
        const ir::Type &t = fwd_.type(op.result);
        ValueId mask = op.has_mask ? P(op.operands[1]) : ir::kNoValue;
        if (!input) return b_.where(mask, zeros(t), other);
        if (mask != ir::kNoValue && other == ir::kNoValue) other = zeros(t);
        return b_.load(tangent_[ptr], mask, other);
    }

    ValueId rule_tangent(const Rule &rule, const ir::Op &op) {
        if (rule.cls != RuleClass::Differentiable) return ir::kNoValue;
        std::vector<ValueId> dx;
        for (ValueId v : op.operands) dx.push_back(tangent_[v]);
        if (std::all_of(dx.begin(), dx.end(), [](ValueId t) { return t == ir::kNoValue; })) return ir::kNoValue;
        JvpContext ctx{{b_, fwd_, op, [this](ValueId v) { return P(v); }}, std::move(dx)};
        rule.jvp(ctx);
        return ctx.result;
    }

    // A store to an output writes the stored value's tangent (0 where it has none) through the shadow;
    // an atomic add adds it (y += v is linear: ẏ += v̇), with the same memory semantics.
    void store_tangent(const ir::Op &op) {
        ValueId ptr = op.operands[0], value = op.operands[1];
        if (tangent_[ptr] == ir::kNoValue || !contains(spec_.outputs, base_[ptr])) return;
        ValueId mask = op.has_mask ? P(op.operands[2]) : ir::kNoValue;
        if (op.kind == OpKind::AtomicAdd) {
            if (tangent_[value] != ir::kNoValue) b_.atomic_add(tangent_[ptr], tangent_[value], mask, op.name);
            return;
        }
        ValueId t = tangent_[value] == ir::kNoValue ? zeros(fwd_.type(value)) : tangent_[value];
        // An update in place: the program's threads may hold the loaded tangents in other layouts
        // than the stored ones, so all loads finish before any tangent is overwritten.
        if (contains(spec_.overwritten, base_[ptr])) b_.barrier();
        b_.store(tangent_[ptr], t, mask);
    }
};

}  // namespace

Forward jvp(const ir::Function &fwd, const GradSpec &spec, const std::string &name, const Cleanup &cleanup) {
    return Jvp(fwd, spec, cleanup).run(name);
}

}  // namespace tad::ad
