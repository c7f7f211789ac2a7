// The generated module's forward-mode section: tangent kernels, their launcher and `jvp()`.
#include <map>
#include <set>
#include <sstream>

#include "emit/module_internal.h"
#include "emit/templates.h"
#include "support/py_literal.h"

namespace tad::emit::detail {

namespace {

using plan::Alloc;
using plan::Arg;
using plan::Init;
using plan::TensorRef;

class JvpWriter {
public:
    JvpWriter(const frontend::KernelFile &kf, const plan::Plan &p) : p_(p), stub_(kf.stub), names_(stub_.params) {}

    std::string run() {
        os_ << "\n\n# ---- forward mode (JVP): the tangents J v of the outputs from tangents v of GRAD_INPUTS ----\n";
        os_ << "JVP_UNSUPPORTED = None\n\n\n";
        for (const plan::Kernel &k : p_.kernels) {
            std::string doc = "Forward mode of " + k.forward;
            for (size_t i = 0; i < k.key.size(); ++i)
                doc += (i ? ", " : " for ") + k.key[i].first + "=" + k.key[i].second;
            doc += ": the outputs' tangents into their shadows from the inputs' tangents in theirs.";
            os_ << "@_fit_shared_memory\n" << emit_kernel(k.fn, doc) << "\n\n";
        }
        os_ << template_text("jvp_helpers.py") << "\n\n";  // tangents and tangent buffers
        launcher();
        os_ << "\n\n_JVP_SNAPSHOTS = " << snapshot_table(p_.snapshots) << "\n";
        entry_point();
        return os_.str();
    }

private:
    const plan::Plan &p_;
    const frontend::StubInfo &stub_;
    Names names_;
    std::ostringstream os_;
    std::string launches_, a_, outs_, layouts_, tangents_, fn_;
    std::map<TensorRef, std::string> tvar_;

    // A tensor as launch k's parameter `param` reaches it.
    std::string primal(size_t k, const std::string &param, TensorRef t) const {
        if (t.kind == TensorRef::Input) return stub_.params.at(static_cast<size_t>(t.index));
        if (t.kind == TensorRef::Output) return outs_ + "[" + std::to_string(t.index) + "]";
        return launches_ + "[" + std::to_string(k) + "].tensors[" + py_literal(param, PyQuotes::Double) + "]";
    }

    void alloc(const Alloc &a) {
        const TensorRef t = a.tensor;
        if (a.init == Init::Tangent) {
            const std::string &x = stub_.params.at(static_cast<size_t>(t.index));
            std::string &v = tvar_[t] = names_.fresh("d_" + x);
            if (a.index < 0)
                os_ << "    " << v << " = _tangent_of(None, " << x << ")\n";
            else
                os_ << "    " << v << " = _tangent_of(" << tangents_ << "[" << a.index << "], " << x
                    << (a.written ? ", written=True" : "") << ")\n";
        } else if (t.kind == TensorRef::Output) {
            std::string &v = tvar_[t] = names_.fresh("t" + std::to_string(t.index));
            os_ << "    " << v << " = _tangent_buffer(" << layouts_ << "[" << t.index << "])\n";
        } else {
            std::string &v = tvar_[t] = names_.fresh("d_temp" + std::to_string(t.index));
            std::string x = primal(a.launch, a.param, t);
            os_ << "    " << v << " = _tangent_buffer((" << x << ".shape, " << x << ".stride(), " << x << ".dtype, "
                << x << ".device))\n";
        }
    }

    std::string arg(size_t k, const Arg &a) const {
        switch (a.kind) {
        case Arg::Shadow: return tvar_.at(a.tensor);
        case Arg::Tensor: return primal(k, a.name, a.tensor);
        case Arg::Saved:
            return launches_ + "[" + std::to_string(k) + "].pre[" + py_literal(a.name, PyQuotes::Double) + "]";
        default: return a_ + "[" + py_literal(a.name, PyQuotes::Double) + "]";
        }
    }

    void call(size_t k, const plan::Run &r, const std::string &indent) {
        const std::string launch = launches_ + "[" + std::to_string(k) + "]";
        const ir::Function &kf = p_.kernels.at(static_cast<size_t>(r.kernel)).fn;
        std::vector<std::string> call;
        for (const Arg &a : r.args) call.push_back(arg(k, a));
        for (const ir::Constexpr &ce : kf.constexprs)
            call.push_back(ce.name + "=" + a_ + "[" + py_literal(ce.name, PyQuotes::Double) + "]");
        os_ << indent << kf.name << "[" << launch << ".grid](" << join(call) << ", **" << launch << ".options)\n";
    }

    void step(const plan::Step &s) {
        write_step(
            os_, s, launches_, a_,
            [&](const plan::Case &c, const std::string &indent) {
                call(s.launch, c.branches.front().runs.front(), indent);
            },
            [&](const std::string &shown, const std::string &) {
                return "no tangent kernel of " + s.kernel + " was generated for " + shown +
                       "; regenerate with a SWEEP entry that uses these values";
            });
    }

    // The launcher; its locals get names no stub parameter has.
    void launcher() {
        launches_ = names_.fresh("launches");
        a_ = names_.fresh("a");
        outs_ = names_.fresh("outs");
        layouts_ = names_.fresh("out_layouts");
        tangents_ = names_.fresh("tangents");
        std::vector<std::string> largs = {launches_};
        largs.insert(largs.end(), stub_.params.begin(), stub_.params.end());
        largs.insert(largs.end(), {outs_, layouts_, tangents_});
        fn_ = stub_.name + "_jvp";
        os_ << "def " << fn_ << "(" << join(largs) << "):\n";
        os_ << "    \"\"\"Tangents of the stub's outputs (J v, laid out like the outputs; None for one no kernel "
               "writes) "
               "for\n    recorded launches, from the tangents of GRAD_INPUTS (in their order, None: zero): each "
               "launch's tangent\n    kernel, in the forward's order, over one tangent buffer per tensor.\"\"\"\n";
        for (const Alloc &a : p_.prologue) alloc(a);
        for (const plan::Step &s : p_.steps) step(s);
        std::vector<std::string> rets;
        for (const plan::Result &r : p_.results) rets.push_back(r.present ? tvar_.at(r.tensor) : "None");
        os_ << "    return (" << join(rets) << (rets.size() == 1 ? ",)" : ")") << "\n";
    }

    void entry_point() {
        os_ << "\n\ndef jvp(*args, tangents=None, **kwargs):\n";
        os_ << "    \"\"\"`" << stub_.name
            << "` and its forward-mode derivative: (outputs, their tangents J v, laid out like them),\n"
               "    for tangents v of GRAD_INPUTS (see _tangent_list). Runs the stub once to record its "
               "launches.\"\"\"\n";
        os_ << "    values = list(_ARGUMENTS(args, kwargs))\n";
        os_ << "    tangent_list = _tangent_list(tangents)\n";
        os_ << "    with torch.no_grad():\n";
        os_ << "        with _capturing(_JVP_SNAPSHOTS) as launches:\n";
        os_ << "            out = " << stub_callable(stub_) << "(*values)\n";
        os_ << "        _check_launches(launches, _KERNELS)\n";
        os_ << "        outs = out if isinstance(out, tuple) else (out,)\n";
        os_ << "        layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) if isinstance(o, torch.Tensor) "
               "else None for o in outs]\n";
        os_ << "        touts = " << fn_ << "(launches, *values, outs, layouts, tangent_list)\n";
        os_ << "    return out, (touts if isinstance(out, tuple) else touts[0])\n";
    }
};

}  // namespace

std::string emit_jvp_section(const frontend::KernelFile &kf, const plan::Plan *tangent, const std::string &why) {
    if (!tangent) {
        std::ostringstream os;
        os << "\n\n# ---- forward mode (JVP): not generated, forward mode does not handle this kernel ----\n"
           << "JVP_UNSUPPORTED = " << py_literal(why, PyQuotes::Double) << "\n";
        return os.str();
    }
    return JvpWriter(kf, *tangent).run();
}

}  // namespace tad::emit::detail
