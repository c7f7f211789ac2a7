// Bindings guessed from the text (guess.h): pointer parameters by how the kernel addresses memory,
// constexprs from the stub's launch literals.
#include "retrieve/guess.h"

#include <algorithm>
#include <map>
#include <set>

#include "frontend/lower.h"
#include "retrieve/triton_api.h"

namespace tad::retrieve {

namespace {

using frontend::ArgBinding;

bool addresses_memory(const std::string &fn) {
    static const std::set<std::string> names = {"load", "store", "make_block_ptr", "make_tensor_descriptor"};
    return names.count(fn) != 0 || fn.rfind("atomic_", 0) == 0;
}

// The argument a call passes for parameter `index` named `name`: a keyword, else a positional one.
const ast::Node *argument(const ast::Node &call, size_t index, const std::string &name) {
    for (const auto &kw : call.list("keywords")) {
        const ast::Value *a = kw->find("arg");
        if (a && std::holds_alternative<std::string>(*a) && std::get<std::string>(*a) == name)
            return kw->node("value").get();
    }
    const ast::NodeList &args = call.list("args");
    return index < args.size() && !args[index]->is("Starred") ? args[index].get() : nullptr;
}

// Which parameters of each @triton.jit function hold pointers: those in an address (used()), and
// those a helper returns as part of its result's address (returned()).
class PointerFinder {
public:
    explicit PointerFinder(const frontend::KernelFile &kf) : kf_(kf) {}

    const std::set<std::string> &used(const std::string &fn) {
        return memo(used_, fn, [&](const ast::NodePtr &def, std::set<std::string> &found) {
            ast::walk(def, [&](const ast::Node &n) { seed(n, found); });
        });
    }

    const std::set<std::string> &returned(const std::string &fn) {
        return memo(returned_, fn, [&](const ast::NodePtr &def, std::set<std::string> &found) {
            ast::walk(def, [&](const ast::Node &n) {
                if (n.is("Return")) terms(n.node("value").get(), found);
            });
        });
    }

    // Pointers to integers: those whose loaded values are added to an address (gather by index).
    std::set<std::string> integer(const std::string &fn) {
        const std::set<std::string> in_addresses = address_names(fn);
        std::set<std::string> out;
        ast::walk(kf_.jit(fn), [&](const ast::Node &n) {
            if (!n.is("Assign") || n.list("targets").size() != 1 || !n.list("targets")[0]->is("Name") ||
                !in_addresses.count(n.list("targets")[0]->str("id")))
                return;
            const ast::Node *v = n.node("value").get();
            while (v->is("Call") && v->node("func")->is("Attribute") && v->node("func")->str("attr") == "to")
                v = v->node("func")->node("value").get();
            if (v->is("Call") && triton_function(ast::dotted(v->node("func").get())) == "load")
                terms(argument(*v, 0, "pointer"), out);
        });
        return out;
    }

private:
    // Every name inside an address: in the pointer argument of a memory access, or in what is
    // assigned to a pointer variable (`p = X + idx[:, None] * stride` names idx).
    std::set<std::string> address_names(const std::string &fn) {
        const std::set<std::string> &pointers = used(fn);
        std::set<std::string> out;
        auto names_in = [&](const ast::NodePtr &e) {
            ast::walk(e, [&](const ast::Node &x) {
                if (x.is("Name")) out.insert(x.str("id"));
            });
        };
        ast::walk(kf_.jit(fn), [&](const ast::Node &n) {
            if (n.is("Call") && addresses_memory(triton_function(ast::dotted(n.node("func").get())))) {
                const ast::Node *p = argument(n, 0, "pointer");
                for (const auto &a : n.list("args"))
                    if (a.get() == p) names_in(a);
                for (const auto &kw : n.list("keywords"))
                    if (kw->node("value").get() == p) names_in(kw->node("value"));
            } else if (n.is("Assign") && n.list("targets").size() == 1 && n.list("targets")[0]->is("Name") &&
                       pointers.count(n.list("targets")[0]->str("id"))) {
                names_in(n.node("value"));
            }
        });
        return out;
    }

    // The variables `seeds` finds in `fn`, closed under assignment; empty while being computed, so
    // that recursion ends.
    template <typename Seeds> const std::set<std::string> &memo(std::map<std::string, std::set<std::string>> &table,
                                                                const std::string &fn, Seeds &&seeds) {
        auto done = table.find(fn);
        if (done != table.end()) return done->second;
        table[fn];
        const ast::NodePtr &def = kf_.jit(fn);
        std::set<std::string> found;
        seeds(def, found);
        propagate(def, found);
        return table[fn] = found;
    }

    // Names that may carry a pointer in `e`: the terms of a sum (a product is an offset), the
    // branches of tl.where and of `a if c else b`, the value of a subscript or of tl.multiple_of,
    // and what a helper returns from its arguments.
    void terms(const ast::Node *e, std::set<std::string> &out) {
        if (!e) return;
        if (e->is("Name")) {
            out.insert(e->str("id"));
        } else if (e->is("BinOp")) {
            const std::string op = e->node("op")->kind;
            if (op == "Add" || op == "Sub") terms(e->node("left").get(), out);
            if (op == "Add") terms(e->node("right").get(), out);
        } else if (e->is("IfExp")) {
            terms(e->node("body").get(), out);
            terms(e->node("orelse").get(), out);
        } else if (e->is("Subscript")) {
            terms(e->node("value").get(), out);
        } else if (e->is("Call")) {
            call_terms(*e, out);
        }
    }

    void call_terms(const ast::Node &call, std::set<std::string> &out) {
        const std::string callee = ast::dotted(call.node("func").get());
        const std::string fn = triton_function(callee);
        const ast::NodeList &args = call.list("args");
        if (fn == "where" && args.size() == 3) {
            terms(args[1].get(), out);
            terms(args[2].get(), out);
        } else if ((fn == "multiple_of" || fn == "max_contiguous") && !args.empty()) {
            terms(args[0].get(), out);
        } else if (kf_.jit_functions.count(callee)) {
            helper_arguments(call, callee, returned(callee), out);
        }
    }

    void helper_arguments(const ast::Node &call, const std::string &helper, const std::set<std::string> &params,
                          std::set<std::string> &out) {
        const std::vector<std::string> names = frontend::param_names(*kf_.jit(helper));
        for (size_t i = 0; i < names.size(); ++i)
            if (params.count(names[i])) terms(argument(call, i, names[i]), out);
    }

    void seed(const ast::Node &n, std::set<std::string> &found) {
        if (n.is("Attribute") && n.str("attr") == "dtype" && n.node("value")->is("Name"))
            found.insert(n.node("value")->str("id"));
        if (!n.is("Call")) return;
        const std::string callee = ast::dotted(n.node("func").get());
        if (addresses_memory(triton_function(callee))) {
            const ast::Node *p = argument(n, 0, "pointer");
            terms(p ? p : argument(n, 0, "base"), found);
        } else if (kf_.jit_functions.count(callee)) {
            helper_arguments(n, callee, used(callee), found);
        }
    }

    // A variable assigned to a pointer variable holds one too: to a fixed point.
    void propagate(const ast::NodePtr &def, std::set<std::string> &found) {
        for (size_t before = 0; before != found.size();) {
            before = found.size();
            ast::walk(def, [&](const ast::Node &n) {
                if (n.is("Assign")) {
                    for (const auto &t : n.list("targets"))
                        if (t->is("Name") && found.count(t->str("id"))) terms(n.node("value").get(), found);
                } else if (n.is("AugAssign") && n.node("target")->is("Name") &&
                           found.count(n.node("target")->str("id")) && n.node("op")->is("Add")) {
                    terms(n.node("value").get(), found);
                }
            });
        }
    }

    const frontend::KernelFile &kf_;
    std::map<std::string, std::set<std::string>> used_, returned_;
};

// The stub's first launch of `kernel`: `K[grid](...)` where K names it.
const ast::Node *first_launch(const frontend::KernelFile &kf, const std::string &kernel) {
    const ast::Node *found = nullptr;
    const ast::Node *def = kf.jit(kernel).get();
    ast::walk(kf.stub.def, [&](const ast::Node &n) {
        if (found || !n.is("Call") || !n.node("func")->is("Subscript")) return;
        auto it = kf.jit_functions.find(ast::dotted(n.node("func")->node("value").get()));
        if (it != kf.jit_functions.end() && it->second.get() == def) found = &n;
    });
    return found;
}

// A literal the launch passes, as a binding; false when it is not one.
bool literal_binding(const ast::Node *v, ArgBinding &b) {
    if (!v) return false;
    if (v->is("Attribute")) {  // tl.float16, torch.bfloat16
        std::string name = v->str("attr");
        if (name == "fp16") name = "float16";
        if (name == "bf16") name = "bfloat16";
        if (name == "fp32") name = "float32";
        b.kind = ArgBinding::DType;
        return ir::dtype_from_torch(name, &b.dtype);
    }
    if (!v->is("Constant")) return false;
    const ast::Value &c = *v->find("value");
    if (auto i = std::get_if<int64_t>(&c)) {
        b.kind = ArgBinding::Int;
        b.ival = *i;
    } else if (auto d = std::get_if<double>(&c)) {
        b.kind = ArgBinding::Float;
        b.fval = *d;
    } else if (auto t = std::get_if<bool>(&c)) {
        b.kind = ArgBinding::Bool;
        b.ival = *t ? 1 : 0;
    } else if (auto s = std::get_if<std::string>(&c)) {
        b.kind = ArgBinding::Str;
        b.sval = *s;
    } else {
        b.kind = ArgBinding::None;
        return std::holds_alternative<ast::NoneValue>(c);
    }
    return true;
}

// Names used as integers: compared, multiplied, divided, or given to range / tl.arange / cdiv. A
// sum's terms may be offsets as well as pointers (`a_ptrs + N`); these say which are not pointers.
std::set<std::string> integer_evidence(const ast::Node &def) {
    std::set<std::string> out;
    auto name = [&](const ast::NodePtr &e) {
        if (e && e->is("Name")) out.insert(e->str("id"));
    };
    for (const auto &stmt : def.list("body"))
        ast::walk(stmt, [&](const ast::Node &n) {
            if (n.is("Compare")) {
                name(n.node("left"));
                for (const auto &c : n.list("comparators")) name(c);
            } else if (n.is("BinOp") && !n.node("op")->is("Add") && !n.node("op")->is("Sub")) {
                name(n.node("left"));
                name(n.node("right"));
            } else if (n.is("Call")) {
                const std::string callee = ast::dotted(n.node("func").get());
                const std::string fn = triton_function(callee);
                if (callee == "range" || fn == "range" || fn == "arange" || fn == "cdiv" || callee == "triton.cdiv")
                    for (const auto &a : n.list("args")) name(a);
            }
        });
    return out;
}

}  // namespace

std::vector<std::string> pointer_params(const frontend::KernelFile &kf, const std::string &fn) {
    PointerFinder finder(kf);
    const std::set<std::string> used = finder.used(fn), returned = finder.returned(fn);
    const std::set<std::string> ints = integer_evidence(*kf.jit(fn));
    std::vector<std::string> out;
    for (const auto &p : frontend::param_names(*kf.jit(fn)))
        if ((used.count(p) || returned.count(p)) && !ints.count(p)) out.push_back(p);
    return out;
}

std::vector<ArgBinding> guess_bindings(const frontend::KernelFile &kf, const std::string &kernel) {
    const ast::Node &def = *kf.jit(kernel);
    const ast::NodePtr args = def.node("args");
    const ast::NodeList &params = args->list("args");
    const size_t first_default = params.size() - args->list("defaults").size();
    const ast::Node *launch = first_launch(kf, kernel);
    const std::vector<std::string> pointers = pointer_params(kf, kernel);
    const std::set<std::string> integers = PointerFinder(kf).integer(kernel);
    std::vector<ArgBinding> out;
    for (size_t i = 0; i < params.size(); ++i) {
        ArgBinding b;
        b.name = params[i]->str("arg");
        const bool literal = launch && literal_binding(argument(*launch, i, b.name), b);
        if (is_constexpr_param(*params[i])) {
            if (!literal && i >= first_default) continue;  // lowering takes the default
            if (!literal) {
                b.kind = ArgBinding::Int;
                b.ival = kGuessedConstexpr;
            }
        } else if (!literal) {  // a literal (None for an optional pointer, a flag) binds as at a launch
            const bool pointer = std::find(pointers.begin(), pointers.end(), b.name) != pointers.end();
            b.kind = pointer ? ArgBinding::Tensor : ArgBinding::Int;
            b.dtype = integers.count(b.name) ? ir::DType::I64 : ir::DType::F32;
            b.ival = 1;
        }
        out.push_back(b);
    }
    return out;
}

}  // namespace tad::retrieve
