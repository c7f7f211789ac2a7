#include "ad/forward.h"

#include <algorithm>
#include <map>

#include "ad/rules.h"
#include "support/error.h"

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) { return std::find(v.begin(), v.end(), s) != v.end(); }

class Jvp {
public:
    Jvp(const ir::Function &fwd, const GradSpec &spec)
        : fwd_(fwd), spec_(spec), b_(out_), primal_(fwd.values.size(), ir::kNoValue),
          tangent_(fwd.values.size(), ir::kNoValue), base_(fwd.values.size()) {}

    Forward run(const std::string &name) {
        out_.name = name;
        out_.constexprs = fwd_.constexprs;
        out_.specialized = fwd_.specialized;
        out_.source_path = fwd_.source_path;
        declare_params();
        for (const ir::Op &op : fwd_.ops) visit(op);
        Forward res;
        res.fn = passes::dce(passes::cse(out_));
        res.fn = passes::drop_unused_params(res.fn);
        for (const ir::Param &p : res.fn.params) {
            auto it = shadow_of_.find(p.name);
            res.origins.push_back(it == shadow_of_.end() ? ParamOrigin{ParamOrigin::Primal, p.name}
                                                         : ParamOrigin{ParamOrigin::Shadow, it->second});
        }
        std::string problem = ir::verify(res.fn);
        if (!problem.empty()) fail(TAD_ERR_INTERNAL, "tangent kernel of '" + fwd_.name + "' is invalid IR: " + problem);
        return res;
    }

private:
    const ir::Function &fwd_;
    const GradSpec &spec_;
    ir::Function out_;
    ir::Builder b_;
    // Per forward value: its replay, and its tangent (kNoValue when zero). A pointer's "tangent" is
    // its shadow: the same address arithmetic on the parameter's tangent buffer.
    std::vector<ValueId> primal_, tangent_;
    std::vector<std::string> base_;                 // per shadowed pointer value: its parameter
    std::map<std::string, std::string> shadow_of_;  // shadow param name -> primal param name

    ValueId P(ValueId v) const { return primal_.at(v); }

    [[noreturn]] void unsupported(const ir::Op &op, const std::string &what) const {
        fail(TAD_ERR_UNSUPPORTED, where(fwd_.source_path, op.loc.line, op.loc.col) + ": unsupported construct '" +
                                      ir::op_name(op.kind) + "' " + what);
    }

    void declare_params() {
        for (const ir::Param &p : fwd_.params) {
            const ir::Type &t = fwd_.type(p.value);
            b_.loc = fwd_.def(p.value).loc;
            primal_[p.value] = b_.param(p.name, p.kind, t);
            if (p.kind != ir::ParamKind::Pointer || !(contains(spec_.wrt, p.name) || contains(spec_.outputs, p.name)))
                continue;
            std::string sname = shadow_name(p.name);
            while (fwd_.param_index(sname) >= 0) sname = "_" + sname;
            tangent_[p.value] = b_.param(sname, ir::ParamKind::Pointer, t);
            base_[p.value] = p.name;
            shadow_of_[sname] = p.name;
        }
    }

    void visit(const ir::Op &op) {
        if (op.kind == OpKind::Param) return;
        b_.loc = op.loc;
        const Rule *rule = rule_for(op.kind);
        if (!rule || rule->cls == RuleClass::Control) unsupported(op, "in forward mode");
        if (op.kind == OpKind::AtomicAdd) unsupported(op, "in a forward kernel: not differentiable yet");
        if (op.kind == OpKind::Store) return store_tangent(op);
        replay(op);
        if (op.kind == OpKind::Barrier) return;
        if (fwd_.type(op.result).is_ptr) return shadow_pointer(op);
        if (!fwd_.type(op.result).is_float()) return;  // integers and masks carry no tangent
        ValueId t = op.kind == OpKind::Load ? load_tangent(op) : rule_tangent(*rule, op);
        if (t == ir::kNoValue) return;
        if (!fwd_.values[op.result].name.empty() && out_.values[t].name.empty())
            out_.values[t].name = "d" + fwd_.values[op.result].name;
        tangent_[op.result] = t;
    }

    void replay(const ir::Op &op) {
        ir::Op copy = op;
        for (ValueId &v : copy.operands) v = P(v);
        // Masked-off lanes of a load without `other` are undefined; read them as 0, as reverse mode
        // does, so that both modes compute the same function.
        if (op.kind == OpKind::Load && op.has_mask && !op.has_other) {
            copy.operands.push_back(zeros(fwd_.type(op.result)));
            copy.has_other = true;
        }
        ValueId r = b_.append(copy, fwd_.type(op.result));
        out_.values[r].name = fwd_.values[op.result].name;
        primal_[op.result] = r;
    }

    ValueId zeros(const ir::Type &t) { return b_.broadcast(b_.constant(0, t.elem), t.shape); }

    // Pointer arithmetic on a shadowed pointer is mirrored on the shadow.
    void shadow_pointer(const ir::Op &op) {
        if (op.operands.empty() || tangent_[op.operands[0]] == ir::kNoValue) {
            for (ValueId v : op.operands)
                if (tangent_[v] != ir::kNoValue) unsupported(op, "computing a differentiated pointer");
            return;
        }
        ValueId s = tangent_[op.operands[0]];
        switch (op.kind) {
        case OpKind::Broadcast: s = b_.broadcast(s, fwd_.type(op.result).shape); break;
        case OpKind::ExpandDims: s = b_.expand_dims(s, op.axis); break;
        case OpKind::AddPtr: s = b_.add_ptr(s, P(op.operands[1])); break;
        default: unsupported(op, "computing a differentiated pointer");
        }
        if (!fwd_.values[op.result].name.empty()) out_.values[s].name = shadow_name(fwd_.values[op.result].name);
        tangent_[op.result] = s;
        base_[op.result] = base_[op.operands[0]];
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
        JvpContext ctx{b_, fwd_, op, [this](ValueId v) { return P(v); }, std::move(dx)};
        rule.jvp(ctx);
        return ctx.result;
    }

    // A store to an output writes the stored value's tangent (0 where it has none) through the shadow.
    void store_tangent(const ir::Op &op) {
        ValueId ptr = op.operands[0], value = op.operands[1];
        if (tangent_[ptr] == ir::kNoValue || !contains(spec_.outputs, base_[ptr])) return;
        ValueId t = tangent_[value] == ir::kNoValue ? zeros(fwd_.type(value)) : tangent_[value];
        b_.store(tangent_[ptr], t, op.has_mask ? P(op.operands[2]) : ir::kNoValue);
    }
};

}  // namespace

Forward jvp(const ir::Function &fwd, const GradSpec &spec, const std::string &name) { return Jvp(fwd, spec).run(name); }

}  // namespace tad::ad
