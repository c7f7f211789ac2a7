#include "ad/reverse.h"

#include <algorithm>
#include <cctype>

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
            if (op.kind == OpKind::ForBegin)
                fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) +
                                              ": unsupported construct 'for loop': reverse mode through loops is not supported yet");
        for (const ir::Op &op : fwd_.ops)
            if (op.kind == OpKind::AtomicAdd)
                fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) +
                                              ": unsupported construct 'tl.atomic_add' in a forward kernel: not differentiable yet");
        declare_params();
        replay();
        sweep();
        Backward out;
        out.fn = passes::dce(passes::cse(bwd_));
        drop_unused_params(out.fn);
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
        for (const ir::Op &op : fwd_.ops) {
            if (op.kind == OpKind::Param || op.kind == OpKind::Store) continue;
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
            ValueId r = b_.append(copy, fwd_.type(op.result));
            bwd_.values[r].name = fwd_.values[op.result].name;
            primal_[op.result] = r;
        }
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
            if (op.kind != OpKind::Broadcast && op.kind != OpKind::AddPtr && op.kind != OpKind::ExpandDims) return "";
            p = op.operands[0];
        }
    }

    void accumulate(ValueId fwd_value, ValueId contribution) {
        if (!fwd_.type(fwd_value).is_float()) return;
        ValueId &a = adj_[fwd_value];
        a = a == ir::kNoValue ? contribution : b_.binary(OpKind::Add, a, contribution);
    }

    void sweep() {
        for (size_t i = fwd_.ops.size(); i-- > 0;) {
            const ir::Op &op = fwd_.ops[i];
            b_.loc = op.loc;
            if (op.kind == OpKind::Store) {
                seed_from_store(op);
                continue;
            }
            if (op.result == ir::kNoValue || adj_[op.result] == ir::kNoValue) continue;
            ValueId g = adj_[op.result];
            if (!fwd_.values[op.result].name.empty() && bwd_.values[g].name.empty())
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

    static void drop_unused_params(ir::Function &f) {
        std::vector<bool> used(f.values.size(), false);
        for (const ir::Op &op : f.ops)
            for (ValueId v : op.operands) used[v] = true;
        std::vector<bool> keep(f.ops.size(), true);
        for (size_t i = 0; i < f.ops.size(); ++i)
            if (f.ops[i].kind == OpKind::Param && !used[f.ops[i].result]) keep[i] = false;
        std::vector<ValueId> repl(f.values.size());
        for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ValueId>(v);
        f = passes::compact(f, keep, repl);
    }
};

}  // namespace

Backward reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
                 const std::string &name) {
    return Reverse(fwd, spec, plan).run(name);
}

}  // namespace tad::ad
