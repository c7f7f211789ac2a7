// The backward launcher: the stub's launches in reverse, each with the backward kernel of its
// specialization and variant, over one shadow buffer per tensor of the call.
#include <algorithm>
#include <map>
#include <sstream>

#include "emit/module_internal.h"
#include "support/error.h"

namespace tad::emit::detail {

namespace {

class LauncherWriter {
public:
    explicit LauncherWriter(const ModuleInput &in) : in_(in), stub_(in.kf->stub), names_(stub_.params) {
        launches_ = names_.fresh("launches");
        temps_ = names_.fresh("temps");
        outs_ = names_.fresh("outs");
        layouts_ = names_.fresh("out_layouts");
        grads_ = names_.fresh("grads");
        a_ = names_.fresh("a");
        tape_ = names_.fresh("tape");
        tape_stride_ = names_.fresh("tape_stride");
        need_ = names_.fresh("tape_need");
    }

    Launcher run() {
        Launcher out;
        out.name = stub_.name + "_backward";
        std::vector<std::string> args = {launches_, temps_};
        args.insert(args.end(), stub_.params.begin(), stub_.params.end());
        args.insert(args.end(), {outs_, layouts_, grads_});
        os_ << "def " << out.name << "(" << join(args) << "):\n";
        os_ << "    \"\"\"Gradients of the stub's inputs from the gradients of its outputs: the backward of each "
               "launch,\n"
               "    last to first.\"\"\"\n";
        allocate_shared();
        for (size_t k = in_.launches.size(); k-- > 0;)
            if (!in_.launches[k].specializations.empty()) emit_launch(k);
        std::vector<std::string> rets;
        for (size_t i = 0; i < stub_.params.size(); ++i) {
            auto it = grad_.find({TensorRef::Input, static_cast<int>(i)});
            // An input that is not a grad input may still have a shadow (a buffer it updates in place).
            bool wanted = std::find(stub_.grad_inputs.begin(), stub_.grad_inputs.end(), stub_.params[i]) !=
                          stub_.grad_inputs.end();
            rets.push_back(it == grad_.end() || !wanted ? "None"
                                                        : "_as_dtype(" + it->second + ", " + stub_.params[i] + ")");
        }
        os_ << "    return " << py_tuple(rets, false) << "\n";
        out.source = os_.str();
        out.inputs = inputs_;
        out.outputs = outputs_;
        out.temps = temps_used_;
        out.snapshots = snapshots_;
        return out;
    }

private:
    std::string temp(int i) {
        temps_used_.insert(i);
        return temps_ + "[" + std::to_string(i) + "]";
    }

    // The forward's value of a tensor.
    std::string primal(TensorRef t) {
        switch (t.kind) {
        case TensorRef::Input:
            inputs_.insert(stub_.params.at(static_cast<size_t>(t.index)));
            return stub_.params.at(static_cast<size_t>(t.index));
        case TensorRef::Output: outputs_.insert(t.index); return outs_ + "[" + std::to_string(t.index) + "]";
        default: return temp(t.index);
        }
    }

    std::string grad_var(TensorRef t) {
        auto it = grad_.find(t);
        if (it != grad_.end()) return it->second;
        std::string base = t.kind == TensorRef::Input
                               ? "d_" + stub_.params.at(static_cast<size_t>(t.index))
                               : (t.kind == TensorRef::Output ? "g" : "d_temp") + std::to_string(t.index);
        return grad_[t] = names_.fresh(base);
    }

    // Shadows several launches add to exist before the first of them runs; a stub input's gradient
    // that one launch writes is allocated there, as that launch's variant wants it.
    void allocate_shared() {
        for (const TensorRef &t : in_.shared) {
            std::string v = grad_var(t);
            int alias = -1;
            for (const auto &[j, i] : in_.aliases)
                if (t.kind == TensorRef::Input && i == t.index) alias = j;
            if (alias >= 0) {
                // An input updated in place: its shadow starts as the cotangent of its final contents.
                os_ << "    " << v << " = _cotangent_buffer(" << grads_ << "[" << alias << "], " << layouts_ << "["
                    << alias << "])\n";
            } else if (t.kind == TensorRef::Input) {
                inputs_.insert(stub_.params.at(static_cast<size_t>(t.index)));
                os_ << "    " << v << " = _atomic_buffer(" << stub_.params.at(static_cast<size_t>(t.index)) << ")\n";
            } else if (t.kind == TensorRef::Output) {
                os_ << "    " << v << " = _cotangent_buffer(" << grads_ << "[" << t.index << "], " << layouts_ << "["
                    << t.index << "])\n";
            } else {
                os_ << "    " << v << " = _atomic_buffer(" << temp(t.index) << ")\n";
            }
        }
        for (const LaunchBackward &l : in_.launches)
            for (const Specialization &sp : l.specializations)
                for (const Variant &v : sp.variants)
                    for (const ad::ParamOrigin &o : v.bwd.origins) {
                        if (o.kind != ad::ParamOrigin::Shadow) continue;
                        TensorRef t = l.tensors.at(o.primal);
                        if (t.kind == TensorRef::Input && !grad_.count(t)) os_ << "    " << grad_var(t) << " = None\n";
                    }
    }

    void emit_launch(size_t k) {
        const LaunchBackward &l = in_.launches[k];
        std::string launch = launches_ + "[" + std::to_string(k) + "]";
        os_ << "    # launch " << k << ": " << l.kernel << "\n";
        os_ << "    " << a_ << " = " << launch << ".args\n";
        const bool keyed = !l.specializations.front().key.empty();
        for (size_t s = 0; s < l.specializations.size(); ++s) {
            const Specialization &sp = l.specializations[s];
            std::string indent = "    ";
            if (keyed) {
                std::string cond;
                for (size_t i = 0; i < sp.key.size(); ++i)
                    cond += (i ? " and " : "") + a_ + "[\"" + sp.key[i].first + "\"] == " + sp.key[i].second;
                os_ << "    " << (s ? "elif " : "if ") << cond << ":\n";
                indent = "        ";
            }
            for (size_t i = 0; i < sp.variants.size(); ++i) {
                const Variant &v = sp.variants[i];
                std::string inner = indent;
                if (sp.variants.size() > 1) {
                    std::string cond;
                    for (size_t g = 0; g < v.guards.size(); ++g)
                        cond += (g ? " and " : "") + a_ + "[\"" + v.guards[g].first + "\"] == " + a_ + "[\"" +
                                v.guards[g].second + "\"]";
                    os_ << indent << (v.guards.empty() ? "else:" : (i ? "elif " : "if ") + cond + ":") << "\n";
                    inner += "    ";
                }
                emit_variant(k, launch, v, inner);
            }
        }
        if (keyed) {
            std::string names, shown;
            for (const auto &[name, value] : l.specializations.front().key) {
                names += (names.empty() ? "" : ", ") + name;
                shown += std::string(shown.empty() ? "" : ", ") + name + "={" + a_ + "['" + name + "']!r}";
            }
            os_ << "    else:\n        raise RuntimeError(f\"no backward of " << l.kernel << " was generated for "
                << shown << " (static ifs depend on " << names
                << "); regenerate with a SWEEP entry or a call that uses these values\")\n";
        }
    }

    std::string scalar(const std::string &name) { return a_ + "[\"" + name + "\"]"; }

    // A pointer's tensor as launch k saw it: a saved copy when this or a later launch overwrote it.
    std::string primal_arg(size_t k, const ir::Param &p) {
        if (p.kind != ir::ParamKind::Pointer) return scalar(p.name);
        const LaunchBackward &l = in_.launches[k];
        auto saved = l.saved_before.find(p.name);
        if (saved == l.saved_before.end()) return primal(l.tensors.at(p.name));
        snapshots_.insert({saved->second, k, p.name});
        return launches_ + "[" + std::to_string(k) + "].pre[\"" + p.name + "\"]";
    }

    void constexpr_args(const ir::Function &f, std::vector<std::string> &args) {
        for (const ir::Constexpr &c : f.constexprs) args.push_back(c.name + "=" + scalar(c.name));
    }

    // The layout (shape, stride) of the buffer a plain-store gradient mirrors.
    std::string mirror_layout(TensorRef t) {
        if (t.kind == TensorRef::Output) return layouts_ + "[" + std::to_string(t.index) + "][:2]";
        std::string v = primal(t);
        return "(" + v + ".shape, " + v + ".stride())";
    }

    void emit_variant(size_t k, const std::string &launch, const Variant &v, const std::string &indent) {
        const LaunchBackward &l = in_.launches[k];
        const std::string grid = launch + ".grid", options = "**" + launch + ".options";
        if (v.bwd.tape) {
            // The tape's size is known only once each program's trip counts are: a sizing kernel
            // writes them, the largest sets the stride between programs' tapes.
            const ad::TapeSizing &ts = *v.bwd.tape;
            std::vector<std::string> size_args;
            for (size_t i = 0; i < ts.fn.params.size(); ++i)
                size_args.push_back(ts.origins[i].kind == ad::ParamOrigin::TapeNeed ? need_
                                                                                    : primal_arg(k, ts.fn.params[i]));
            constexpr_args(ts.fn, size_args);
            std::string device = layouts_ + "[0][3]";
            os_ << indent << need_ << " = torch.empty(math.prod(" << grid << "), dtype=torch.int64, device=" << device
                << ")\n";
            os_ << indent << ts.fn.name << "[" << grid << "](" << join(size_args) << ", " << options << ")\n";
            os_ << indent << tape_stride_ << " = max(int(" << need_ << ".max().item()), 1)\n";
            os_ << indent << tape_ << " = torch.empty(math.prod(" << grid << ") * " << tape_stride_
                << ", dtype=torch.float32, device=" << device << ")\n";
        }
        std::vector<std::string> args;
        for (size_t i = 0; i < v.bwd.fn.params.size(); ++i) {
            const ir::Param &p = v.bwd.fn.params[i];
            const ad::ParamOrigin &o = v.bwd.origins[i];
            if (o.kind == ad::ParamOrigin::Tape || o.kind == ad::ParamOrigin::TapeStride) {
                args.push_back(o.kind == ad::ParamOrigin::Tape ? tape_ : tape_stride_);
            } else if (p.kind != ir::ParamKind::Pointer || o.kind == ad::ParamOrigin::Primal) {
                args.push_back(primal_arg(k, p));
            } else {
                args.push_back(shadow_arg(l, o.primal, v, indent));
            }
        }
        constexpr_args(v.bwd.fn, args);
        os_ << indent << v.bwd.fn.name << "[" << grid << "](" << join(args) << ", " << options << ")\n";
    }

    // The shadow buffer of a launch's pointer parameter: shared ones exist already; an output read by
    // this launch alone takes the incoming gradient; an input's gradient is allocated for the variant.
    std::string shadow_arg(const LaunchBackward &l, const std::string &param, const Variant &v,
                           const std::string &indent) {
        TensorRef t = l.tensors.at(param);
        if (in_.shared.count(t)) return grad_var(t);
        if (t.kind == TensorRef::Output) {
            std::string var = names_.fresh("g" + std::to_string(t.index));
            os_ << indent << var << " = _as_layout(" << grads_ << "[" << t.index << "], " << layouts_ << "[" << t.index
                << "])\n";
            return var;
        }
        if (t.kind != TensorRef::Input)
            fail(TAD_ERR_INTERNAL,
                 "launcher: the cotangent of temporary " + std::to_string(t.index) + " is not a shared buffer");
        std::string var = grad_var(t), x = primal(t);
        auto w = v.bwd.writes.find(param);
        if (w != v.bwd.writes.end() && w->second.kind == passes::GradWrite::Store && !w->second.covers)
            os_ << indent << var << " = _zero_buffer(" << x << ")\n";
        else if (w != v.bwd.writes.end() && w->second.kind == passes::GradWrite::Store)
            os_ << indent << var << " = _store_buffer(" << x << ", *" << mirror_layout(l.tensors.at(w->second.mirror))
                << ")\n";
        else
            os_ << indent << var << " = _atomic_buffer(" << x << ")\n";
        return var;
    }

    const ModuleInput &in_;
    const frontend::StubInfo &stub_;
    Names names_;
    std::ostringstream os_;
    std::string launches_, temps_, outs_, layouts_, grads_, a_, tape_, tape_stride_, need_;
    std::map<TensorRef, std::string> grad_;
    std::set<std::string> inputs_;
    std::set<int> outputs_, temps_used_;
    std::set<std::tuple<size_t, size_t, std::string>> snapshots_;
};

}  // namespace

Launcher emit_launcher(const ModuleInput &in) { return LauncherWriter(in).run(); }

}  // namespace tad::emit::detail
