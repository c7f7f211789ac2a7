// The generated module's forward-mode section: tangent kernels, their launcher and `jvp()`.
#include <map>
#include <set>
#include <sstream>

#include "emit/emit.h"

namespace tad::emit {

namespace {

std::string join(const std::vector<std::string> &items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    return s;
}

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

// Tangents as the launcher receives them, and the buffers it gives the tangent kernel.
const char *kHelpers = R"(def _tangent_list(tangents):
    """Tangents of GRAD_INPUTS in their order, from a sequence in that order, a dict by name or, with
    one gradient input, a tensor; None (or a name left out) is a zero tangent."""
    if tangents is None:
        return [None] * len(GRAD_INPUTS)
    if isinstance(tangents, dict):
        unknown = sorted(set(tangents) - set(GRAD_INPUTS))
        if unknown:
            raise TypeError(f"tangents for {unknown}, which are not GRAD_INPUTS {GRAD_INPUTS}")
        return [tangents.get(name) for name in GRAD_INPUTS]
    tangents = [tangents] if torch.is_tensor(tangents) else list(tangents)
    if len(tangents) != len(GRAD_INPUTS):
        raise TypeError(f"{len(tangents)} tangents for {len(GRAD_INPUTS)} GRAD_INPUTS {GRAD_INPUTS}")
    return tangents


def _tangent_of(v, x):
    """An input's tangent with the input's layout and dtype: the tangent kernel addresses it as the input."""
    out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device)
    if v is None:
        return out.zero_()
    if tuple(v.shape) != tuple(x.shape):
        raise ValueError(f"a tangent of shape {list(v.shape)} for an input of shape {list(x.shape)}")
    if tuple(v.stride()) == tuple(x.stride()) and v.dtype == x.dtype and v.device == x.device:
        return v
    return out.copy_(v)


def _tangent_buffer(layout):
    """An output's tangent, laid out like the output; zero where the forward stores nothing."""
    shape, stride, dtype, device = layout
    return torch.empty_strided(shape, stride, dtype=dtype, device=device).zero_()
)";

}  // namespace

std::string emit_jvp_section(const ModuleInput &in) {
    const frontend::StubInfo &stub = in.kf->stub;
    std::ostringstream os;
    std::string why = in.tangents.empty() ? "no tangent kernel was derived" : "";
    for (const Tangent &t : in.tangents)
        if (!t.jvp && why.empty()) why = t.unsupported;
    if (!why.empty()) {
        os << "\n\n# ---- forward mode (JVP): not generated, forward mode does not handle this kernel ----\n# " << one_line(why)
           << "\nJVP_UNSUPPORTED = " << py_string(why) << "\n";
        return os.str();
    }

    // Kernel parameter -> stub input / output index, from the recorded launch.
    std::map<std::string, int> input_of, output_of;
    for (const auto &[param, t] : in.launches.front().tensors) {
        if (t.kind == TensorRef::Input) input_of[param] = t.index;
        if (t.kind == TensorRef::Output) output_of[param] = t.index;
    }
    const std::string &kernel = in.launches.front().kernel;

    os << "\n\n# ---- forward mode (JVP): the tangents J v of the outputs from tangents v of GRAD_INPUTS ----\n";
    os << "JVP_UNSUPPORTED = None\n\n\n";
    for (const Tangent &t : in.tangents) {
        std::string doc = "Forward mode of " + kernel;
        for (size_t i = 0; i < t.key.size(); ++i) doc += (i ? ", " : " for ") + t.key[i].first + "=" + t.key[i].second;
        doc += ": the outputs' tangents into their shadows from the inputs' tangents in theirs.";
        os << emit_kernel(t.jvp->fn, doc) << "\n\n";
    }
    os << kHelpers << "\n\n";

    // The launcher; its locals get names no stub parameter has.
    std::set<std::string> taken(stub.params.begin(), stub.params.end());
    auto fresh = [&](std::string n) {
        while (taken.count(n)) n += "_";
        taken.insert(n);
        return n;
    };
    const std::string launch_v = fresh("launch"), a_v = fresh("a"), layouts_v = fresh("out_layouts"), tangents_v = fresh("tangents");
    std::vector<std::string> largs = {launch_v};
    largs.insert(largs.end(), stub.params.begin(), stub.params.end());
    largs.push_back(layouts_v);
    largs.push_back(tangents_v);
    const std::string fn = stub.name + "_jvp";
    os << "def " << fn << "(" << join(largs) << "):\n";
    os << "    \"\"\"Tangents of the stub's outputs (J v, laid out like the outputs; None for one the kernel does not\n"
          "    write) for a recorded launch, from the tangents of GRAD_INPUTS (in their order, None: zero).\"\"\"\n";
    os << "    " << a_v << " = " << launch_v << ".args\n";
    // Every tangent is made before the dispatch: they depend on the stub's tensors, not on the branch.
    std::map<int, std::string> out_var;
    for (const auto &[param, j] : output_of) {
        if (out_var.count(j)) continue;
        out_var[j] = fresh("t" + std::to_string(j));
        os << "    " << out_var[j] << " = _tangent_buffer(" << layouts_v << "[" << j << "])\n";
    }
    std::map<std::string, std::string> in_var;  // kernel parameter -> its tangent's local
    for (const Tangent &t : in.tangents)
        for (size_t i = 0; i < t.jvp->fn.params.size(); ++i) {
            const ad::ParamOrigin &o = t.jvp->origins[i];
            if (o.kind != ad::ParamOrigin::Shadow || !input_of.count(o.primal) || in_var.count(o.primal)) continue;
            const std::string &x = stub.params.at(static_cast<size_t>(input_of.at(o.primal)));
            size_t k = 0;
            while (k < stub.grad_inputs.size() && stub.grad_inputs[k] != x) ++k;
            in_var[o.primal] = fresh("d_" + x);
            os << "    " << in_var[o.primal] << " = _tangent_of(" << tangents_v << "[" << k << "], " << x << ")\n";
        }
    std::vector<std::string> rets;
    for (size_t j = 0; j < in.num_outputs; ++j)
        rets.push_back(out_var.count(static_cast<int>(j)) ? out_var.at(static_cast<int>(j)) : "None");
    std::string ret = "return (" + join(rets) + (rets.size() == 1 ? ",)" : ")");

    // Static ifs were resolved per specialization: dispatch on those constexprs, as the backward.
    for (const Tangent &t : in.tangents) {
        std::string indent = "    ";
        if (!t.key.empty()) {
            std::string cond;
            for (size_t i = 0; i < t.key.size(); ++i) cond += (i ? " and " : "") + a_v + "[\"" + t.key[i].first + "\"] == " + t.key[i].second;
            os << "    if " << cond << ":\n";
            indent = "        ";
        }
        const ir::Function &k = t.jvp->fn;
        std::vector<std::string> call;
        for (size_t i = 0; i < k.params.size(); ++i) {
            const ir::Param &p = k.params[i];
            const ad::ParamOrigin &o = t.jvp->origins[i];
            if (o.kind == ad::ParamOrigin::Shadow)
                call.push_back(output_of.count(o.primal) ? out_var.at(output_of.at(o.primal)) : in_var.at(o.primal));
            else if (p.kind == ir::ParamKind::Pointer)
                call.push_back(stub.params.at(static_cast<size_t>(input_of.at(p.name))));
            else
                call.push_back(a_v + "[\"" + p.name + "\"]");
        }
        for (const ir::Constexpr &c : k.constexprs) call.push_back(c.name + "=" + a_v + "[\"" + c.name + "\"]");
        os << indent << k.name << "[" << launch_v << ".grid](" << join(call) << ", **" << launch_v << ".options)\n";
        os << indent << ret << "\n";
    }
    if (!in.tangents.front().key.empty()) {
        std::string shown;
        for (const auto &[name, value] : in.tangents.front().key)
            shown += std::string(shown.empty() ? "" : ", ") + name + "={" + a_v + "['" + name + "']!r}";
        os << "    raise RuntimeError(f\"no tangent kernel was generated for " << shown << "; regenerate with a SWEEP entry that uses these values\")\n";
    }

    os << "\n\ndef jvp(*args, tangents=None, **kwargs):\n";
    os << "    \"\"\"`" << stub.name << "` and its forward-mode derivative: (outputs, their tangents J v, laid out like them),\n"
          "    for tangents v of GRAD_INPUTS (see _tangent_list). Runs the stub once to record its launch.\"\"\"\n";
    os << "    bound = _SIGNATURE.bind(*args, **kwargs)\n";
    os << "    bound.apply_defaults()\n";
    os << "    values = list(bound.arguments.values())\n";
    os << "    tangent_list = _tangent_list(tangents)\n";
    os << "    with torch.no_grad():\n";
    os << "        with _capturing() as launches:\n";
    os << "            out = " << stub.name << "(*values)\n";
    os << "        if len(launches) != 1:\n";
    os << "            raise RuntimeError(f\"" << stub.name << " launched {len(launches)} kernels; forward mode was generated for one\")\n";
    os << "        outs = out if isinstance(out, tuple) else (out,)\n";
    os << "        layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) for o in outs]\n";
    os << "        touts = " << fn << "(launches[0], *values, layouts, tangent_list)\n";
    os << "    return out, (touts if isinstance(out, tuple) else touts[0])\n";
    return os.str();
}

}  // namespace tad::emit
