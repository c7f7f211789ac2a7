#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "emit/emit.h"
#include "support/error.h"

namespace tad::emit {

namespace {

// Names a statement defines at module level, and names an AST uses.
void used_names(const ast::NodePtr &n, std::set<std::string> &out) {
    if (!n) return;
    if (n->is("Name")) out.insert(n->str("id"));
    for (const auto &field : n->fields) {
        if (auto p = std::get_if<ast::NodePtr>(&field.second)) used_names(*p, out);
        else if (auto l = std::get_if<ast::NodeList>(&field.second))
            for (const auto &c : *l) used_names(c, out);
    }
}

std::vector<std::string> defined_names(const ast::Node &s) {
    std::vector<std::string> out;
    if (s.is("FunctionDef") || s.is("ClassDef")) out.push_back(s.str("name"));
    if (s.is("Assign"))
        for (const auto &t : s.list("targets"))
            if (t->is("Name")) out.push_back(t->str("id"));
    if (s.is("AnnAssign") && s.node("target")->is("Name")) out.push_back(s.node("target")->str("id"));
    return out;
}

bool is_tad_import(const ast::Node &s) {
    if (s.is("Import"))
        for (const auto &a : s.list("names"))
            if (a->str("name") == "tad") return true;
    return s.is("ImportFrom") && s.find("module") && std::holds_alternative<std::string>(*s.find("module")) &&
           s.str("module") == "tad";
}

// Source of a statement including its decorators; the stub's @tad.autodiff decorator is dropped.
std::string statement_source(const frontend::KernelFile &kf, const ast::Node &s, bool drop_autodiff) {
    ast::Loc loc = s.loc;
    if (s.is("FunctionDef") || s.is("ClassDef")) {
        const ast::NodeList &decs = s.list("decorator_list");
        std::string out;
        for (const auto &d : decs) {
            std::string text = kf.file.slice(d->loc);
            if (drop_autodiff && (text.rfind("tad.autodiff", 0) == 0 || text.rfind("autodiff", 0) == 0)) continue;
            out += "@" + text + "\n";
        }
        return out + kf.file.slice(loc);
    }
    return kf.file.slice(loc);
}

std::string class_name(const std::string &stub) {
    std::string out;
    bool up = true;
    for (char c : stub) {
        if (c == '_') {
            up = true;
            continue;
        }
        out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        up = false;
    }
    return out + "Function";
}

std::string join(const std::vector<std::string> &items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    return s;
}

std::string py_tuple(const std::vector<std::string> &items, bool quote) {
    std::string s = "(";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + (quote ? "\"" + items[i] + "\"" : items[i]);
    return s + (items.size() == 1 ? ",)" : ")");
}

const char *kRuntime = R"(# ---- launch recording: the backward reuses each forward launch's grid and scalar arguments ----
class _Launch:
    def __init__(self, grid, args, options):
        self.grid = grid
        self.args = args
        self.options = options


_capture = threading.local()


class _capturing:
    def __enter__(self):
        self.saved = getattr(_capture, "launches", None)
        _capture.launches = []
        return _capture.launches

    def __exit__(self, *exc):
        _capture.launches = self.saved


class _Recorded:
    """Launches a forward kernel and, inside _capturing(), records the launch: its grid and scalar
    arguments, including the config @triton.autotune chose and the values of @triton.heuristics."""

    def __init__(self, kernel):
        self.kernel = kernel
        fn = kernel
        while not inspect.isfunction(fn):
            fn = fn.fn
        self.signature = inspect.signature(fn)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            result = self.kernel[grid](*args, **kwargs)
            log = getattr(_capture, "launches", None)
            if log is not None:
                log.append(self._record(grid, args, kwargs))
            return result

        return launch

    def _record(self, grid, args, kwargs):
        params = self.signature.parameters
        options = {k: v for k, v in kwargs.items() if k not in params}
        values = dict(self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params}).arguments)
        layer = self.kernel
        while not inspect.isfunction(layer):
            config = getattr(layer, "best_config", None)
            if config is not None:
                values.update(config.kwargs)
                for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                    if getattr(config, name, None) is not None:
                        options.setdefault(name, getattr(config, name))
            for name, rule in getattr(layer, "values", {}).items():
                values.setdefault(name, rule(values))
            layer = layer.fn
        for name, p in params.items():
            if name not in values and p.default is not inspect.Parameter.empty:
                values[name] = p.default
        grid_ = grid(dict(values, **options)) if callable(grid) else grid
        grid_ = tuple(grid_) if isinstance(grid_, (tuple, list)) else (grid_,)
        scalars = {k: v for k, v in values.items() if not isinstance(v, torch.Tensor)}
        return _Launch(grid_, scalars, options)


def _as_layout(g, layout):
    """The incoming gradient with the strides of the forward output it belongs to."""
    shape, stride, dtype, device = layout
    if g is None:
        return torch.zeros(shape, dtype=dtype, device=device)
    if tuple(g.stride()) == stride and g.dtype == dtype:
        return g
    out = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    out.copy_(g)
    return out


def _atomic_buffer(t):
    """Gradient accumulated with atomics: float32 (float64 for float64 inputs), zero-filled."""
    return torch.zeros(t.shape, dtype=torch.float64 if t.dtype == torch.float64 else torch.float32, device=t.device)


def _store_buffer(t, mirror):
    """Gradient written with plain stores mirroring the forward's store to `mirror`: every element
    is written when `t` has the mirror's layout, otherwise unwritten elements must read as zero."""
    if tuple(t.shape) == tuple(mirror[0]) and tuple(t.stride()) == tuple(mirror[1]):
        return torch.empty_like(t)
    return torch.zeros_like(t)
)";

struct Mapping {
    std::map<std::string, int> input_of;   // kernel param -> stub input index
    std::map<std::string, int> output_of;  // kernel param -> stub output index
};

}  // namespace

std::string emit_module(const ModuleInput &in) {
    const frontend::KernelFile &kf = *in.kf;
    const frontend::StubInfo &stub = kf.stub;
    JsonRef launch = in.trace.at("launches")[0];

    Mapping map;
    for (size_t i = 0; i < launch.at("args").size(); ++i) {
        JsonRef a = launch.at("args")[i];
        if (a.str_or("kind", "") != "tensor") continue;
        JsonRef ref = a.at("ref");
        if (ref.has("input")) map.input_of[a.at("name").str()] = static_cast<int>(ref.at("input").integer());
        if (ref.has("output")) map.output_of[a.at("name").str()] = static_cast<int>(ref.at("output").integer());
    }
    size_t n_outputs = in.trace.at("outputs").size();

    std::ostringstream os;
    os << "# Generated by tad " << TAD_VERSION_MAJOR << "." << TAD_VERSION_MINOR << "." << TAD_VERSION_PATCH
       << " from " << kf.file.path << ": backward of stub `" << stub.name << "` with respect to ";
    for (size_t i = 0; i < stub.grad_inputs.size(); ++i) os << (i ? ", " : "") << stub.grad_inputs[i];
    os << ".\n# Backward kernels are reverse-mode derivatives of `" << in.kernel
       << "`: each program recomputes its forward values, then\n# propagates gradients in reverse. Regenerate "
          "with `tad generate`; do not edit.\n";
    os << "import inspect\nimport math\nimport threading\n\nimport torch\nimport triton\nimport triton.language as tl\n";
    os << "from triton.language.extra import libdevice\n\n";

    // Forward: imports, jit functions, the stub and module-level names it needs, in source order.
    std::set<std::string> needed;
    used_names(stub.def, needed);
    for (const auto &[name, def] : kf.jit_functions) used_names(def, needed);
    static const std::set<std::string> protocol = {"SWEEP", "make_args", "reference", "bytes", "flops"};
    const ast::NodeList &body = kf.file.module->list("body");
    std::vector<bool> take(body.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = body.size(); i-- > 0;) {
            if (take[i]) continue;
            const ast::Node &s = *body[i];
            bool want = false;
            for (const auto &n : defined_names(s))
                want = want || (needed.count(n) && !protocol.count(n)) || kf.jit_functions.count(n) || n == stub.name;
            if (want) {
                take[i] = changed = true;
                used_names(body[i], needed);
            }
        }
    }
    os << "# ---- forward, copied from " << kf.file.path << " ----\n";
    static const std::set<std::string> header_imports = {"import inspect", "import math", "import threading", "import torch", "import triton",
                                                         "import triton.language as tl",
                                                         "from triton.language.extra import libdevice"};
    bool imports = false;
    for (size_t i = 0; i < body.size(); ++i) {
        const ast::Node &s = *body[i];
        if ((s.is("Import") || s.is("ImportFrom")) && !is_tad_import(s) && !header_imports.count(kf.file.slice(s.loc))) {
            os << kf.file.slice(s.loc) << "\n";
            imports = true;
        }
    }
    if (imports) os << "\n";
    for (size_t i = 0; i < body.size(); ++i) {
        const ast::Node &s = *body[i];
        if (s.is("Import") || s.is("ImportFrom") || !take[i]) continue;
        os << "\n" << statement_source(kf, s, s.is("FunctionDef") && s.str("name") == stub.name) << "\n\n";
    }
    os << "\n" << kRuntime << "\n\n";
    for (const std::string &k : stub.launched) os << k << " = _Recorded(" << k << ")\n";
    os << "\n\n# ---- backward ----\n";
    for (const Specialization &sp : in.specializations)
    for (const Variant &v : sp.variants) {
        std::string doc = "Reverse mode of " + in.kernel;
        for (size_t i = 0; i < sp.key.size(); ++i) doc += (i ? ", " : " for ") + sp.key[i].first + "=" + sp.key[i].second;
        doc += ".";
        for (const auto &[param, w] : v.bwd.writes)
            doc += " d" + param + (w.kind == passes::GradWrite::Store ? ": plain stores (disjoint per program)." : ": relaxed atomic adds.");
        os << emit_kernel(v.bwd.fn, doc) << "\n\n";
        if (v.bwd.tape)
            os << emit_kernel(v.bwd.tape->fn, "Tape elements each program of " + v.bwd.fn.name +
                                                  " needs: its taped loops' trip counts times their carried state's size.")
               << "\n\n";
    }

    // The launcher. Its locals get names no stub parameter has (a stub may well take `a` or `out`).
    std::set<std::string> taken(stub.params.begin(), stub.params.end());
    auto fresh = [&](std::string n) {
        while (taken.count(n)) n += "_";
        taken.insert(n);
        return n;
    };
    const std::string launch_v = fresh("launch"), a_v = fresh("a"), layouts_v = fresh("out_layouts"), grads_v = fresh("grads");
    auto input_name = [&](int i) { return stub.params.at(static_cast<size_t>(i)); };
    std::map<std::string, std::string> grad_name;  // stub input -> its gradient's local
    auto grad_of = [&](const std::string &p) {
        auto it = grad_name.find(p);
        return it != grad_name.end() ? it->second : grad_name[p] = fresh("d_" + p);
    };
    std::set<std::string> saved;
    std::string fn = stub.name + "_backward";
    std::vector<std::string> largs = {launch_v};
    for (const std::string &p : stub.params) largs.push_back(p);
    largs.push_back(layouts_v);
    largs.push_back(grads_v);
    os << "def " << fn << "(" << join(largs) << "):\n";
    os << "    \"\"\"Gradients of the stub's inputs from the gradients of its outputs.\"\"\"\n";
    os << "    " << a_v << " = " << launch_v << ".args\n";
    std::set<std::string> grad_vars;
    // A forward argument the backward kernels read: a scalar of the recorded launch, or a stub input.
    auto primal_arg = [&](const ir::Param &p, const ad::ParamOrigin &o) {
        if (p.kind != ir::ParamKind::Pointer) return a_v + "[\"" + p.name + "\"]";
        if (!map.input_of.count(o.primal))
            fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": the backward of '" + in.kernel + "' reads '" + o.primal +
                                          "', which is not a stub input (saving intermediate buffers is not supported yet)");
        std::string var = input_name(map.input_of.at(o.primal));
        saved.insert(var);
        return var;
    };
    auto constexpr_args = [&](const ir::Function &f, std::vector<std::string> &args) {
        for (const ir::Constexpr &c : f.constexprs) args.push_back(c.name + "=" + a_v + "[\"" + c.name + "\"]");
    };
    const std::string tape_v = fresh("tape"), tape_stride_v = fresh("tape_stride"), need_v = fresh("tape_need");
    auto emit_variant = [&](const Variant &v, const std::string &indent) {
        std::vector<std::string> call_args, finals;
        if (v.bwd.tape) {
            // The tape's size is known only once each program's trip counts are: a sizing kernel
            // writes them, the largest sets the stride between programs' tapes.
            std::vector<std::string> size_args;
            const ad::TapeSizing &ts = *v.bwd.tape;
            for (size_t i = 0; i < ts.fn.params.size(); ++i)
                size_args.push_back(ts.origins[i].kind == ad::ParamOrigin::TapeNeed ? need_v : primal_arg(ts.fn.params[i], ts.origins[i]));
            constexpr_args(ts.fn, size_args);
            std::string device = layouts_v + "[0][3]";
            os << indent << need_v << " = torch.empty(math.prod(" << launch_v << ".grid), dtype=torch.int64, device=" << device << ")\n";
            os << indent << ts.fn.name << "[" << launch_v << ".grid](" << join(size_args) << ", **" << launch_v << ".options)\n";
            os << indent << tape_stride_v << " = max(int(" << need_v << ".max().item()), 1)\n";
            os << indent << tape_v << " = torch.empty(math.prod(" << launch_v << ".grid) * " << tape_stride_v
               << ", dtype=torch.float32, device=" << device << ")\n";
        }
        for (size_t i = 0; i < v.bwd.fn.params.size(); ++i) {
            const ir::Param &p = v.bwd.fn.params[i];
            const ad::ParamOrigin &o = v.bwd.origins[i];
            if (o.kind == ad::ParamOrigin::Tape || o.kind == ad::ParamOrigin::TapeStride) {
                call_args.push_back(o.kind == ad::ParamOrigin::Tape ? tape_v : tape_stride_v);
                continue;
            }
            if (p.kind != ir::ParamKind::Pointer || o.kind == ad::ParamOrigin::Primal) {
                call_args.push_back(primal_arg(p, o));
                continue;
            }
            if (map.output_of.count(o.primal)) {
                int j = map.output_of.at(o.primal);
                std::string var = fresh("g" + std::to_string(j));
                os << indent << var << " = _as_layout(" << grads_v << "[" << j << "], " << layouts_v << "[" << j << "])\n";
                call_args.push_back(var);
                continue;
            }
            std::string var = input_name(map.input_of.at(o.primal));
            std::string gvar = grad_of(var);
            grad_vars.insert(var);
            auto w = v.bwd.writes.find(o.primal);
            if (w != v.bwd.writes.end() && w->second.kind == passes::GradWrite::Store) {
                os << indent << gvar << " = _store_buffer(" << var << ", " << layouts_v << "[" << map.output_of.at(w->second.mirror) << "])\n";
            } else {
                os << indent << gvar << " = _atomic_buffer(" << var << ")\n";
                finals.push_back(gvar);
            }
            call_args.push_back(gvar);
        }
        constexpr_args(v.bwd.fn, call_args);
        os << indent << v.bwd.fn.name << "[" << launch_v << ".grid](" << join(call_args) << ", **" << launch_v << ".options)\n";
        std::vector<std::string> rets;
        for (const std::string &p : stub.params) {
            if (!grad_vars.count(p)) {
                rets.push_back("None");
                continue;
            }
            std::string g = grad_of(p);
            rets.push_back(std::find(finals.begin(), finals.end(), g) != finals.end() ? g + ".to(" + p + ".dtype)" : g);
        }
        os << indent << "return " << py_tuple(rets, false) << "\n";
    };
    // Static `if`s in the forward were resolved per specialization: dispatch on those constexprs.
    for (const Specialization &sp : in.specializations) {
        std::string indent = "    ";
        if (!sp.key.empty()) {
            std::string cond;
            for (size_t i = 0; i < sp.key.size(); ++i)
                cond += (i ? " and " : "") + a_v + "[\"" + sp.key[i].first + "\"] == " + sp.key[i].second;
            os << "    if " << cond << ":\n";
            indent = "        ";
        }
        for (const Variant &v : sp.variants) {
            if (v.guards.empty()) {
                emit_variant(v, indent);
                break;
            }
            std::string cond;
            for (size_t i = 0; i < v.guards.size(); ++i)
                cond += (i ? " and " : "") + a_v + "[\"" + v.guards[i].first + "\"] == " + a_v + "[\"" + v.guards[i].second + "\"]";
            os << indent << "if " << cond << ":\n";
            emit_variant(v, indent + "    ");
        }
    }
    if (!in.specializations.front().key.empty()) {
        std::string names, shown;
        for (const auto &[name, value] : in.specializations.front().key) {
            names += (names.empty() ? "" : ", ") + name;
            shown += std::string(shown.empty() ? "" : ", ") + name + "={" + a_v + "['" + name + "']!r}";
        }
        os << "    raise RuntimeError(f\"no backward was generated for " << shown << " (static ifs depend on " << names
           << "); regenerate with a SWEEP entry or a call that uses these values\")\n";
    }

    // The autograd.Function and the entry points. Gradient inputs are always saved (their gradient
    // buffers take their shape and device); other stub arguments reach the launcher as None.
    for (const std::string &g : stub.grad_inputs) saved.insert(g);
    std::string cls = class_name(stub.name);
    std::vector<std::string> saved_list, launcher_args;
    for (const std::string &p : stub.params) {
        if (saved.count(p)) saved_list.push_back(p);
        launcher_args.push_back(saved.count(p) ? p : "None");
    }
    taken = std::set<std::string>(stub.params.begin(), stub.params.end());
    const std::string ctx = fresh("ctx"), launches = fresh("launches"), out = fresh("out"), outs = fresh("outs"),
                      grads = fresh("grads");
    os << "\n\nclass " << cls << "(torch.autograd.Function):\n";
    os << "    @staticmethod\n    def forward(" << ctx << ", " << join(stub.params) << "):\n";
    os << "        with _capturing() as " << launches << ":\n";
    os << "            " << out << " = " << stub.name << "(" << join(stub.params) << ")\n";
    os << "        if len(" << launches << ") != 1:\n";
    os << "            raise RuntimeError(f\"" << stub.name << " launched {len(" << launches << ")} kernels; the backward was generated for one\")\n";
    os << "        " << outs << " = " << out << " if isinstance(" << out << ", tuple) else (" << out << ",)\n";
    os << "        " << ctx << ".launch = " << launches << "[0]\n";
    os << "        " << ctx << ".out_layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) for o in " << outs << "]\n";
    os << "        " << ctx << ".save_for_backward(" << join(saved_list) << ")\n";
    os << "        return " << out << "\n\n";
    os << "    @staticmethod\n    def backward(" << ctx << ", *" << grads << "):\n";
    os << "        " << join(saved_list) << (saved_list.size() == 1 ? "," : "") << " = " << ctx << ".saved_tensors\n";
    os << "        return " << fn << "(" << ctx << ".launch, " << join(launcher_args) << ", " << ctx << ".out_layouts, " << grads << ")\n";
    os << "\n\nGRAD_INPUTS = " << py_tuple(stub.grad_inputs, true) << "\n";
    os << "NUM_OUTPUTS = " << n_outputs << "\n";
    os << "_SIGNATURE = inspect.signature(" << stub.name << ")\n\n\n";
    os << "def forward(*args, **kwargs):\n";
    os << "    \"\"\"`" << stub.name << "` with a backward: same arguments and results, differentiable in GRAD_INPUTS.\"\"\"\n";
    os << "    bound = _SIGNATURE.bind(*args, **kwargs)\n";
    os << "    bound.apply_defaults()\n";
    os << "    return " << cls << ".apply(*bound.arguments.values())\n";
    os << emit_jvp_section(in);
    return os.str();
}

}  // namespace tad::emit
