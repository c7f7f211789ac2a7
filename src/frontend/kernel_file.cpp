#include "frontend/kernel_file.h"

#include <set>

#include "support/error.h"

namespace tad::frontend {

namespace {

using ast::dotted;
using ast::walk;

std::string at(const ast::File &f, const ast::Node &n) { return where(f.path, n.loc.line, n.loc.col + 1); }

bool is_autodiff_decorator(const ast::Node &d) {
    std::string name = dotted(d.is("Call") ? d.node("func").get() : &d);
    return name == "tad.autodiff" || name == "autodiff";
}

// A function whose launches count as the stub's: the stub, or a module-level Python function it
// calls (directly or through others). `call` is the call that reached it (null for the stub), so
// that a kernel passed as an argument resolves to the caller's expression.
struct Frame {
    ast::NodePtr def;
    const ast::Node *call;
    const Frame *caller;
    int depth;
};

constexpr int kMaxDepth = 8;  // helper calls followed, and names resolved, at most this deep

// The expression a call passes for parameter `name` of `def`: positionally or by keyword; null
// when the call leaves it to a default or passes it through *args / **kwargs.
const ast::Node *argument_for(const ast::Node &def, const ast::Node &call, const std::string &name) {
    std::vector<std::string> positional;
    for (const char *field : {"posonlyargs", "args"})
        for (const auto &a : def.node("args")->list(field)) positional.push_back(a->str("arg"));
    const ast::NodeList &args = call.list("args");
    for (size_t i = 0; i < positional.size() && i < args.size(); ++i) {
        if (args[i]->is("Starred")) return nullptr;
        if (positional[i] == name) return args[i].get();
    }
    for (const auto &kw : call.list("keywords")) {
        const ast::Value *arg = kw->find("arg");
        if (arg && std::holds_alternative<std::string>(*arg) && std::get<std::string>(*arg) == name)
            return kw->node("value").get();
    }
    return nullptr;
}

bool is_param(const ast::Node &def, const std::string &name) {
    for (const std::string &p : param_names(def))
        if (p == name) return true;
    return false;
}

// The jit functions an expression of `frame`'s function may evaluate to: a kernel's (dotted) name,
// a local the function assigns from such names (`k = _a if flag else _b`), or a parameter the
// caller passed such an expression for, in source order.
void kernels_named(const KernelFile &kf, const ast::Node &e, const Frame &frame, std::vector<std::string> &out,
                   int depth = 0) {
    std::string k = dotted(&e);
    if (kf.jit_functions.count(k)) {
        out.push_back(k);
        return;
    }
    if (!e.is("Name") || depth > kMaxDepth) return;
    if (frame.call && is_param(*frame.def, k)) {
        if (const ast::Node *arg = argument_for(*frame.def, *frame.call, k))
            kernels_named(kf, *arg, *frame.caller, out, depth + 1);
        return;
    }
    walk(frame.def, [&](const ast::Node &s) {
        if (!s.is("Assign")) return;
        for (const auto &t : s.list("targets"))
            if (t->is("Name") && t->str("id") == k)
                walk(s.node("value"), [&](const ast::Node &v) {
                    if (v.is("Name") || v.is("Attribute")) kernels_named(kf, v, frame, out, depth + 1);
                });
    });
}

// Collects the kernels of every `K[grid](...)` call in `frame`'s function and, through calls of the
// file's module-level Python functions (`helpers`), in the functions it calls, in source order; and
// whether any of them branches.
void find_launches(KernelFile &kf, const std::map<std::string, ast::NodePtr> &helpers, const Frame &frame) {
    walk(frame.def, [&](const ast::Node &n) {
        for (const char *kind : {"If", "IfExp", "For", "While", "Try", "TryStar", "Match"})
            kf.stub.branches = kf.stub.branches || n.is(kind);
        ast::NodePtr f = n.is("Call") ? n.node("func") : nullptr;
        if (!f) return;
        if (f->is("Subscript")) kernels_named(kf, *f->node("value"), frame, kf.stub.launched);
        auto helper = f->is("Name") ? helpers.find(f->str("id")) : helpers.end();
        if (helper != helpers.end() && frame.depth < kMaxDepth)
            find_launches(kf, helpers, Frame{helper->second, &n, &frame, frame.depth + 1});
    });
}

// The module-level Python functions the stub may call to launch kernels: neither jit functions,
// nor the stub, nor the protocol functions.
std::map<std::string, ast::NodePtr> launch_helpers(const KernelFile &kf) {
    static const std::set<std::string> protocol = {"make_args", "reference", "bytes", "flops"};
    std::map<std::string, ast::NodePtr> out;
    for (const auto &s : kf.file.module->list("body"))
        if (s->is("FunctionDef") && !kf.jit_functions.count(s->str("name")) && s != kf.stub.def &&
            !protocol.count(s->str("name")))
            out[s->str("name")] = s;
    return out;
}

// The decorator's grad_inputs=..., or its first positional argument; null when it has neither.
const ast::Node *grad_inputs_spec(const ast::Node &decorator) {
    if (!decorator.is("Call")) return nullptr;
    const ast::Node *spec = nullptr;
    for (const auto &kw : decorator.list("keywords")) {
        const ast::Value *arg = kw->find("arg");
        if (arg && std::holds_alternative<std::string>(*arg) && std::get<std::string>(*arg) == "grad_inputs")
            spec = kw->node("value").get();
    }
    if (!spec && !decorator.list("args").empty()) spec = decorator.list("args")[0].get();
    return spec;
}

// The stub parameter a grad_inputs entry names, by name or by index; `plist` lists the parameters
// for the diagnostics.
std::string grad_input_name(const ast::File &file, const ast::Node &item, const StubInfo &stub,
                            const std::string &plist) {
    const ast::Value *v = item.is("Constant") ? item.find("value") : nullptr;
    std::string name;
    if (v && std::holds_alternative<std::string>(*v)) {
        name = std::get<std::string>(*v);
    } else if (v && std::holds_alternative<int64_t>(*v)) {
        int64_t idx = std::get<int64_t>(*v);
        if (idx < 0 || idx >= static_cast<int64_t>(stub.params.size()))
            fail(TAD_ERR_INVALID_ARGUMENT, at(file, item) + ": grad_inputs index " + std::to_string(idx) +
                                               " is out of range for stub '" + stub.name + "' (parameters: " + plist +
                                               ")");
        name = stub.params[idx];
    } else {
        fail(TAD_ERR_INVALID_ARGUMENT, at(file, item) + ": grad_inputs entries must be parameter names or indices");
    }
    bool known = false;
    for (const auto &p : stub.params) known = known || p == name;
    if (!known)
        fail(TAD_ERR_INVALID_ARGUMENT, at(file, item) + ": grad_inputs names '" + name +
                                           "', which is not a parameter of stub '" + stub.name +
                                           "' (parameters: " + plist + ")");
    return name;
}

void read_grad_inputs(const ast::File &file, const ast::Node &decorator, StubInfo &stub) {
    const ast::Node *spec = grad_inputs_spec(decorator);
    if (!spec)
        fail(TAD_ERR_INVALID_ARGUMENT,
             at(file, decorator) +
                 ": @tad.autodiff needs grad_inputs=(...) naming the stub's differentiable parameters");
    std::vector<const ast::Node *> items;
    if (spec->is("Tuple") || spec->is("List"))
        for (const auto &e : spec->list("elts")) items.push_back(e.get());
    else
        items.push_back(spec);
    std::string plist;
    for (size_t i = 0; i < stub.params.size(); ++i) plist += (i ? ", " : "") + stub.params[i];
    for (const ast::Node *it : items) stub.grad_inputs.push_back(grad_input_name(file, *it, stub, plist));
}

// Records a module-level function: the stub (its decorator in `stub_decorator`) or one of the
// protocol functions.
void record_function(KernelFile &kf, const ast::NodePtr &def, const ast::Node *&stub_decorator) {
    const std::string &name = def->str("name");
    for (const auto &d : def->list("decorator_list")) {
        if (is_autodiff_decorator(*d)) {
            if (stub_decorator)
                fail(TAD_ERR_INVALID_ARGUMENT, at(kf.file, *d) + ": a second @tad.autodiff stub '" + name +
                                                   "' (tad handles one stub per file; the first is '" + kf.stub.name +
                                                   "')");
            stub_decorator = d.get();
            kf.stub.name = name;
            kf.stub.def = def;
            kf.stub.params = param_names(*def);
        }
    }
    if (name == "make_args") kf.has_make_args = true;
    if (name == "reference") kf.has_reference = true;
}

using JitMap = std::map<std::string, ast::NodePtr>;

// `@staticmethod @triton.jit def k(...)` (or a kernel assigned as a class attribute) in class C:
// launched as C.k[grid], traced under its function's name.
void record_class(const ast::Node &cls, JitMap &jit, std::vector<std::string> &order, JitMap &in_classes) {
    const std::string &cname = cls.str("name");
    for (const auto &s : cls.list("body")) {
        if (s->is("FunctionDef"))
            for (const auto &d : s->list("decorator_list"))
                if (is_jit_decorator(*d)) {
                    auto earlier = jit.find(s->str("name"));
                    if (earlier != jit.end()) in_classes.emplace(s->str("name"), earlier->second);
                    jit[cname + "." + s->str("name")] = jit[s->str("name")] = s;
                    in_classes.emplace(s->str("name"), s);
                    order.push_back(s->str("name"));
                }
        if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets")[0]->is("Name")) {
            auto it = jit.find(dotted(s->node("value").get()));
            if (it != jit.end()) jit[cname + "." + s->list("targets")[0]->str("id")] = it->second;
        }
    }
}

// `K = triton.jit(fn)` (or an alias `K = other_kernel`): K is a kernel whose function is fn's,
// traced under fn's name.
void record_assigned_kernel(const ast::File &file, const ast::Node &assign, JitMap &jit,
                            std::vector<std::string> &order) {
    if (assign.list("targets").size() != 1 || !assign.list("targets")[0]->is("Name")) return;
    const std::string &name = assign.list("targets")[0]->str("id");
    const ast::Node &v = *assign.node("value");
    if (v.is("Call") && is_jit_decorator(*v.node("func")) && v.list("args").size() == 1) {
        const std::string fn = dotted(v.list("args")[0].get());
        for (const auto &s : file.module->list("body"))
            if (s->is("FunctionDef") && s->str("name") == fn) {
                jit[name] = jit[fn] = s;
                order.push_back(fn);
            }
        return;
    }
    auto it = jit.find(dotted(&v));
    if (it != jit.end()) jit[name] = it->second;
}

}  // namespace

bool is_jit_decorator(const ast::Node &d) {
    std::string name = dotted(d.is("Call") ? d.node("func").get() : &d);
    return name == "triton.jit" || name == "jit";
}

std::vector<std::string> param_names(const ast::Node &fn) {
    std::vector<std::string> out;
    ast::NodePtr args = fn.node("args");
    for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
        for (const auto &a : args->list(field)) out.push_back(a->str("arg"));
    return out;
}

std::map<std::string, ast::NodePtr> jit_functions_of(const ast::File &file, std::vector<std::string> *order) {
    JitMap jit, in_classes;
    std::vector<std::string> names;
    for (const auto &s : file.module->list("body")) {
        if (s->is("FunctionDef"))
            for (const auto &d : s->list("decorator_list"))
                if (is_jit_decorator(*d)) {
                    jit[s->str("name")] = s;
                    names.push_back(s->str("name"));
                }
        if (s->is("ClassDef")) record_class(*s, jit, names, in_classes);
        if (s->is("Assign")) record_assigned_kernel(file, *s, jit, names);
    }
    // Kernels are traced by their function's name: a class's kernel must be the only one of it.
    for (const auto &[name, def] : in_classes)
        if (jit.at(name) != def)
            fail(TAD_ERR_UNSUPPORTED, where(file.path, def->loc.line, def->loc.col + 1) +
                                          ": unsupported construct 'two @triton.jit functions named '" + name +
                                          "'': one is in a class, and tad tells kernels apart by their function's "
                                          "name; rename one");
    if (order) *order = std::move(names);
    return jit;
}

const ast::NodePtr &KernelFile::jit(const std::string &name) const {
    auto it = jit_functions.find(name);
    if (it == jit_functions.end())
        fail(TAD_ERR_NO_KERNEL, file.path + ": no @triton.jit function named '" + name + "'");
    return it->second;
}

namespace {

// tad names the buffers of the residuals it saves TAD_SAVED_<k>... and trusts them to be its own
// (float32 or float64 on every launch): a kernel of the user's may not take such a name.
void refuse_reserved_names(const KernelFile &kf) {
    for (const std::string &name : kf.jit_order) {
        const ast::NodePtr args = kf.jit_functions.at(name)->node("args");
        for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
            for (const auto &a : args->list(field))
                if (a->str("arg").rfind(kResidualPrefix, 0) == 0)
                    fail(TAD_ERR_INVALID_ARGUMENT, at(kf.file, *a) + ": kernel '" + name + "' has a parameter '" +
                                                       a->str("arg") +
                                                       "': names starting with TAD_SAVED_ are tad's (the buffers "
                                                       "of the residuals it saves); rename it");
    }
}

}  // namespace

KernelFile analyze(ast::File file, bool tad_residuals) {
    KernelFile kf;
    kf.file = std::move(file);
    const ast::Node *stub_decorator = nullptr;
    kf.jit_functions = jit_functions_of(kf.file, &kf.jit_order);
    if (!tad_residuals) refuse_reserved_names(kf);
    for (const auto &stmt : kf.file.module->list("body")) {
        if (stmt->is("FunctionDef")) {
            record_function(kf, stmt, stub_decorator);
        } else if (stmt->is("Assign")) {
            for (const auto &t : stmt->list("targets"))
                if (t->is("Name") && t->str("id") == "SWEEP") kf.has_sweep = true;
        }
    }
    if (kf.jit_functions.empty()) fail(TAD_ERR_NO_KERNEL, kf.file.path + ": no @triton.jit kernel found");
    if (!stub_decorator)
        fail(TAD_ERR_NO_KERNEL, kf.file.path + ": no stub marked @tad.autodiff(grad_inputs=...) found");
    read_grad_inputs(kf.file, *stub_decorator, kf.stub);
    find_launches(kf, launch_helpers(kf), Frame{kf.stub.def, nullptr, nullptr, 0});
    if (kf.stub.launched.empty())
        fail(TAD_ERR_NO_KERNEL, at(kf.file, *kf.stub.def) + ": stub '" + kf.stub.name +
                                    "' launches no @triton.jit kernel (tad looks for K[grid](...) in the stub and "
                                    "in the functions of this file it calls)");
    return kf;
}

}  // namespace tad::frontend
