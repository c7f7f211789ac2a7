// The self-check of a generated module (check_module in emit.h): the module's text parsed again with
// tad's own parser, then each top-level statement walked once, in order.
//
// The walk models the Python that tad writes (kernels, launchers, the Function class, the templates'
// runtime). A construct tad never writes (match, `:=`, global, an import inside a function) is
// walked as plain reads of its parts, which may report a name as unbound; such code can only come
// from the forward file, and the same walk over the forward file finds the same faults in the
// original, which excuse those of the copy.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emit/emit.h"
#include "frontend/parser.h"
#include "passes/pipeline_loops.h"
#include "passes/write_parts.h"
#include "support/error.h"

namespace tad::emit {

namespace {

using ast::Node;
using ast::NodeList;
using ast::NodePtr;

// The names Triton's code generator resolves in a @triton.jit body besides locals and globals
// (CodeGenerator.builtin_namespace).
const std::set<std::string> &jit_builtins() {
    static const std::set<std::string> names = {"len",        "list",    "range", "float", "int",
                                                "isinstance", "getattr", "print", "min",   "max"};
    return names;
}

// Words of a space-separated list.
std::set<std::string> words(const char *text) {
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.insert(w);
    return out;
}

// What Python code outside a kernel may read without binding it: Python 3.11's builtins and the
// module's own dunders.
const std::set<std::string> &python_builtins() {
    static const std::set<std::string> names = words(
        "ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError "
        "BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError "
        "ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning "
        "EnvironmentError Exception ExceptionGroup FileExistsError FileNotFoundError FloatingPointError "
        "FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError "
        "InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError "
        "ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError "
        "OverflowError PendingDeprecationWarning PermissionError ProcessLookupError RecursionError "
        "ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration "
        "SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError "
        "UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning "
        "ValueError Warning ZeroDivisionError __build_class__ __debug__ __doc__ __file__ __import__ "
        "__loader__ __name__ __package__ __spec__ abs aiter all anext any ascii bin bool breakpoint "
        "bytearray bytes callable chr classmethod compile complex copyright credits delattr dict dir divmod "
        "enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id "
        "input int isinstance issubclass iter len license list locals map max memoryview min next object oct "
        "open ord pow print property quit range repr reversed round set setattr slice sorted staticmethod "
        "str sum super tuple type vars zip");
    return names;
}

// Names a kernel tad writes must not rebind and then use as Triton's: the modules its code reads
// through and the builtins Triton resolves. The kernel emitter keeps the forward's value names, and
// a value the user named `float` would turn a later `float("inf")` into a call of that value.
bool reserved(const std::string &name) {
    static const std::set<std::string> modules = {"tl", "triton", "libdevice", "math", "torch"};
    return modules.count(name) || jit_builtins().count(name);
}

std::string at(const ast::Loc &l) { return "line " + std::to_string(l.line) + ":" + std::to_string(l.col + 1); }

[[noreturn]] void bug(const std::string &what) {
    fail(TAD_ERR_INTERNAL, "generated module: " + what + "; this is a bug in tad's emitter");
}

// A fault of the module checked: a bug when tad wrote it (check_module), a reason to refuse it when
// a model did (module_fault).
struct Fault {
    std::string what;
};

[[noreturn]] void fault(const std::string &what) { throw Fault{what}; }

// A string field that may be None (alias.asname, ImportFrom.module, keyword.arg, ...).
const std::string *opt_str(const Node &n, const char *field) {
    const ast::Value *v = n.find(field);
    return v ? std::get_if<std::string>(v) : nullptr;
}

std::string dotted(const NodePtr &n) {
    if (!n) return "";
    if (n->is("Name")) return n->str("id");
    if (n->is("Attribute")) return dotted(n->node("value")) + "." + n->str("attr");
    return "";
}

bool is_function(const Node &s) { return s.is("FunctionDef"); }

bool is_jit(const Node &def) {
    for (const NodePtr &d : def.list("decorator_list"))
        if (frontend::is_jit_decorator(*d)) return true;
    return false;
}

// Whether a kernel is wrapped by module_runtime.py's _fit_shared_memory (`@_fit_shared_memory`, or
// `@_tuned(...)`, which wraps it so): its wrapper supplies the stages of its pipelined loops.
bool is_wrapped(const Node &def) {
    for (const NodePtr &d : def.list("decorator_list")) {
        const Node &name = d->is("Call") ? *d->node("func") : *d;
        if (name.is("Name") && (name.str("id") == "_fit_shared_memory" || name.str("id") == "_tuned")) return true;
    }
    return false;
}

bool is_constexpr(const Node &arg) {
    std::string a = dotted(arg.node("annotation"));
    return a == "constexpr" || (a.size() > 10 && a.compare(a.size() - 10, 10, ".constexpr") == 0);
}

// The parameters of a FunctionDef's or Lambda's `args`, in order.
std::vector<const Node *> parameters(const Node &args) {
    std::vector<const Node *> out;
    for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
        for (const NodePtr &a : args.list(field)) out.push_back(a.get());
    for (const char *field : {"vararg", "kwarg"})
        if (NodePtr a = args.node(field)) out.push_back(a.get());
    return out;
}

// The Name nodes an assignment target binds (Name, Tuple, List, Starred).
template <class F> void target_names(const NodePtr &t, const F &f) {
    if (!t) return;
    if (t->is("Name")) f(*t);
    if (t->is("Tuple") || t->is("List"))
        for (const NodePtr &e : t->list("elts")) target_names(e, f);
    if (t->is("Starred")) target_names(t->node("value"), f);
}

// The blocks of a compound statement (an ExceptHandler's body among them).
const char *const kBlocks[] = {"body", "handlers", "orelse", "finalbody"};

// ---- module scope ----

// Module-level names and the top-level statement that binds each first.
struct ModuleScope {
    std::map<std::string, size_t> first;
    bool star = false;  // `from m import *`: any name may be bound

    bool has(const std::string &n) const { return star || first.count(n); }
    bool before(const std::string &n, size_t index) const {
        auto it = first.find(n);
        return star || (it != first.end() && it->second < index);
    }
};

void bind_imports(const Node &s, ModuleScope &scope, size_t index) {
    for (const NodePtr &a : s.list("names")) {
        const std::string *as = opt_str(*a, "asname");
        const std::string &name = a->str("name");
        if (name == "*")
            scope.star = true;
        else
            scope.first.emplace(as ? *as : s.is("Import") ? name.substr(0, name.find('.')) : name, index);
    }
}

// The names top-level statement `index` binds, into compound statements (`try: import x`) but not
// into function or class bodies.
void bind_module_names(const Node &s, ModuleScope &scope, size_t index) {
    auto bind = [&](const Node &name) { scope.first.emplace(name.str("id"), index); };
    if (is_function(s) || s.is("ClassDef")) {
        scope.first.emplace(s.str("name"), index);
        return;
    }
    if (s.is("Import") || s.is("ImportFrom")) return bind_imports(s, scope, index);
    if (s.is("Assign"))
        for (const NodePtr &t : s.list("targets")) target_names(t, bind);
    if (s.is("AnnAssign") || s.is("AugAssign") || s.is("For")) target_names(s.node("target"), bind);
    if (s.is("With"))
        for (const NodePtr &item : s.list("items")) target_names(item->node("optional_vars"), bind);
    if (const std::string *n = s.is("ExceptHandler") ? opt_str(s, "name") : nullptr) scope.first.emplace(*n, index);
    for (const char *block : kBlocks)
        if (const ast::Value *v = s.find(block))
            if (const auto *l = std::get_if<NodeList>(v))
                for (const NodePtr &c : *l) bind_module_names(*c, scope, index);
}

ModuleScope module_scope(const NodeList &body) {
    ModuleScope s;
    for (size_t i = 0; i < body.size(); ++i) bind_module_names(*body[i], s, i);
    return s;
}

// ---- the walk ----

// A module as the walk sees it.
struct Context {
    ModuleScope scope;
    std::map<std::string, const Node *> emitted;  // the @triton.jit kernels tad wrote, by name
};

// A fault: which code (`unit`: "kernel 'k'", "function 'f'", ...) and what, without the place, so
// that the same fault in the forward file excuses its copy in the module.
struct Finding {
    std::string unit, what;
    ast::Loc loc;
};

// Walks code of top-level statement `index` in order, binding names as Python (and Triton) do.
// Code the module runs as it is imported (`module_level`: the statement itself, decorators,
// defaults, annotations, class bodies) reads names bound by an earlier top-level statement; a
// function body, which runs once the module is imported, any module-level name. Either may read its own earlier bindings (either
// branch of an earlier `if`, an earlier loop's body) and `builtins`. With `emitted` (the body of a
// kernel tad wrote) it also holds the kernel emitter to its naming: no constexpr parameter is
// assigned, no parameter before the kernel has read the argument its launcher passes, and no
// reserved name is used as Triton's after the kernel assigned it.
class Walk {
public:
    Walk(const Context &c, size_t index, const std::set<std::string> &builtins, bool module_level, bool emitted)
        : c_(c), index_(index), builtins_(builtins), module_level_(module_level), emitted_(emitted) {}

    // A function's body; its decorators, defaults and annotations run where the def stands
    // (definition()).
    void function(const Node &def) {
        params(*def.node("args"));
        block(def.list("body"));
    }

    void block(const NodeList &body) {
        for (const NodePtr &s : body) stmt(*s);
    }

    void stmt(const Node &s) {
        if (s.is("Assign") || s.is("AugAssign") || s.is("AnnAssign")) return assignment(s);
        if (is_function(s)) return definition(s);
        if (s.is("ClassDef")) return class_def(s);
        if (s.find("body")) return compound(s);
        children(s);  // Return, Expr, Raise, Assert, Delete, Import (tad writes none in a function)
    }

    std::vector<Finding> take(const std::string &unit) {
        for (Finding &f : out_) f.unit = unit;
        return std::move(out_);
    }

private:
    const Context &c_;
    const size_t index_;
    const std::set<std::string> &builtins_;
    const bool module_level_, emitted_;
    std::set<std::string> bound_, params_, constexprs_, read_;
    std::map<std::string, ast::Loc> shadowed_;  // reserved names assigned, where first
    std::vector<Finding> out_;

    void found(const std::string &what, const ast::Loc &loc) { out_.push_back({"", what, loc}); }

    void read(const std::string &name, const ast::Loc &loc) {
        if (params_.count(name)) read_.insert(name);
        if (bound_.count(name) || builtins_.count(name)) return;
        if (module_level_ ? c_.scope.before(name, index_) : c_.scope.has(name)) return;
        found(c_.scope.has(name) ? "reads '" + name + "' before the module defines it"
                                 : "reads '" + name + "', which nothing defines",
              loc);
    }

    void bind(const std::string &name, const ast::Loc &loc) {
        if (emitted_ && constexprs_.count(name)) found("assigns its constexpr parameter '" + name + "'", loc);
        if (emitted_ && params_.count(name) && !read_.count(name))
            found("assigns parameter '" + name + "' before reading it, losing the argument its launcher passes", loc);
        if (emitted_ && reserved(name)) shadowed_.emplace(name, loc);
        bound_.insert(name);
    }

    void params(const Node &args) {
        for (const Node *a : parameters(args)) {
            const std::string &name = a->str("arg");
            if (!params_.insert(name).second) found("has two parameters named '" + name + "'", a->loc);
            if (is_constexpr(*a)) constexprs_.insert(name);
            bound_.insert(name);
        }
    }

    // A nested scope (a lambda, a comprehension, a nested def or class): it sees the bindings so
    // far, and its own, parameters included, end with it.
    template <class F> void nested(const F &f) {
        std::set<std::string> saved = bound_, outer_params;
        std::swap(outer_params, params_);
        f();
        bound_ = std::move(saved);
        params_ = std::move(outer_params);
    }

    // A call `f(...)` or attribute `m.x` of a reserved name means Triton's `f` or `m`; after the
    // kernel assigned that name it reaches the assigned value instead.
    void reserved_use(const Node &e) {
        const NodePtr head = e.is("Call") ? e.node("func") : e.is("Attribute") ? e.node("value") : nullptr;
        if (!head || !head->is("Name")) return;
        auto it = shadowed_.find(head->str("id"));
        if (it != shadowed_.end())
            found("assigns '" + it->first + "', a name Triton reserves, at " + at(it->second) +
                      ", then uses it as Triton's",
                  head->loc);
    }

    // `K[grid](...)` of a kernel K tad wrote passes one positional argument per parameter that is
    // not a constexpr and each constexpr by keyword, as the launchers do; `_tiles` is the kernel
    // wrapper's own (module_runtime.py's _retile), never Triton's.
    void launch(const Node &call) {
        const NodePtr head = call.node("func")->node("value");
        auto k = head->is("Name") ? c_.emitted.find(head->str("id")) : c_.emitted.end();
        if (k == c_.emitted.end()) return;
        std::set<std::string> constexprs;
        size_t positional = 0, given = 0;
        for (const Node *a : parameters(*k->second->node("args"))) {
            if (is_constexpr(*a))
                constexprs.insert(a->str("arg"));
            else
                ++positional;
        }
        for (const NodePtr &a : call.list("args")) given += a->is("Starred") ? 0 : 1;
        if (given != positional)
            found("launches kernel '" + k->first + "' with " + std::to_string(given) +
                      " positional arguments for its " + std::to_string(positional) +
                      " parameters that are not constexpr",
                  call.loc);
        for (const NodePtr &kw : call.list("keywords")) {
            const std::string *name = opt_str(*kw, "arg");
            if (name && *name != "_tiles" && !constexprs.erase(*name))
                found("passes '" + *name + "' by keyword to kernel '" + k->first + "', which has no constexpr '" +
                          *name + "'",
                      kw->loc);
        }
        if (is_wrapped(*k->second)) constexprs.erase(passes::kLoopStages);  // its wrapper sets it
        constexprs.erase(passes::kWritePart);  // 0 by default: the whole kernel
        for (const std::string &c : constexprs)
            found("launches kernel '" + k->first + "' without its constexpr '" + c + "'", call.loc);
    }

    void lambda(const Node &e) {
        const NodePtr args = e.node("args");
        for (const char *field : {"defaults", "kw_defaults"})
            for (const NodePtr &d : args->list(field)) expr(d);
        nested([&] {
            params(*args);
            expr(e.node("body"));
        });
    }

    void comprehension(const Node &e) {
        for (const NodePtr &g : e.list("generators")) {
            expr(g->node("iter"));
            target(g->node("target"));
            for (const NodePtr &c : g->list("ifs")) expr(c);
        }
        for (const char *field : {"elt", "key", "value"})
            if (e.find(field)) expr(e.node(field));
    }

    void children(const Node &n) {
        for (const auto &field : n.fields) {
            if (const auto *p = std::get_if<NodePtr>(&field.second))
                expr(*p);
            else if (const auto *l = std::get_if<NodeList>(&field.second))
                for (const NodePtr &c : *l) expr(c);
        }
    }

    void expr(const NodePtr &e) {
        if (!e) return;
        if (e->is("Name")) return read(e->str("id"), e->loc);
        if (!shadowed_.empty()) reserved_use(*e);
        if (e->is("Call") && e->node("func")->is("Subscript")) launch(*e);
        if (e->is("Lambda")) return lambda(*e);
        if (e->is("ListComp") || e->is("SetComp") || e->is("GeneratorExp") || e->is("DictComp"))
            return nested([&] { comprehension(*e); });
        children(*e);
    }

    // An assignment target: names are bound, the objects of attributes and subscripts read.
    void target(const NodePtr &t) {
        if (!t) return;
        if (t->is("Name")) return bind(t->str("id"), t->loc);
        if (t->is("Tuple") || t->is("List")) {
            for (const NodePtr &e : t->list("elts")) target(e);
            return;
        }
        if (t->is("Starred")) return target(t->node("value"));
        expr(t);
    }

    void assignment(const Node &s) {
        if (s.is("Assign")) {
            expr(s.node("value"));
            for (const NodePtr &t : s.list("targets")) target(t);
        } else if (s.is("AugAssign")) {
            NodePtr t = s.node("target");
            expr(t);
            expr(s.node("value"));
            target(t);
        } else {  // AnnAssign: `x: tl.constexpr = v` binds; `x: int` alone does not
            expr(s.node("annotation"));
            expr(s.node("value"));
            if (s.node("value")) target(s.node("target"));
        }
    }

    // What a def runs where it stands: decorators, defaults and annotations, then the name bound.
    // The body of a top-level function is a walk of its own; a nested one's runs in a nested scope.
    void definition(const Node &s) {
        for (const NodePtr &d : s.list("decorator_list")) expr(d);
        const NodePtr args = s.node("args");
        for (const char *field : {"defaults", "kw_defaults"})
            for (const NodePtr &d : args->list(field)) expr(d);
        for (const Node *a : parameters(*args)) expr(a->node("annotation"));
        expr(s.node("returns"));
        if (!module_level_) nested([&] { function(s); });
        bind(s.str("name"), s.loc);
    }

    // A class body runs where it stands; its methods' bodies are walks of their own.
    void class_def(const Node &s) {
        for (const char *field : {"decorator_list", "bases", "keywords"})
            for (const NodePtr &d : s.list(field)) expr(d);
        nested([&] { block(s.list("body")); });
        bind(s.str("name"), s.loc);
    }

    void compound(const Node &s) {
        if (s.is("For")) {
            expr(s.node("iter"));
            target(s.node("target"));
        } else if (s.is("If") || s.is("While")) {
            expr(s.node("test"));
        } else if (s.is("With")) {
            for (const NodePtr &item : s.list("items")) {
                expr(item->node("context_expr"));
                target(item->node("optional_vars"));
            }
        } else if (s.is("ExceptHandler")) {
            expr(s.node("type"));
            if (const std::string *n = opt_str(s, "name")) bind(*n, s.loc);
        }
        for (const char *field : kBlocks)
            if (s.find(field)) block(s.list(field));
    }
};

// "kernel 'k'", "function 'f'", "class 'C'" or "top-level statement": what a message names.
std::string unit_name(const Node &s) {
    if (is_function(s)) return (is_jit(s) ? "kernel '" : "function '") + s.str("name") + "'";
    if (s.is("ClassDef")) return "class '" + s.str("name") + "'";
    return "top-level statement";
}

void function_body(const Context &c, const Node &def, size_t index, const std::string &unit,
                   std::vector<Finding> &out) {
    const bool jit = is_jit(def);
    Walk w(c, index, jit ? jit_builtins() : python_builtins(), false, jit && c.emitted.count(def.str("name")));
    w.function(def);
    for (Finding &f : w.take(unit)) out.push_back(std::move(f));
}

// The faults of top-level statement `index`: its own code, then its function's body or its
// methods' bodies, in the order of the text.
std::vector<Finding> faults(const Context &c, const Node &s, size_t index) {
    Walk top(c, index, python_builtins(), true, false);
    top.stmt(s);
    std::vector<Finding> out = top.take(unit_name(s));
    if (is_function(s)) function_body(c, s, index, unit_name(s), out);
    if (s.is("ClassDef"))
        for (const NodePtr &m : s.list("body"))
            if (is_function(*m))
                function_body(c, *m, index, "function '" + s.str("name") + "." + m->str("name") + "'", out);
    std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) {
        return std::make_pair(a.loc.line, a.loc.col) < std::make_pair(b.loc.line, b.loc.col);
    });
    return out;
}

// The forward file's own faults, as "<unit> <what>": the user's code, copied, may keep them.
std::set<std::string> forward_faults(const frontend::KernelFile &kf) {
    const NodeList &body = kf.file.module->list("body");
    const Context c{module_scope(body), {}};
    std::set<std::string> out;
    for (size_t i = 0; i < body.size(); ++i)
        for (const Finding &f : faults(c, *body[i], i)) out.insert(f.unit + " " + f.what);
    return out;
}

// ---- the module ----

// The top-level function that line `line` of `source` falls in, as "kernel 'k'" or "function 'f'"
// (empty at module level): a syntax error has no tree to ask.
std::string enclosing_def(const std::string &source, int line) {
    std::string found;
    bool jit = false;
    size_t pos = 0;
    for (int l = 1; l <= line && pos <= source.size(); ++l) {
        size_t end = source.find('\n', pos);
        if (end == std::string::npos) end = source.size();
        const std::string text = source.substr(pos, end - pos);
        pos = end + 1;
        if (text.rfind("@", 0) == 0) {
            jit = jit || text.rfind("@triton.jit", 0) == 0 || text.rfind("@jit", 0) == 0;
            continue;
        }
        if (text.rfind("def ", 0) == 0)
            found = std::string(jit ? "kernel '" : "function '") + text.substr(4, text.find('(') - 4) + "'";
        else if (!text.empty() && text[0] != ' ' && text[0] != '#' && text[0] != ')')
            found.clear();
        jit = false;
    }
    return found;
}

ast::File parse(const std::string &source) {
    const std::string path = "generated module";
    try {
        return frontend::parse_source(path, source);
    } catch (const Error &e) {
        // "<path>:<line>:<col>: syntax error: <what>" (frontend/parser.h)
        const std::string msg = e.what(), head = path + ":";
        const size_t colon = msg.find(':', head.size()), after = msg.find(": ", colon);
        if (msg.rfind(head, 0) != 0 || colon == std::string::npos || after == std::string::npos) bug(msg);
        const int line = std::atoi(msg.c_str() + head.size());
        const std::string in = enclosing_def(source, line);
        fault(msg.substr(after + 2) + (in.empty() ? "" : " in " + in) + " (line " +
              msg.substr(head.size(), after - head.size()) + ")");
    }
}

// `from __future__ import ...` after any statement but a docstring and other such imports: valid to
// ast.parse (and tad's parser), refused by Python's compiler. A forward file's own such import,
// copied below the module's header, would be one.
void future_imports_first(const NodeList &body) {
    const Node *other = nullptr;  // the first statement such an import may not follow
    for (size_t i = 0; i < body.size(); ++i) {
        const Node &s = *body[i];
        const std::string *module = s.is("ImportFrom") ? opt_str(s, "module") : nullptr;
        if (module && *module == "__future__") {
            if (other)
                fault("'from __future__ import' at " + at(s.loc) + " follows another statement (" + at(other->loc) +
                      "), which Python refuses");
            continue;
        }
        const NodePtr value = s.is("Expr") ? s.node("value") : nullptr;
        const bool docstring = i == 0 && value && value->is("Constant") && opt_str(*value, "value");
        if (!docstring && !other) other = &s;
    }
}

// Calls f(name, loc) for each name top-level statement `s` defines (def, class, assignment);
// `recorded_too`: also the rebinding `K = _Recorded(K)` (or `_RecordedNode(K)`) of each launched
// kernel.
template <class F> void definitions(const Node &s, bool recorded_too, const F &f) {
    auto name = [&](const Node &n) { f(n.str("id"), n.loc); };
    if (is_function(s) || s.is("ClassDef")) return f(s.str("name"), s.loc);
    if (s.is("AnnAssign")) target_names(s.node("target"), name);
    if (!s.is("Assign")) return;
    const NodePtr value = s.node("value");
    const bool recorded = value->is("Call") && (dotted(value->node("func")) == "_Recorded" ||
                                                dotted(value->node("func")) == "_RecordedNode");
    if (!recorded_too && recorded) return;
    for (const NodePtr &t : s.list("targets")) target_names(t, name);
}

// Each name the module defines more often than the forward file does (launched kernels rebound to
// _Recorded aside) means a definition of tad's replaces one that the forward's code, or another of
// tad's, relies on.
void unique_definitions(const NodeList &module, const NodeList &forward) {
    std::map<std::string, int> allowed;
    for (const NodePtr &s : forward)
        definitions(*s, true, [&](const std::string &n, const ast::Loc &) { ++allowed[n]; });
    std::map<std::string, ast::Loc> last;
    std::map<std::string, int> count;
    for (const NodePtr &s : module)
        definitions(*s, false, [&](const std::string &n, const ast::Loc &loc) {
            if (++count[n] > std::max(allowed[n], 1)) {
                const std::string unit = is_function(*s) || s->is("ClassDef") ? unit_name(*s) : "name '" + n + "'";
                fault(unit + " is defined at " + at(last[n]) + " and again at " + at(loc));
            }
            last[n] = loc;
        });
}

// The user's kernel a module's `<k>_without_saves` copies (module.cpp: a kernel that stores
// residuals, as written), or "": the user's code, judged and excused as that kernel is.
std::string twin_of(const frontend::KernelFile &kf, const std::string &name) {
    const std::string suffix = kTwinSuffix;
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return "";
    const std::string k = name.substr(0, name.size() - suffix.size());
    return kf.jit_functions.count(k) ? k : "";
}

void check(const frontend::KernelFile &kf, const std::string &source) {
    const ast::File file = parse(source);
    const NodeList &body = file.module->list("body");
    future_imports_first(body);
    unique_definitions(body, kf.file.module->list("body"));
    Context c{module_scope(body), {}};
    for (const NodePtr &s : body)
        if (is_function(*s) && is_jit(*s) && !kf.jit_functions.count(s->str("name")) &&
            twin_of(kf, s->str("name")).empty())
            c.emitted[s->str("name")] = s.get();
    const std::set<std::string> excused = forward_faults(kf);
    for (size_t i = 0; i < body.size(); ++i) {
        const std::string twin = is_function(*body[i]) ? twin_of(kf, body[i]->str("name")) : "";
        for (const Finding &f : faults(c, *body[i], i)) {
            const std::string unit = twin.empty() ? f.unit : "kernel '" + twin + "'";
            if (!excused.count(unit + " " + f.what)) fault(f.unit + " " + f.what + " (" + at(f.loc) + ")");
        }
    }
}

}  // namespace

void check_module(const frontend::KernelFile &kf, const std::string &source) {
    try {
        check(kf, source);
    } catch (const Fault &f) {
        bug(f.what);
    }
}

std::string module_fault(const frontend::KernelFile &kf, const std::string &source) {
    try {
        check(kf, source);
    } catch (const Fault &f) {
        return f.what;
    }
    return "";
}

}  // namespace tad::emit
