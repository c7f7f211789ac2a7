#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "ad/tape.h"
#include "emit/module_internal.h"
#include "emit/templates.h"
#include "passes/passes.h"
#include "passes/write_parts.h"
#include "support/error.h"
#include "support/py_literal.h"

namespace tad::emit {

namespace detail {

std::string py_tuple(const std::vector<std::string> &items, bool quote) {
    std::string s = "(";
    for (size_t i = 0; i < items.size(); ++i)
        s += (i ? ", " : "") + (quote ? py_literal(items[i], PyQuotes::Double) : items[i]);
    return s + (items.size() == 1 ? ",)" : ")");
}

std::string stub_callable(const frontend::StubInfo &stub) {
    const bool shadowed = std::find(stub.params.begin(), stub.params.end(), stub.name) != stub.params.end();
    return shadowed || stub.name == "forward" || stub.name == "jvp" ? "_stub_" + stub.name : stub.name;
}

std::string snapshot_table(const std::vector<plan::Snapshot> &snapshots, const std::map<size_t, std::string> &tests) {
    std::map<size_t, std::vector<std::string>> before;
    for (const plan::Snapshot &sn : snapshots) {
        std::vector<std::string> entry = {std::to_string(sn.launch), py_literal(sn.param, PyQuotes::Double)};
        auto t = tests.find(sn.launch);
        if (t != tests.end()) entry.push_back(t->second);
        before[sn.before].push_back(py_tuple(entry, false));
    }
    std::string s = "{";
    for (auto it = before.begin(); it != before.end(); ++it)
        s += (it == before.begin() ? "" : ", ") + std::to_string(it->first) + ": " + py_tuple(it->second, false);
    return s + "}";
}

}  // namespace detail

namespace {

using detail::join;
using detail::py_tuple;

// Names a statement defines at module level, and names an AST uses.
void used_names(const ast::NodePtr &n, std::set<std::string> &out) {
    if (!n) return;
    if (n->is("Name")) out.insert(n->str("id"));
    for (const auto &field : n->fields) {
        if (auto p = std::get_if<ast::NodePtr>(&field.second))
            used_names(*p, out);
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

// Whether `f` multiplies float32 tiles at TF32 precision (Triton's default for tl.dot on float32).
bool uses_tf32(const ir::Function &f) {
    for (const ir::Op &op : f.ops)
        if (op.kind == ir::OpKind::Dot && f.type(op.operands[0]).elem == ir::DType::F32 &&
            (op.name.empty() || op.name == "tf32"))
            return true;
    return false;
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

// The forward file's statements the module copies: jit functions, the stub and the module-level
// names they use (protocol functions excepted), and TAD_DIFFERENTIATE_AS and TAD_DERIVATIVES, which
// lowering the copy reads, in source order.
std::vector<bool> forward_statements(const frontend::KernelFile &kf) {
    std::set<std::string> needed = {"TAD_DIFFERENTIATE_AS", "TAD_DERIVATIVES"};
    used_names(kf.stub.def, needed);
    for (const auto &[name, def] : kf.jit_functions) used_names(def, needed);
    static const std::set<std::string> protocol = {"SWEEP", "make_args", "reference", "bytes", "flops"};
    const ast::NodeList &body = kf.file.module->list("body");
    std::vector<bool> take(body.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = body.size(); i-- > 0;) {
            if (take[i]) continue;
            bool want = false;
            for (const auto &n : defined_names(*body[i]))
                want =
                    want || (needed.count(n) && !protocol.count(n)) || kf.jit_functions.count(n) || n == kf.stub.name;
            if (want) {
                take[i] = changed = true;
                used_names(body[i], needed);
            }
        }
    }
    return take;
}

bool is_future_import(const ast::File &file, const ast::Node &s) {
    return s.is("ImportFrom") && file.slice(s.loc).rfind("from __future__", 0) == 0;
}

class ModuleWriter {
public:
    ModuleWriter(const frontend::KernelFile &kf, const plan::Plan &bwd, const frontend::KernelFile *original = nullptr)
        : kf_(kf), stub_(kf.stub), bwd_(bwd), original_(original) {}

    // The header and the forward's copy (detail::module_head).
    std::string head() {
        header();
        forward_copy();
        return os_.str();
    }

    // The plan's kernels (detail::backward_kernels).
    std::string kernel_text() {
        kernels();
        return os_.str();
    }

    std::string run(const plan::Plan *tangent, const std::string &jvp_unsupported) {
        header();
        forward_copy();
        os_ << "\n" << template_text("module_runtime.py") << "\n\n";
        std::set<std::string> recorded;  // a kernel launched twice in the stub's source is wrapped once
        for (const std::string &k : stub_.launched) {
            if (!recorded.insert(k).second) continue;
            const std::string twin = twin_without_saves(k);
            os_ << k << " = _Recorded(" << k << (twin.empty() ? "" : ", plain=" + twin) << ")\n";
        }
        os_ << "\n\n# ---- backward ----\n";
        kernels();
        launcher_ = detail::emit_launcher(kf_, bwd_);
        os_ << launcher_.source;
        function_class();
        entry_point(tangent);
        os_ << detail::emit_jvp_section(kf_, tangent, jvp_unsupported);
        return os_.str();
    }

private:
    const frontend::KernelFile &kf_;
    const frontend::StubInfo &stub_;
    const plan::Plan &bwd_;
    const frontend::KernelFile *original_;

    // Kernel k as the user wrote it, renamed `<k>_without_saves`, where k stores residuals (a
    // TAD_SAVED_ parameter) and is a plain @triton.jit def of the module; its name, or "".
    std::string twin_without_saves(const std::string &k) {
        auto edited = kf_.jit_functions.find(k);
        if (!original_ || edited == kf_.jit_functions.end() || !original_->jit_functions.count(k)) return "";
        const std::vector<std::string> params = frontend::param_names(*edited->second);
        if (std::none_of(params.begin(), params.end(),
                         [](const std::string &p) { return p.rfind(frontend::kResidualPrefix, 0) == 0; }))
            return "";
        const ast::Node &def = *original_->jit_functions.at(k);
        const ast::NodeList &decorators = def.list("decorator_list");
        if (!def.is("FunctionDef") || def.str("name") != k || decorators.size() != 1 ||
            !frontend::is_jit_decorator(*decorators[0]))
            return "";
        std::string text = statement_source(*original_, def, false);
        const std::string head = "def " + k + "(", twin = k + kTwinSuffix;
        const size_t at = text.find(head);
        if (at == std::string::npos) return "";
        text.replace(at, head.size(), "def " + twin + "(");
        os_ << text << "\n\n\n";
        return twin;
    }
    std::ostringstream os_;
    detail::Launcher launcher_;

    void header() {
        os_ << "# Generated by tad " << TAD_VERSION_MAJOR << "." << TAD_VERSION_MINOR << "." << TAD_VERSION_PATCH
            << " from " << py_literal(kf_.file.path) << ": backward of stub `" << stub_.name << "` with respect to ";
        for (size_t i = 0; i < stub_.grad_inputs.size(); ++i) os_ << (i ? ", " : "") << stub_.grad_inputs[i];
        os_ << ".\n# Backward kernels are reverse-mode derivatives of ";
        std::vector<std::string> kernels;
        for (const std::string &k : bwd_.launched)
            if (std::find(kernels.begin(), kernels.end(), "`" + k + "`") == kernels.end())
                kernels.push_back("`" + k + "`");
        os_ << join(kernels)
            << ": each program recomputes its forward values,\n# then propagates gradients in reverse. Regenerate "
               "with `tad generate`; do not edit.\n";
        // Python accepts `from __future__` imports only before every other statement.
        for (const ast::NodePtr &s : kf_.file.module->list("body"))
            if (is_future_import(kf_.file, *s)) os_ << kf_.file.slice(s->loc) << "\n";
        os_ << "import inspect\nimport json\nimport math\nimport os\nimport threading\n\nimport torch\nimport "
               "triton\nimport "
               "triton.language as tl\n";
        os_ << "from triton.language.extra import libdevice\n\n";
    }

    // The forward's imports, jit functions, stub and the module-level names it needs.
    void forward_copy() {
        std::vector<bool> take = forward_statements(kf_);
        const ast::NodeList &body = kf_.file.module->list("body");
        os_ << "# ---- forward, copied from " << py_literal(kf_.file.path) << " ----\n";
        static const std::set<std::string> header_imports = {"import inspect",
                                                             "import json",
                                                             "import math",
                                                             "import os",
                                                             "import threading",
                                                             "import torch",
                                                             "import triton",
                                                             "import triton.language as tl",
                                                             "from triton.language.extra import libdevice"};
        bool imports = false;
        for (const ast::NodePtr &s : body)
            if ((s->is("Import") || s->is("ImportFrom")) && !is_tad_import(*s) && !is_future_import(kf_.file, *s) &&
                !header_imports.count(kf_.file.slice(s->loc))) {
                os_ << kf_.file.slice(s->loc) << "\n";
                imports = true;
            }
        if (imports) os_ << "\n";
        for (size_t i = 0; i < body.size(); ++i) {
            const ast::Node &s = *body[i];
            if (s.is("Import") || s.is("ImportFrom") || !take[i]) continue;
            const bool stub = s.is("FunctionDef") && s.str("name") == stub_.name;
            std::string text = statement_source(kf_, s, stub);
            // A stub named like an entry point of the module is copied under another name.
            const size_t def = text.find("def " + stub_.name + "(");
            if (stub && def != std::string::npos)
                text.replace(def + 4, stub_.name.size(), detail::stub_callable(stub_));
            os_ << "\n" << text << "\n\n";
        }
    }

    // Whether `f` writes its accumulator parameter `param` by plain stores only: its updates in place
    // (passes/updates_to_stores.h).
    static bool stored_in_place(const ir::Function &f, const std::string &param) {
        bool stores = false;
        for (const ir::Op &op : f.ops) {
            if ((op.kind != ir::OpKind::Store && op.kind != ir::OpKind::AtomicAdd) ||
                passes::pointer_base(f, op.operands[0]) != param)
                continue;
            if (op.kind == ir::OpKind::AtomicAdd) return false;
            stores = true;
        }
        return stores;
    }

    // How a backward kernel writes one gradient (its docstring).
    static std::string write_doc(const plan::Kernel &k, const std::string &grad, const passes::GradWrite &w) {
        if (k.split_axis >= 0) {
            plan::Kernel whole = k;
            whole.split_axis = -1;
            const std::string doc = write_doc(whole, grad, w);
            return doc.substr(0, doc.size() - 1) + ", over this program's share of the loops' iterations (split " +
                   "across grid axis " + std::to_string(k.split_axis) + ").";
        }
        if (k.transposed_axis >= 0)
            return ": loop transposed: each program owns a tile and sums over grid axis " +
                   std::to_string(k.transposed_axis) + "'s programs in registers, then stores it once.";
        if (w.kind == passes::GradWrite::Store && w.split)
            return ": plain stores (disjoint per program), but for those at data-dependent addresses, which a "
                   "kernel run after it adds.";
        if (w.kind == passes::GradWrite::Store) return ": plain stores (disjoint per program).";
        if (w.split) return ": relaxed atomic adds at data-dependent addresses, onto what the kernel before stored.";
        if (!k.regrid ||
            std::find(k.regrid->accumulated.begin(), k.regrid->accumulated.end(), grad) == k.regrid->accumulated.end())
            return stored_in_place(k.fn, grad) ? ": read, updated and stored in place (each element by one program)."
                                               : ": relaxed atomic adds.";
        for (const auto &[g, stride] : k.regrid->partial)
            if (g == grad) return ": summed per program, one row of a partial buffer per program.";
        return ": summed per program, one relaxed atomic add per program.";
    }

    void kernels() {
        for (const plan::Kernel &k : bwd_.kernels) {
            if (k.role == plan::Kernel::TapeSizing) {
                if (ad::host_need(k.fn)) continue;  // the launcher computes the need on the host
                os_ << emit_kernel(k.fn, "Tape elements each program of " + k.sized +
                                             " needs: its taped loops' trip counts times their carried state's size.")
                    << "\n\n";
                continue;
            }
            std::string doc = "Reverse mode of " + k.forward;
            for (size_t i = 0; i < k.key.size(); ++i)
                doc += (i ? ", " : " for ") + k.key[i].first + "=" + k.key[i].second;
            doc += ".";
            for (const auto &[param, w] : k.writes)
                doc += " " + ad::shadow_name(param) + write_doc(k, ad::shadow_name(param), w);
            os_ << decorator(k.fn) << "\n" << emit_kernel(k.fn, doc, true) << "\n\n";
        }
    }

    // `@_tuned("DX", ...)` for a kernel that writes those tensors and reads none of them (it can be
    // timed on copies: module_runtime.py's _Tuner), else `@_fit_shared_memory`; `parts=N` where the
    // kernel's writes come in parts (passes/write_parts.h), which its wrapper may launch in turn.
    static std::string decorator(const ir::Function &fn) {
        const passes::MemoryParams m = passes::memory_params(fn);
        std::string names;
        for (const std::string &p : m.stored) {
            if (m.loaded.count(p)) return "@_fit_shared_memory";
            names += (names.empty() ? "" : ", ") + py_literal(p, PyQuotes::Double);
        }
        if (names.empty()) return "@_fit_shared_memory";
        const int parts = passes::part_count(passes::write_parts(fn));
        return "@_tuned(" + names + (parts ? ", parts=" + std::to_string(parts) : "") + ")";
    }

    std::vector<std::string> dirty() const {
        std::vector<std::string> out;
        for (const auto &[j, i] : bwd_.aliases) out.push_back(stub_.params.at(static_cast<size_t>(i)));
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    // The autograd.Function. Gradient inputs are always saved (their gradient buffers take their
    // shape and device); other stub arguments reach the launcher as None.
    void function_class() {
        std::set<std::string> saved = launcher_.inputs;
        for (const std::string &g : stub_.grad_inputs) saved.insert(g);
        detail::Names names(stub_.params);
        const std::string ctx = names.fresh("ctx"), launches = names.fresh("launches"), out = names.fresh("out"),
                          outs = names.fresh("outs"), grads = names.fresh("grads"), launch = names.fresh("launch");
        std::vector<std::string> saved_list, launcher_args = {ctx + ".launches", ctx + ".temps"};
        for (const std::string &p : stub_.params) {
            if (saved.count(p)) saved_list.push_back(p);
            launcher_args.push_back(saved.count(p) ? p : "None");
        }
        std::vector<std::string> to_save = saved_list, temps;
        for (int j : launcher_.outputs) to_save.push_back(outs + "[" + std::to_string(j) + "]");
        for (size_t i = 0; i < bwd_.temps.size(); ++i)
            temps.push_back(launcher_.temps.count(static_cast<int>(i))
                                ? launches + "[" + std::to_string(bwd_.temps[i].first) + "].tensors[" +
                                      py_literal(bwd_.temps[i].second, PyQuotes::Double) + "]"
                                : "None");
        std::string outs_arg = "(";
        for (size_t j = 0, n = 0; j < bwd_.num_outputs; ++j)
            outs_arg += (j ? ", " : "") + (launcher_.outputs.count(static_cast<int>(j))
                                               ? ctx + ".saved_tensors[" + std::to_string(saved_list.size() + n++) + "]"
                                               : "None");
        outs_arg += bwd_.num_outputs == 1 ? ",)" : ")";
        launcher_args.push_back(outs_arg);
        os_ << "\n\n_KERNELS = " << py_tuple(bwd_.launched, true) << "\n";
        // Before launch m, the launcher's copies of what it overwrites: (k, parameter) of launch k <= m.
        if (!launcher_.tests.empty()) os_ << "\n\n" << launcher_.tests;
        os_ << "_SNAPSHOTS = " << detail::snapshot_table(bwd_.snapshots, launcher_.snapshot_tests) << "\n";
        const std::vector<std::string> dirty_inputs = dirty();
        os_ << "\n\nclass " << class_name(stub_.name) << "(torch.autograd.Function):\n";
        os_ << "    @staticmethod\n    def forward(" << ctx << ", " << join(stub_.params) << "):\n";
        os_ << "        with _capturing(_SNAPSHOTS) as " << launches << ":\n";
        os_ << "            " << out << " = " << detail::stub_callable(stub_) << "(" << join(stub_.params) << ")\n";
        os_ << "        _check_launches(" << launches << ", _KERNELS)\n";
        os_ << "        " << outs << " = " << out << " if isinstance(" << out << ", tuple) else (" << out << ",)\n";
        os_ << "        " << ctx << ".launches = " << launches << "\n";
        os_ << "        " << ctx << ".temps = " << py_tuple(temps, false) << "\n";
        os_ << "        for " << launch << " in " << launches << ":\n";
        os_ << "            " << launch << ".tensors = None\n";
        if (!dirty_inputs.empty()) os_ << "        " << ctx << ".mark_dirty(" << join(dirty_inputs) << ")\n";
        // A stub may return None (or a number) among its outputs: it has no layout.
        os_ << "        " << ctx << ".out_layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) if isinstance(o, "
            << "torch.Tensor) else None for o in " << outs << "]\n";
        os_ << "        " << ctx << ".save_for_backward(" << join(to_save) << ")\n";
        os_ << "        return " << out << "\n\n";
        os_ << "    @staticmethod\n    def backward(" << ctx << ", *" << grads << "):\n";
        if (!saved_list.empty())
            os_ << "        " << join(saved_list) << (saved_list.size() == 1 ? "," : "") << " = " << ctx
                << ".saved_tensors[:" << saved_list.size() << "]\n";
        os_ << "        return " << launcher_.name << "(" << join(launcher_args) << ", " << ctx << ".out_layouts, "
            << grads << ")\n";
    }

    void entry_point(const plan::Plan *tangent) {
        os_ << "\n\nGRAD_INPUTS = " << py_tuple(stub_.grad_inputs, true) << "\n";
        os_ << "NUM_OUTPUTS = " << bwd_.num_outputs << "\n";
        bool tf32 = false;
        for (const plan::Kernel &k : bwd_.kernels) tf32 = tf32 || (k.role == plan::Kernel::Backward && uses_tf32(k.fn));
        if (tangent)
            for (const plan::Kernel &k : tangent->kernels) tf32 = tf32 || uses_tf32(k.fn);
        const std::vector<std::string> dirty_inputs = dirty();
        os_ << "# Whether the kernels multiply float32 tiles at TF32 precision (10-bit mantissa, as float16).\n";
        os_ << "TF32 = " << (tf32 ? "True" : "False") << "\n";
        os_ << "# Stub inputs the forward updates in place and returns (autograd wants them to be non-leaf).\n";
        os_ << "DIRTY = " << (dirty_inputs.empty() ? "()" : py_tuple(dirty_inputs, true)) << "\n";
        os_ << "_ARGUMENTS = _Arguments(inspect.signature(" << detail::stub_callable(stub_) << "))\n\n\n";
        os_ << "def forward(*args, **kwargs):\n";
        os_ << "    \"\"\"`" << stub_.name
            << "` with a backward: same arguments and results, differentiable in GRAD_INPUTS. A call\n"
               "    autograd does not record (grad mode off, or no tensor argument requiring grad; no forward-mode\n"
               "    AD level) runs the stub as written: nothing recorded, no residuals saved. One that updates\n"
               "    inputs in place (DIRTY) always goes through the Function, whose mark_dirty bumps their\n"
               "    versions.\"\"\"\n";
        os_ << "    values = _ARGUMENTS(args, kwargs)\n";
        os_ << "    if not DIRTY and not _recorded_by_autograd(values):\n";
        os_ << "        return " << detail::stub_callable(stub_) << "(*args, **kwargs)\n";
        os_ << "    return " << class_name(stub_.name) << ".apply(*values)\n";
    }
};

}  // namespace

namespace detail {

std::string module_head(const frontend::KernelFile &kf, const plan::Plan &p) { return ModuleWriter(kf, p).head(); }

std::string backward_kernels(const frontend::KernelFile &kf, const plan::Plan &p) {
    return ModuleWriter(kf, p).kernel_text();
}

}  // namespace detail

std::string emit_module(const frontend::KernelFile &kf, const plan::Plan &backward, const plan::Plan *tangent,
                        const std::string &jvp_unsupported, const frontend::KernelFile *original) {
    return ModuleWriter(kf, backward, original).run(tangent, jvp_unsupported);
}

}  // namespace tad::emit
