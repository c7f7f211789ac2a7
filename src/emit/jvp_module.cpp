// The generated module's forward-mode section: tangent kernels, their launcher and `jvp()`.
#include <map>
#include <set>
#include <sstream>

#include "emit/module_internal.h"
#include "emit/templates.h"
#include "passes/passes.h"

namespace tad::emit {

namespace {

using detail::join;

std::string one_line(std::string s) {
    for (char &c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

std::string py_string(const std::string &s) {
    std::string out = "\"";
    for (char c : one_line(s)) out += (c == '\\' || c == '"' ? "\\" : "") + std::string(1, c);
    return out + "\"";
}

}  // namespace

std::string emit_jvp_section(const ModuleInput &in) {
    const frontend::StubInfo &stub = in.kf->stub;
    std::ostringstream os;
    std::string why = in.jvp_unsupported;
    bool any = false;
    for (const LaunchBackward &l : in.launches)
        for (const Tangent &t : l.tangents) {
            any = true;
            if (!t.jvp && why.empty()) why = t.unsupported;
        }
    if (why.empty() && !any) why = "no tangent kernel was derived";
    if (!why.empty()) {
        os << "\n\n# ---- forward mode (JVP): not generated, forward mode does not handle this kernel ----\n# "
           << one_line(why) << "\nJVP_UNSUPPORTED = " << py_string(why) << "\n";
        return os.str();
    }
    os << "\n\n# ---- forward mode (JVP): the tangents J v of the outputs from tangents v of GRAD_INPUTS ----\n";
    os << "JVP_UNSUPPORTED = None\n\n\n";
    for (const LaunchBackward &l : in.launches)
        for (const Tangent &t : l.tangents) {
            std::string doc = "Forward mode of " + l.kernel;
            for (size_t i = 0; i < t.key.size(); ++i)
                doc += (i ? ", " : " for ") + t.key[i].first + "=" + t.key[i].second;
            doc += ": the outputs' tangents into their shadows from the inputs' tangents in theirs.";
            os << "@_fit_shared_memory\n" << emit_kernel(t.jvp->fn, doc) << "\n\n";
        }
    os << template_text("jvp_helpers.py") << "\n\n";  // tangents and tangent buffers
    // The launcher; its locals get names no stub parameter has.
    detail::Names names(stub.params);
    auto fresh = [&](const std::string &n) { return names.fresh(n); };
    const std::string launches_v = fresh("launches"), a_v = fresh("a"), outs_v = fresh("outs"),
                      layouts_v = fresh("out_layouts"), tangents_v = fresh("tangents");
    std::vector<std::string> largs = {launches_v};
    largs.insert(largs.end(), stub.params.begin(), stub.params.end());
    largs.insert(largs.end(), {outs_v, layouts_v, tangents_v});
    const std::string fn = stub.name + "_jvp";
    os << "def " << fn << "(" << join(largs) << "):\n";
    os << "    \"\"\"Tangents of the stub's outputs (J v, laid out like the outputs; None for one no kernel writes) "
          "for\n"
          "    recorded launches, from the tangents of GRAD_INPUTS (in their order, None: zero): each launch's "
          "tangent\n"
          "    kernel, in the forward's order, over one tangent buffer per tensor.\"\"\"\n";
    // One tangent buffer per tensor, made before the launches: an input's from its tangent, an
    // output's or a temporary's zeroed. The tangent kernels update them in the forward's order, as
    // the forward updates the tensors.
    std::map<TensorRef, std::string> tvar;
    std::set<TensorRef> written;  // tensors whose tangent some tangent kernel stores or adds to
    for (const LaunchBackward &l : in.launches)
        for (const Tangent &t : l.tangents) {
            passes::MemoryParams m = passes::memory_params(t.jvp->fn);
            for (size_t i = 0; i < t.jvp->fn.params.size(); ++i) {
                const std::string &p = t.jvp->fn.params[i].name;
                if (t.jvp->origins[i].kind == ad::ParamOrigin::Shadow && (m.stored.count(p) || m.accumulated.count(p)))
                    written.insert(l.tensors.at(t.jvp->origins[i].primal));
            }
        }
    auto primal = [&](size_t k, const std::string &param) {
        TensorRef t = in.launches[k].tensors.at(param);
        if (t.kind == TensorRef::Input) return stub.params.at(static_cast<size_t>(t.index));
        if (t.kind == TensorRef::Output) return outs_v + "[" + std::to_string(t.index) + "]";
        return launches_v + "[" + std::to_string(k) + "].tensors[\"" + param + "\"]";
    };
    // A tensor's contents as launch k saw them: a copy saved before the launch that overwrote them.
    std::set<std::tuple<size_t, size_t, std::string>> snapshots;
    auto primal_as_seen = [&](size_t k, const std::string &param) {
        auto saved = in.launches[k].saved_before.find(param);
        if (saved == in.launches[k].saved_before.end()) return primal(k, param);
        snapshots.insert({saved->second, k, param});
        return launches_v + "[" + std::to_string(k) + "].pre[\"" + param + "\"]";
    };
    for (size_t k = 0; k < in.launches.size(); ++k)
        for (const Tangent &t : in.launches[k].tangents)
            for (size_t i = 0; i < t.jvp->fn.params.size(); ++i) {
                const ad::ParamOrigin &o = t.jvp->origins[i];
                if (o.kind != ad::ParamOrigin::Shadow) continue;
                TensorRef ref = in.launches[k].tensors.at(o.primal);
                if (tvar.count(ref)) continue;
                if (ref.kind == TensorRef::Input) {
                    const std::string &x = stub.params.at(static_cast<size_t>(ref.index));
                    size_t g = 0;
                    while (g < stub.grad_inputs.size() && stub.grad_inputs[g] != x) ++g;
                    tvar[ref] = fresh("d_" + x);
                    if (g == stub.grad_inputs.size())  // a stub input written by a launch: its tangent starts at zero
                        os << "    " << tvar[ref] << " = _tangent_of(None, " << x << ")\n";
                    else
                        os << "    " << tvar[ref] << " = _tangent_of(" << tangents_v << "[" << g << "], " << x
                           << (written.count(ref) ? ", written=True" : "") << ")\n";
                } else if (ref.kind == TensorRef::Output) {
                    tvar[ref] = fresh("t" + std::to_string(ref.index));
                    os << "    " << tvar[ref] << " = _tangent_buffer(" << layouts_v << "[" << ref.index << "])\n";
                } else {
                    tvar[ref] = fresh("d_temp" + std::to_string(ref.index));
                    std::string x = primal(k, o.primal);
                    os << "    " << tvar[ref] << " = _tangent_buffer((" << x << ".shape, " << x << ".stride(), " << x
                       << ".dtype, " << x << ".device))\n";
                }
            }
    for (size_t k = 0; k < in.launches.size(); ++k) {
        const LaunchBackward &l = in.launches[k];
        if (l.tangents.empty()) continue;
        const std::string launch = launches_v + "[" + std::to_string(k) + "]";
        os << "    # launch " << k << ": " << l.kernel << "\n";
        os << "    " << a_v << " = " << launch << ".args\n";
        // Static ifs were resolved per specialization: dispatch on those constexprs, as the backward.
        const bool keyed = !l.tangents.front().key.empty();
        for (size_t s = 0; s < l.tangents.size(); ++s) {
            const Tangent &t = l.tangents[s];
            std::string indent = "    ";
            if (keyed) {
                std::string cond;
                for (size_t i = 0; i < t.key.size(); ++i)
                    cond += (i ? " and " : "") + a_v + "[\"" + t.key[i].first + "\"] == " + t.key[i].second;
                os << "    " << (s ? "elif " : "if ") << cond << ":\n";
                indent = "        ";
            }
            const ir::Function &kf = t.jvp->fn;
            std::vector<std::string> call;
            for (size_t i = 0; i < kf.params.size(); ++i) {
                const ir::Param &p = kf.params[i];
                const ad::ParamOrigin &o = t.jvp->origins[i];
                if (o.kind == ad::ParamOrigin::Shadow)
                    call.push_back(tvar.at(l.tensors.at(o.primal)));
                else if (p.kind == ir::ParamKind::Pointer)
                    call.push_back(primal_as_seen(k, p.name));
                else
                    call.push_back(a_v + "[\"" + p.name + "\"]");
            }
            for (const ir::Constexpr &c : kf.constexprs) call.push_back(c.name + "=" + a_v + "[\"" + c.name + "\"]");
            os << indent << kf.name << "[" << launch << ".grid](" << join(call) << ", **" << launch << ".options)\n";
        }
        if (keyed) {
            std::string shown;
            for (const auto &[name, value] : l.tangents.front().key)
                shown += std::string(shown.empty() ? "" : ", ") + name + "={" + a_v + "['" + name + "']!r}";
            os << "    else:\n        raise RuntimeError(f\"no tangent kernel of " << l.kernel << " was generated for "
               << shown << "; regenerate with a SWEEP entry that uses these values\")\n";
        }
    }
    std::vector<std::string> rets;
    for (size_t j = 0; j < in.num_outputs; ++j) {
        // An output that is a stub input updated in place has that input's tangent buffer.
        auto alias = in.aliases.find(static_cast<int>(j));
        TensorRef ref = alias == in.aliases.end() ? TensorRef{TensorRef::Output, static_cast<int>(j)}
                                                  : TensorRef{TensorRef::Input, alias->second};
        auto it = tvar.find(ref);
        rets.push_back(it == tvar.end() ? "None" : it->second);
    }
    os << "    return (" << join(rets) << (rets.size() == 1 ? ",)" : ")") << "\n";
    // Before launch m, the copies the tangent kernels read: (k, parameter) of launch k <= m.
    os << "\n\n_JVP_SNAPSHOTS = " << detail::snapshot_table(snapshots) << "\n";

    os << "\n\ndef jvp(*args, tangents=None, **kwargs):\n";
    os << "    \"\"\"`" << stub.name
       << "` and its forward-mode derivative: (outputs, their tangents J v, laid out like them),\n"
          "    for tangents v of GRAD_INPUTS (see _tangent_list). Runs the stub once to record its launches.\"\"\"\n";
    os << "    bound = _SIGNATURE.bind(*args, **kwargs)\n";
    os << "    bound.apply_defaults()\n";
    os << "    values = list(bound.arguments.values())\n";
    os << "    tangent_list = _tangent_list(tangents)\n";
    os << "    with torch.no_grad():\n";
    os << "        with _capturing(_JVP_SNAPSHOTS) as launches:\n";
    os << "            out = " << stub.name << "(*values)\n";
    os << "        _check_launches(launches, _KERNELS)\n";
    os << "        outs = out if isinstance(out, tuple) else (out,)\n";
    os << "        layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) for o in outs]\n";
    os << "        touts = " << fn << "(launches, *values, outs, layouts, tangent_list)\n";
    os << "    return out, (touts if isinstance(out, tuple) else touts[0])\n";
    return os.str();
}

}  // namespace tad::emit
