#include "frontend/lower.h"

#include <cmath>
#include <functional>
#include <algorithm>
#include <map>
#include <set>

#include "frontend/kernel_file.h"
#include "support/error.h"
#include "support/identifier.h"

namespace tad::frontend {

using ir::DType;
using ir::Dim;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

namespace {

// A value during symbolic evaluation: an IR value, or something known at compile time.
struct CV {
    enum Kind { Value, Int, Float, Bool, None, Str, DTypeV, Tuple, Module, Func, Method, FullSlice };
    Kind kind = None;
    ValueId v = ir::kNoValue;
    int64_t i = 0;
    double f = 0;
    std::string s;  // Int: symbolic spelling; Str; Module/Func: dotted name; Method: method name
    DType dt = DType::F32;
    std::vector<CV> items;  // Tuple; Method: [receiver]

    static CV value(ValueId v) { CV c; c.kind = Value; c.v = v; return c; }
    static CV integer(int64_t i, std::string expr = "") {
        CV c; c.kind = Int; c.i = i; c.s = expr.empty() ? std::to_string(i) : std::move(expr); return c;
    }
    static CV real(double f) { CV c; c.kind = Float; c.f = f; return c; }
    static CV boolean(bool b) { CV c; c.kind = Bool; c.i = b; return c; }
    static CV dtype(DType t) { CV c; c.kind = DTypeV; c.dt = t; return c; }
    static CV named(Kind k, std::string s) { CV c; c.kind = k; c.s = std::move(s); return c; }
    bool compile_time() const { return kind != Value; }
};

const std::map<std::string, OpKind> &unary_math() {
    static const std::map<std::string, OpKind> m = {
        {"exp", OpKind::Exp},   {"exp2", OpKind::Exp2},       {"log", OpKind::Log},
        {"log2", OpKind::Log2}, {"sqrt", OpKind::Sqrt},       {"rsqrt", OpKind::Rsqrt},
        {"sigmoid", OpKind::Sigmoid}, {"abs", OpKind::Abs},   {"erf", OpKind::Erf},
        {"tanh", OpKind::Tanh}, {"sin", OpKind::Sin},         {"cos", OpKind::Cos},
        {"floor", OpKind::Floor}, {"ceil", OpKind::Ceil},
    };
    return m;
}

const std::map<std::string, DType> &dtype_names() {
    static const std::map<std::string, DType> m = {
        {"float16", DType::F16}, {"bfloat16", DType::BF16}, {"float32", DType::F32},
        {"float64", DType::F64}, {"int32", DType::I32},     {"int64", DType::I64},
        {"int1", DType::I1},     {"fp16", DType::F16},      {"fp32", DType::F32},
        {"bf16", DType::BF16},   {"fp64", DType::F64},
    };
    return m;
}

class Lowerer {
public:
    Lowerer(const ast::File &file, const std::map<std::string, ast::NodePtr> &jit)
        : file_(file), jit_(jit), b_(fn_) {}

    ir::Function run(const std::string &kernel, const std::vector<ArgBinding> &args) {
        auto it = jit_.find(kernel);
        if (it == jit_.end()) fail(TAD_ERR_NO_KERNEL, file_.path + ": no @triton.jit function named '" + kernel + "'");
        const ast::Node &def = *it->second;
        fn_.name = kernel;
        fn_.source_path = file_.path;
        b_.loc = loc_of(def);
        Env env;
        bind_params(def, args, env);
        lower_body(def.list("body"), env, kernel);
        std::string problem = ir::verify(fn_);
        if (!problem.empty()) fail(TAD_ERR_INTERNAL, file_.path + ": lowering '" + kernel + "' produced invalid IR: " + problem);
        return std::move(fn_);
    }

private:
    using Env = std::map<std::string, CV>;

    const ast::File &file_;
    const std::map<std::string, ast::NodePtr> &jit_;
    ir::Function fn_;
    ir::Builder b_;
    std::vector<std::string> call_stack_;
    std::set<std::string> constexpr_names_;
    std::set<std::string> *watch_ = nullptr;  // collects constexprs read while set

    // Evaluates a static condition, recording the constexprs it reads as specializations.
    CV condition(const ast::Node &test, Env &env) {
        std::set<std::string> read;
        std::set<std::string> *saved = watch_;
        watch_ = &read;
        CV c = eval(test, env);
        watch_ = saved;
        if (c.compile_time())
            for (const auto &n : read)
                if (std::find(fn_.specialized.begin(), fn_.specialized.end(), n) == fn_.specialized.end())
                    fn_.specialized.push_back(n);
        return c;
    }

    static ir::SrcLoc loc_of(const ast::Node &n) { return ir::SrcLoc{n.loc.line, n.loc.col + 1}; }
    std::string at(const ast::Node &n) const { return tad::where(file_.path, n.loc.line, n.loc.col + 1); }

    [[noreturn]] void unsupported(const ast::Node &n, const std::string &construct, const std::string &why) const {
        fail(TAD_ERR_UNSUPPORTED, at(n) + ": unsupported construct '" + construct + "'" + (why.empty() ? "" : ": " + why));
    }

    // ---- parameters ----------------------------------------------------------------------------
    static bool is_constexpr_annotation(const ast::NodePtr &a) {
        if (!a) return false;
        if (a->is("Name")) return a->str("id") == "constexpr";
        if (a->is("Attribute")) return a->str("attr") == "constexpr";
        if (a->is("Constant")) {
            const ast::Value *v = a->find("value");
            return v && std::holds_alternative<std::string>(*v) && std::get<std::string>(*v).find("constexpr") != std::string::npos;
        }
        return false;
    }

    void bind_params(const ast::Node &def, const std::vector<ArgBinding> &args, Env &env) {
        ast::NodePtr a = def.node("args");
        if (a->node("vararg") || a->node("kwarg")) unsupported(def, "*args/**kwargs in a @triton.jit signature", "");
        const ast::NodeList &params = a->list("args");
        const ast::NodeList &defaults = a->list("defaults");
        size_t first_default = params.size() - defaults.size();
        for (size_t i = 0; i < params.size(); ++i) {
            const ast::Node &p = *params[i];
            const std::string &name = p.str("arg");
            const ArgBinding *bound = nullptr;
            for (const auto &ab : args)
                if (ab.name == name) bound = &ab;
            bool cexpr = is_constexpr_annotation(p.node("annotation"));
            b_.loc = loc_of(p);
            if (!bound) {
                if (i < first_default)
                    fail(TAD_ERR_INVALID_ARGUMENT, at(p) + ": kernel parameter '" + name + "' has no value in the launch record");
                CV d = eval(*defaults[i - first_default], env);
                if (d.kind == CV::Int) d.s = name;
                env[name] = d;
                if (cexpr) add_constexpr(name, d);
                continue;
            }
            if (cexpr || bound->kind == ArgBinding::None || bound->kind == ArgBinding::Bool || bound->kind == ArgBinding::Str) {
                CV c = bound->kind == ArgBinding::Int     ? CV::integer(bound->ival, name)
                       : bound->kind == ArgBinding::Float ? CV::real(bound->fval)
                       : bound->kind == ArgBinding::Bool  ? CV::boolean(bound->ival != 0)
                       : bound->kind == ArgBinding::Str   ? CV::named(CV::Str, bound->sval)
                                                          : CV{};
                if (bound->kind == ArgBinding::Tensor) unsupported(p, "tensor bound to tl.constexpr parameter '" + name + "'", "");
                if (cexpr) {
                    add_constexpr(name, c);
                    if (c.kind == CV::Float) c.s = name;
                }
                env[name] = c;
                continue;
            }
            switch (bound->kind) {
            case ArgBinding::Tensor:
                env[name] = CV::value(b_.param(name, ir::ParamKind::Pointer, Type{bound->dtype, true, {}}));
                break;
            case ArgBinding::Int: {
                bool wide = bound->ival > INT32_MAX || bound->ival < INT32_MIN;
                env[name] = CV::value(b_.param(name, ir::ParamKind::Int, Type{wide ? DType::I64 : DType::I32, false, {}}));
                break;
            }
            case ArgBinding::Float:
                env[name] = CV::value(b_.param(name, ir::ParamKind::Float, Type{DType::F32, false, {}}));
                break;
            default: break;
            }
        }
    }

    void add_constexpr(const std::string &name, const CV &c) {
        constexpr_names_.insert(name);
        std::string literal;
        if (c.kind == CV::Int) literal = std::to_string(c.i);
        else if (c.kind == CV::Bool) literal = c.i ? "True" : "False";
        else if (c.kind == CV::Float) literal = python_float(c.f);
        else if (c.kind == CV::Str) literal = python_string(c.s);
        else if (c.kind == CV::None) literal = "None";
        else return;
        fn_.constexprs.push_back({name, literal});
    }

    static std::string python_float(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        std::string s = buf;
        return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
    }

    static std::string python_string(const std::string &s) {
        std::string out = "'";
        for (char ch : s) out += (ch == '\'' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
        return out + "'";
    }

    // ---- statements ----------------------------------------------------------------------------
    // Lowers a statement list; returns the value of a `return` (None if none).
    CV lower_body(const ast::NodeList &body, Env &env, const std::string &fname) {
        for (const auto &s : body) {
            b_.loc = loc_of(*s);
            if (s->is("Return")) {
                ast::NodePtr v = s->node("value");
                return v ? eval(*v, env) : CV{};
            }
            if (lower_stmt(*s, env, fname)) return env["$return"];
        }
        return CV{};
    }

    // Returns true when the statement returned (inside a static `if`).
    bool lower_stmt(const ast::Node &s, Env &env, const std::string &fname) {
        if (s.is("Assign")) {
            CV v = eval(*s.node("value"), env);
            for (const auto &t : s.list("targets")) assign(*t, v, env);
        } else if (s.is("AnnAssign")) {
            if (s.node("value")) assign(*s.node("target"), eval(*s.node("value"), env), env);
        } else if (s.is("AugAssign")) {
            const ast::Node &t = *s.node("target");
            if (!t.is("Name")) unsupported(t, "augmented assignment to " + t.kind, "only names can be updated");
            CV cur = eval(t, env);
            assign(t, binop(s.node("op")->kind, cur, eval(*s.node("value"), env), s), env);
        } else if (s.is("Expr")) {
            const ast::Node &e = *s.node("value");
            if (!(e.is("Constant"))) eval(e, env);  // docstrings are constants
        } else if (s.is("Pass") || s.is("Assert")) {
        } else if (s.is("For")) {
            lower_for(s, env, fname);
        } else if (s.is("While")) {
            unsupported(s, "while loop", "loops with a data-dependent trip count are not supported yet; use for ... in range(...)");
        } else if (s.is("If")) {
            CV c = condition(*s.node("test"), env);
            if (!c.compile_time())
                unsupported(s, "if", "conditions on run-time values are not supported yet (only tl.constexpr conditions)");
            const ast::NodeList &branch = truthy(c, s) ? s.list("body") : s.list("orelse");
            for (const auto &inner : branch) {
                b_.loc = loc_of(*inner);
                if (inner->is("Return")) {
                    ast::NodePtr v = inner->node("value");
                    env["$return"] = v ? eval(*v, env) : CV{};
                    return true;
                }
                if (lower_stmt(*inner, env, fname)) return true;
            }
        } else {
            static const std::map<std::string, std::string> names = {
                {"For", "for loop"}, {"While", "while loop"}, {"With", "with"}, {"Try", "try"},
                {"FunctionDef", "nested function"}, {"ClassDef", "class"}, {"Raise", "raise"},
                {"Global", "global"}, {"Nonlocal", "nonlocal"}, {"Delete", "del"}, {"Break", "break"},
                {"Continue", "continue"}, {"Import", "import"}, {"ImportFrom", "import"}, {"Match", "match"}};
            auto it = names.find(s.kind);
            std::string name = it == names.end() ? s.kind : it->second;
            unsupported(s, name, "not allowed in @triton.jit function '" + fname + "'");
        }
        return false;
    }

    // The value of `NAME = <expr>` at module level, where Triton allows it: tl.constexpr(...) or a literal.
    const ast::Node *module_global(const std::string &name) const {
        const ast::Node *found = nullptr;
        for (const auto &s : file_.module->list("body"))
            if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets")[0]->is("Name") &&
                s->list("targets")[0]->str("id") == name)
                found = s->node("value").get();
        return found;
    }

    // ---- loops -------------------------------------------------------------------------------
    // Names a statement list assigns, in first-assignment order (nested blocks included).
    static void assigned_names(const ast::NodeList &body, std::vector<std::string> &out) {
        std::function<void(const ast::Node &)> target = [&](const ast::Node &t) {
            if (t.is("Name")) {
                if (std::find(out.begin(), out.end(), t.str("id")) == out.end()) out.push_back(t.str("id"));
            } else if (t.is("Tuple") || t.is("List")) {
                for (const auto &e : t.list("elts")) target(*e);
            }
        };
        for (const auto &s : body) {
            if (s->is("Assign"))
                for (const auto &t : s->list("targets")) target(*t);
            if (s->is("AugAssign") || s->is("AnnAssign")) target(*s->node("target"));
            if (s->is("For")) target(*s->node("target"));
            for (const char *block : {"body", "orelse"})
                if (s->find(block) && std::holds_alternative<ast::NodeList>(*s->find(block))) assigned_names(s->list(block), out);
        }
    }

    void lower_for(const ast::Node &s, Env &env, const std::string &fname) {
        if (!s.list("orelse").empty()) unsupported(s, "for ... else", "");
        const ast::Node &target = *s.node("target");
        if (!target.is("Name")) unsupported(target, "loop target " + target.kind, "the loop variable must be a name");
        const ast::Node &iter = *s.node("iter");
        CV fn = iter.is("Call") ? eval(*iter.node("func"), env) : CV{};
        std::string it = fn.kind == CV::Func ? fn.s : fn.kind == CV::Module ? fn.s : "";
        bool is_static = it == "tl.static_range" || it == "triton.language.static_range";
        bool is_tl_range = it == "tl.range" || it == "triton.language.range";
        if (!(it == "range" || is_static || is_tl_range))
            unsupported(iter, "for loop over " + (it.empty() ? iter.kind : it), "only range, tl.range and tl.static_range are supported");
        std::vector<CV> bounds;
        for (const auto &a : iter.list("args")) bounds.push_back(eval(*a, env));
        if (bounds.empty() || bounds.size() > 3) unsupported(iter, it, "expects 1 to 3 positional bounds");
        CV lo = bounds.size() > 1 ? bounds[0] : CV::integer(0);
        CV hi = bounds.size() > 1 ? bounds[1] : bounds[0];
        CV step = bounds.size() > 2 ? bounds[2] : CV::integer(1);
        for (const auto &stmt : s.list("body"))
            if (stmt->is("Break") || stmt->is("Continue") || stmt->is("Return"))
                unsupported(*stmt, stmt->is("Return") ? "return in a loop" : stmt->is("Break") ? "break" : "continue", "");
        const std::string &var = target.str("id");
        if (is_static) {
            if (lo.kind != CV::Int || hi.kind != CV::Int || step.kind != CV::Int || step.i == 0)
                unsupported(iter, "tl.static_range", "bounds must be constexpr integers");
            for (int64_t v = lo.i; step.i > 0 ? v < hi.i : v > hi.i; v += step.i) {
                env[var] = CV::integer(v);
                for (const auto &stmt : s.list("body")) {
                    b_.loc = loc_of(*stmt);
                    lower_stmt(*stmt, env, fname);
                }
            }
            return;
        }
        if (step.kind == CV::Int && step.i <= 0)
            unsupported(iter, it + " with a non-positive step", "count up and index from the end instead");
        std::vector<std::string> names;
        assigned_names(s.list("body"), names);
        std::vector<std::string> carried;
        for (const auto &n : names)
            if (n != var && env.count(n) && env.at(n).kind != CV::Module && env.at(n).kind != CV::Func) carried.push_back(n);
        Type i32{DType::I32, false, {}};
        auto bound = [&](const CV &c) { return b_.cast(materialize(c, &i32, iter), DType::I32); };
        ValueId vlo = bound(lo), vhi = bound(hi), vstep = bound(step);
        std::vector<ValueId> inits;
        for (const auto &n : carried) {
            const CV &c = env.at(n);
            if (c.kind != CV::Value && c.kind != CV::Int && c.kind != CV::Float && c.kind != CV::Bool)
                unsupported(s, "loop-carried '" + n + "'", "only tiles and numbers can change in a loop");
            inits.push_back(materialize(c, nullptr, s));
        }
        b_.loc = loc_of(s);
        ValueId iv = b_.for_begin(vlo, vhi, vstep, is_tl_range ? "tl.range" : "range");
        fn_.values[iv].name = var;
        Env body = env;
        body[var] = CV::value(iv);
        std::vector<ValueId> args;
        for (size_t k = 0; k < carried.size(); ++k) {
            ValueId a = b_.loop_arg(inits[k], static_cast<int>(k));
            fn_.values[a].name = carried[k];
            body[carried[k]] = CV::value(a);
            args.push_back(a);
        }
        for (const auto &stmt : s.list("body")) {
            b_.loc = loc_of(*stmt);
            lower_stmt(*stmt, body, fname);
        }
        std::vector<ValueId> yields;
        for (size_t k = 0; k < carried.size(); ++k) {
            const Type t = fn_.type(args[k]);
            ValueId y = materialize(body.at(carried[k]), &t, s);
            if (!fn_.type(y).same_shape(t) || fn_.type(y).is_ptr != t.is_ptr)
                fail(TAD_ERR_UNSUPPORTED, at(s) + ": loop-carried '" + carried[k] + "' changes from " + t.str() + " to " +
                                              fn_.type(y).str() + " in the loop; give it its final shape before the loop (e.g. tl.zeros)");
            yields.push_back(t.is_ptr ? y : b_.cast(y, t.elem));
        }
        b_.loc = loc_of(s);
        b_.for_end(yields);
        for (size_t k = 0; k < carried.size(); ++k) {
            ValueId r = b_.loop_result(static_cast<int>(k), fn_.type(args[k]));
            fn_.values[r].name = carried[k];
            env[carried[k]] = CV::value(r);
        }
    }

    bool truthy(const CV &c, const ast::Node &n) const {
        switch (c.kind) {
        case CV::Int:
        case CV::Bool: return c.i != 0;
        case CV::Float: return c.f != 0;
        case CV::None: return false;
        default: unsupported(n, "condition of kind " + std::to_string(c.kind), "");
        }
    }

    void assign(const ast::Node &target, const CV &v, Env &env) {
        if (target.is("Name")) {
            const std::string &name = target.str("id");
            if (v.kind == CV::Value) {
                std::string &hint = fn_.values[v.v].name;
                if (hint.empty()) hint = name;
            }
            env[name] = v;
        } else if (target.is("Tuple") || target.is("List")) {
            const ast::NodeList &elts = target.list("elts");
            if (v.kind != CV::Tuple || v.items.size() != elts.size())
                unsupported(target, "tuple unpacking", "the right side must be a tuple of the same length");
            for (size_t i = 0; i < elts.size(); ++i) assign(*elts[i], v.items[i], env);
        } else {
            unsupported(target, "assignment to " + target.kind, "only names and tuples of names can be assigned");
        }
    }

    // ---- expressions ---------------------------------------------------------------------------
    CV eval(const ast::Node &e, Env &env) {
        ir::SrcLoc saved = b_.loc;
        if (e.has_loc) b_.loc = loc_of(e);
        CV r = eval_inner(e, env);
        b_.loc = saved;
        return r;
    }

    CV eval_inner(const ast::Node &e, Env &env) {
        if (e.is("Constant")) return constant(e);
        if (e.is("Name")) {
            const std::string &id = e.str("id");
            auto it = env.find(id);
            if (it != env.end()) {
                if (watch_ && constexpr_names_.count(id) && call_stack_.empty()) watch_->insert(id);
                return it->second;
            }
            if (jit_.count(id)) return CV::named(CV::Func, id);
            if (id == "tl" || id == "triton" || id == "libdevice" || id == "math") return CV::named(CV::Module, id);
            if (id == "True" || id == "False") return CV::boolean(id == "True");
            if (id == "None") return CV{};
            if (id == "min" || id == "max" || id == "abs" || id == "float" || id == "int" || id == "range" || id == "len" ||
                id == "static_range")
                return CV::named(CV::Func, id);
            if (const ast::Node *g = module_global(id)) {
                Env none;
                CV v = eval(*g, none);
                if (v.compile_time() && v.kind != CV::Module && v.kind != CV::Func) return v;
            }
            unsupported(e, "name '" + id + "'", "not defined in the kernel (module-level globals must be constexpr numbers)");
        }
        if (e.is("Attribute")) return attribute(e, env);
        if (e.is("BinOp")) return binop(e.node("op")->kind, eval(*e.node("left"), env), eval(*e.node("right"), env), e);
        if (e.is("UnaryOp")) return unaryop(e, eval(*e.node("operand"), env));
        if (e.is("Compare")) {
            if (e.list("ops").size() != 1) unsupported(e, "chained comparison", "write it as separate comparisons joined by &");
            return binop(e.list("ops")[0]->kind, eval(*e.node("left"), env), eval(*e.list("comparators")[0], env), e);
        }
        if (e.is("BoolOp")) {
            const std::string &op = e.node("op")->kind;
            CV acc = eval(*e.list("values")[0], env);
            for (size_t i = 1; i < e.list("values").size(); ++i)
                acc = binop(op == "And" ? "BitAnd" : "BitOr", acc, eval(*e.list("values")[i], env), e);
            return acc;
        }
        if (e.is("Tuple") || e.is("List")) {
            CV t;
            t.kind = CV::Tuple;
            for (const auto &x : e.list("elts")) t.items.push_back(eval(*x, env));
            return t;
        }
        if (e.is("IfExp")) {
            CV c = condition(*e.node("test"), env);
            if (!c.compile_time()) {
                CV a = eval(*e.node("body"), env), b = eval(*e.node("orelse"), env);
                return where(c, a, b, e);
            }
            return truthy(c, e) ? eval(*e.node("body"), env) : eval(*e.node("orelse"), env);
        }
        if (e.is("Subscript")) return subscript(e, env);
        if (e.is("Call")) return call(e, env);
        if (e.is("Slice")) {
            if (e.node("lower") || e.node("upper") || e.node("step")) unsupported(e, "slice with bounds", "only ':' and None index tiles");
            return CV::named(CV::FullSlice, ":");
        }
        unsupported(e, e.kind, "");
    }

    CV constant(const ast::Node &e) {
        const ast::Value &v = *e.find("value");
        if (auto p = std::get_if<int64_t>(&v)) return CV::integer(*p);
        if (auto p = std::get_if<double>(&v)) return CV::real(*p);
        if (auto p = std::get_if<bool>(&v)) return CV::boolean(*p);
        if (auto p = std::get_if<std::string>(&v)) return CV::named(CV::Str, *p);
        if (std::holds_alternative<ast::NoneValue>(v)) return CV{};
        unsupported(e, "constant", "");
    }

    CV attribute(const ast::Node &e, Env &env) {
        CV base = eval(*e.node("value"), env);
        const std::string &attr = e.str("attr");
        if (base.kind == CV::Module) {
            std::string full = base.s + "." + attr;
            auto dt = dtype_names().find(attr);
            if ((base.s == "tl" || base.s == "triton.language") && dt != dtype_names().end()) return CV::dtype(dt->second);
            return CV::named(CV::Module, full);
        }
        if (base.kind == CV::Value) {
            if (attr == "T") {
                if (fn_.type(base.v).rank() != 2) unsupported(e, ".T of a non-2-D tile", "");
                return CV::value(b_.trans(base.v));
            }
            const Type &t = fn_.type(base.v);
            if (attr == "dtype") {
                CV d = CV::dtype(t.elem);
                d.i = t.is_ptr;  // a pointer's dtype: its element_ty is the pointee
                return d;
            }
            CV m = CV::named(CV::Method, attr);
            m.items.push_back(base);
            return m;
        }
        if (base.kind == CV::DTypeV && attr == "element_ty") return CV::dtype(base.dt);
        unsupported(e, "attribute '" + attr + "'", "");
    }

    CV subscript(const ast::Node &e, Env &env) {
        CV base = eval(*e.node("value"), env);
        const ast::Node &sl = *e.node("slice");
        std::vector<CV> idx;
        if (sl.is("Tuple"))
            for (const auto &x : sl.list("elts")) idx.push_back(eval(*x, env));
        else
            idx.push_back(eval(sl, env));
        if (base.kind == CV::Tuple) {
            if (idx.size() != 1 || idx[0].kind != CV::Int) unsupported(e, "tuple index", "needs a constant integer");
            return base.items.at(static_cast<size_t>(idx[0].i));
        }
        if (base.kind != CV::Value) unsupported(e, "subscript", "");
        ValueId v = base.v;
        int dim = 0;
        for (const CV &i : idx) {
            if (i.kind == CV::None) {
                v = b_.expand_dims(v, dim++);
            } else if (i.kind == CV::FullSlice) {
                ++dim;
            } else {
                unsupported(e, "tile indexing", "only ':' and None are allowed in a tile subscript");
            }
        }
        if (dim != static_cast<int>(fn_.type(v).rank()))
            unsupported(e, "subscript", "the subscript must name every dim of the tile");
        return CV::value(v);
    }

    // ---- arithmetic ----------------------------------------------------------------------------
    static std::string paren(const std::string &s) { return is_identifier(s) || std::isdigit(static_cast<unsigned char>(s[0])) ? s : "(" + s + ")"; }

    CV fold(const std::string &op, const CV &a, const CV &b, const ast::Node &n) {
        bool ints = (a.kind == CV::Int || a.kind == CV::Bool) && (b.kind == CV::Int || b.kind == CV::Bool);
        auto num = [](const CV &c) { return c.kind == CV::Float ? c.f : static_cast<double>(c.i); };
        if (ints) {
            int64_t x = a.i, y = b.i;
            static const std::map<std::string, std::string> sym = {{"Add", " + "}, {"Sub", " - "}, {"Mult", " * "}, {"FloorDiv", " // "}};
            auto expr = [&](int64_t r) {
                auto it = sym.find(op);
                return it == sym.end() ? CV::integer(r) : CV::integer(r, paren(a.s) + it->second + paren(b.s));
            };
            if (op == "Add") return expr(x + y);
            if (op == "Sub") return expr(x - y);
            if (op == "Mult") return expr(x * y);
            if (op == "FloorDiv" || op == "Mod") {
                if (y == 0) unsupported(n, "division by zero", "");
                int64_t q = x / y;
                if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
                return op == "FloorDiv" ? expr(q) : CV::integer(x - q * y);
            }
            if (op == "Div") return CV::real(static_cast<double>(x) / static_cast<double>(y));
            if (op == "LShift") return CV::integer(x << y);
            if (op == "RShift") return CV::integer(x >> y);
            if (op == "BitAnd") return CV::integer(x & y);
            if (op == "BitOr") return CV::integer(x | y);
            if (op == "Pow") return CV::integer(static_cast<int64_t>(std::pow(x, y)));
        }
        if ((a.kind == CV::Int || a.kind == CV::Float || a.kind == CV::Bool) &&
            (b.kind == CV::Int || b.kind == CV::Float || b.kind == CV::Bool)) {
            double x = num(a), y = num(b);
            if (op == "Add") return CV::real(x + y);
            if (op == "Sub") return CV::real(x - y);
            if (op == "Mult") return CV::real(x * y);
            if (op == "Div") return CV::real(x / y);
            if (op == "Pow") return CV::real(std::pow(x, y));
            if (op == "Lt") return CV::boolean(x < y);
            if (op == "LtE") return CV::boolean(x <= y);
            if (op == "Gt") return CV::boolean(x > y);
            if (op == "GtE") return CV::boolean(x >= y);
            if (op == "Eq") return CV::boolean(x == y);
            if (op == "NotEq") return CV::boolean(x != y);
        }
        if (op == "Is" || op == "IsNot" || op == "Eq" || op == "NotEq") {
            bool same = a.kind == b.kind && (a.kind == CV::None || (a.kind == CV::Str && a.s == b.s) || (a.kind == CV::DTypeV && a.dt == b.dt));
            return CV::boolean((op == "Is" || op == "Eq") ? same : !same);
        }
        unsupported(n, "operator " + op + " on compile-time values", "");
    }

    // Turns a compile-time number into an IR scalar, typed after `like` (Triton's weak typing of
    // Python scalars: an int literal takes the other side's integer type, a float literal the other
    // side's float type).
    ValueId materialize(const CV &c, const Type *like, const ast::Node &n) {
        if (c.kind == CV::Value) return c.v;
        DType t;
        double v;
        if (c.kind == CV::Int || c.kind == CV::Bool) {
            v = static_cast<double>(c.i);
            if (like && !like->is_ptr) t = like->elem == DType::I1 && c.kind == CV::Int ? DType::I32 : like->elem;
            else t = (c.i > INT32_MAX || c.i < INT32_MIN) ? DType::I64 : DType::I32;
            if (c.kind == CV::Bool && !like) t = DType::I1;
        } else if (c.kind == CV::Float) {
            v = c.f;
            t = (like && like->is_float()) ? like->elem : DType::F32;
        } else {
            unsupported(n, "value of this kind in arithmetic", "");
        }
        std::string name = (c.kind == CV::Int && c.s != std::to_string(c.i)) ? c.s : (c.kind == CV::Float ? c.s : "");
        return b_.constant(v, t, name);
    }

    static DType promote(DType a, DType b) {
        bool fa = ir::dtype_is_float(a), fb = ir::dtype_is_float(b);
        if (fa != fb) return fa ? a : b;
        if (a == b) return a;
        if (fa && ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))) return DType::F32;
        return ir::dtype_rank(a) >= ir::dtype_rank(b) ? a : b;
    }

    // Brings two operands to a common shape (and, unless `keep_types`, a common element type).
    std::pair<ValueId, ValueId> unify(const CV &ca, const CV &cb, const ast::Node &n, bool keep_types = false) {
        const Type *ta = ca.kind == CV::Value ? &fn_.type(ca.v) : nullptr;
        const Type *tb = cb.kind == CV::Value ? &fn_.type(cb.v) : nullptr;
        Type la = ta ? *ta : Type{}, lb = tb ? *tb : Type{};
        ValueId a = materialize(ca, tb, n);
        ValueId b = materialize(cb, ta ? &la : nullptr, n);
        if (!keep_types) {
            const Type &xa = fn_.type(a), &xb = fn_.type(b);
            if (!xa.is_ptr && !xb.is_ptr && xa.elem != xb.elem) {
                DType t = promote(xa.elem, xb.elem);
                a = b_.cast(a, t);
                b = b_.cast(b, t);
            }
        }
        std::vector<Dim> shape;
        if (!ir::broadcast_shapes(fn_.type(a).shape, fn_.type(b).shape, &shape))
            fail(TAD_ERR_UNSUPPORTED, at(n) + ": shapes " + fn_.type(a).str() + " and " + fn_.type(b).str() + " do not broadcast");
        return {b_.broadcast(a, shape), b_.broadcast(b, shape)};
    }

    CV binop(const std::string &op, const CV &a, const CV &b, const ast::Node &n) {
        if (a.compile_time() && b.compile_time()) return fold(op, a, b, n);
        bool a_ptr = a.kind == CV::Value && fn_.type(a.v).is_ptr;
        bool b_ptr = b.kind == CV::Value && fn_.type(b.v).is_ptr;
        if (a_ptr || b_ptr) {
            if (op != "Add" && !(op == "Sub" && a_ptr && !b_ptr)) unsupported(n, "pointer arithmetic '" + op + "'", "only pointer + integer");
            CV p = a_ptr ? a : b, off = a_ptr ? b : a;
            if (op == "Sub") off = unaryop_neg(off, n);
            auto [pp, oo] = unify(p, off, n, true);
            if (fn_.type(oo).is_float()) unsupported(n, "pointer + float", "");
            return CV::value(b_.add_ptr(pp, oo));
        }
        static const std::map<std::string, OpKind> kinds = {
            {"Add", OpKind::Add}, {"Sub", OpKind::Sub}, {"Mult", OpKind::Mul}, {"Div", OpKind::Div},
            {"FloorDiv", OpKind::Div}, {"Mod", OpKind::Mod}, {"Lt", OpKind::Lt}, {"LtE", OpKind::Le},
            {"Gt", OpKind::Gt}, {"GtE", OpKind::Ge}, {"Eq", OpKind::Eq}, {"NotEq", OpKind::Ne},
            {"BitAnd", OpKind::And}, {"BitOr", OpKind::Or}, {"BitXor", OpKind::Xor}};
        auto k = kinds.find(op);
        if (k == kinds.end()) unsupported(n, "operator '" + op + "'", "");
        auto [x, y] = unify(a, b, n);
        Type t = fn_.type(x);
        if (op == "Div" && !t.is_float()) {  // true division of integers gives float32 in Triton
            x = b_.cast(x, DType::F32);
            y = b_.cast(y, DType::F32);
        }
        if (op == "FloorDiv" && t.is_float()) unsupported(n, "// on floats", "use tl.floor(a / b)");
        if ((op == "BitAnd" || op == "BitOr" || op == "BitXor") && t.is_float()) unsupported(n, "bitwise operator on floats", "");
        return CV::value(b_.binary(k->second, x, y));
    }

    CV unaryop_neg(const CV &v, const ast::Node &n) {
        if (v.kind == CV::Int) return CV::integer(-v.i, "-" + paren(v.s));
        if (v.kind == CV::Float) return CV::real(-v.f);
        if (v.kind != CV::Value) unsupported(n, "negation", "");
        return CV::value(b_.unary(OpKind::Neg, v.v));
    }

    CV unaryop(const ast::Node &e, const CV &v) {
        const std::string &op = e.node("op")->kind;
        if (op == "UAdd") return v;
        if (op == "USub") return unaryop_neg(v, e);
        if (op == "Not" || op == "Invert") {
            if (v.kind == CV::Bool || (v.kind == CV::Int && op == "Not")) return CV::boolean(!v.i);
            if (v.kind != CV::Value) unsupported(e, "operator " + op, "");
            return CV::value(b_.unary(OpKind::Not, v.v));
        }
        unsupported(e, "operator " + op, "");
    }

    CV where(const CV &c, const CV &a, const CV &b, const ast::Node &n) {
        if (c.kind != CV::Value) unsupported(n, "tl.where with a constant condition", "");
        auto [x, y] = unify(a, b, n);
        std::vector<Dim> shape;
        if (!ir::broadcast_shapes(fn_.type(c.v).shape, fn_.type(x).shape, &shape))
            fail(TAD_ERR_UNSUPPORTED, at(n) + ": tl.where condition " + fn_.type(c.v).str() + " does not broadcast with " + fn_.type(x).str());
        ValueId cc = b_.cast(c.v, DType::I1);
        return CV::value(b_.where(b_.broadcast(cc, shape), b_.broadcast(x, shape), b_.broadcast(y, shape)));
    }

    // ---- calls ---------------------------------------------------------------------------------
    struct Args {
        std::vector<CV> pos;
        std::map<std::string, CV> kw;
        const CV *get(size_t i, const std::string &name) const {
            if (i < pos.size()) return &pos[i];
            auto it = kw.find(name);
            return it == kw.end() ? nullptr : &it->second;
        }
    };

    const CV &need(const Args &a, size_t i, const std::string &name, const ast::Node &n, const std::string &fn) {
        const CV *c = a.get(i, name);
        if (!c) fail(TAD_ERR_UNSUPPORTED, at(n) + ": " + fn + " needs argument '" + name + "'");
        return *c;
    }

    CV call(const ast::Node &e, Env &env) {
        CV f = eval(*e.node("func"), env);
        Args a;
        for (const auto &x : e.list("args")) {
            if (x->is("Starred")) unsupported(*x, "*args in a call", "");
            a.pos.push_back(eval(*x, env));
        }
        for (const auto &k : e.list("keywords")) {
            const ast::Value *name = k->find("arg");
            if (!name || !std::holds_alternative<std::string>(*name)) unsupported(*k, "**kwargs in a call", "");
            a.kw[std::get<std::string>(*name)] = eval(*k->node("value"), env);
        }
        if (f.kind == CV::Func) {
            if (jit_.count(f.s)) return inline_call(e, f.s, a);
            return builtin(e, f.s, a);
        }
        if (f.kind == CV::Method) return method(e, f, a);
        if (f.kind == CV::Module) {
            std::string name = f.s;
            for (const char *prefix : {"tl.math.", "tl.extra.cuda.libdevice.", "tl.extra.libdevice.", "libdevice.", "tl.", "math."})
                if (name.rfind(prefix, 0) == 0) {
                    name = name.substr(std::string(prefix).size());
                    break;
                }
            return tl_call(e, name, f.s, a);
        }
        unsupported(e, "call", "the callee is not a @triton.jit function or a triton.language builtin");
    }

    CV inline_call(const ast::Node &e, const std::string &callee, const Args &a) {
        for (const auto &c : call_stack_)
            if (c == callee) unsupported(e, "recursive call of '" + callee + "'", "");
        const ast::Node &def = *jit_.at(callee);
        Env env;
        ast::NodePtr sig = def.node("args");
        const ast::NodeList &params = sig->list("args");
        const ast::NodeList &defaults = sig->list("defaults");
        size_t first_default = params.size() - defaults.size();
        for (size_t i = 0; i < params.size(); ++i) {
            const std::string &name = params[i]->str("arg");
            const CV *v = a.get(i, name);
            if (v) env[name] = *v;
            else if (i >= first_default) env[name] = eval(*defaults[i - first_default], env);
            else fail(TAD_ERR_UNSUPPORTED, at(e) + ": call of '" + callee + "' is missing argument '" + name + "'");
        }
        call_stack_.push_back(callee);
        CV r = lower_body(def.list("body"), env, callee);
        call_stack_.pop_back();
        return r;
    }

    CV builtin(const ast::Node &e, const std::string &name, const Args &a) {
        if ((name == "min" || name == "max") && a.pos.size() == 2 && a.pos[0].compile_time() && a.pos[1].compile_time()) {
            const CV &x = a.pos[0], &y = a.pos[1];
            bool first = name == "min" ? fold("LtE", x, y, e).i : fold("GtE", x, y, e).i;
            return first ? x : y;
        }
        if (name == "float" && a.pos.size() == 1 && a.pos[0].kind == CV::Str) {
            const std::string &s = a.pos[0].s;
            std::string t;
            for (char ch : s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (t == "inf" || t == "+inf" || t == "infinity") return CV::real(INFINITY);
            if (t == "-inf" || t == "-infinity") return CV::real(-INFINITY);
            if (t == "nan") return CV::real(NAN);
            return CV::real(std::stod(s));
        }
        if ((name == "float" || name == "int") && a.pos.size() == 1 && (a.pos[0].kind == CV::Int || a.pos[0].kind == CV::Float))
            return name == "float" ? CV::real(a.pos[0].kind == CV::Int ? static_cast<double>(a.pos[0].i) : a.pos[0].f)
                                   : CV::integer(a.pos[0].kind == CV::Int ? a.pos[0].i : static_cast<int64_t>(a.pos[0].f));
        unsupported(e, "call of '" + name + "'", "Python builtins other than float() and int() of constants are not supported in kernels");
    }

    DType dtype_arg(const CV &c, const ast::Node &n) {
        if (c.kind != CV::DTypeV) unsupported(n, "dtype argument", "expected a triton.language dtype such as tl.float32");
        return c.dt;
    }

    std::vector<Dim> shape_arg(const CV &c, const ast::Node &n) {
        std::vector<Dim> s;
        std::vector<CV> items = c.kind == CV::Tuple ? c.items : std::vector<CV>{c};
        for (const CV &d : items) {
            if (d.kind != CV::Int) unsupported(n, "shape", "dims must be constexpr integers");
            s.push_back(Dim{d.i, d.s});
        }
        return s;
    }

    ValueId value_arg(const CV &c, const ast::Node &n) { return materialize(c, nullptr, n); }

    CV tl_call(const ast::Node &e, const std::string &name, const std::string &full, const Args &a) {
        if (name == "program_id" || name == "num_programs") {
            const CV *ax = a.get(0, "axis");
            int axis = ax ? static_cast<int>(ax->i) : 0;
            return CV::value(name == "program_id" ? b_.program_id(axis) : b_.num_programs(axis));
        }
        if (name == "arange") {
            const CV &s = need(a, 0, "start", e, "tl.arange"), &t = need(a, 1, "end", e, "tl.arange");
            if (s.kind != CV::Int || t.kind != CV::Int) unsupported(e, "tl.arange", "start and end must be constexpr integers");
            std::string len = s.i == 0 ? t.s : paren(t.s) + " - " + paren(s.s);
            ValueId r = b_.arange(0, t.i - s.i, len);
            if (s.i != 0) r = b_.binary(OpKind::Add, r, b_.broadcast(b_.constant(static_cast<double>(s.i), DType::I32, s.s == std::to_string(s.i) ? "" : s.s), fn_.type(r).shape));
            return CV::value(r);
        }
        if (name == "zeros" || name == "full") {
            std::vector<Dim> shape = shape_arg(need(a, 0, "shape", e, "tl." + name), e);
            CV val = name == "zeros" ? CV::integer(0) : need(a, 1, "value", e, "tl.full");
            DType t = dtype_arg(need(a, name == "zeros" ? 1 : 2, "dtype", e, "tl." + name), e);
            double v = val.kind == CV::Float ? val.f : static_cast<double>(val.i);
            return CV::value(b_.broadcast(b_.constant(v, t), shape));
        }
        if (name == "load") return load(e, a);
        if (name == "store" || name == "atomic_add") return store(e, name, a);
        if (name == "where") return where(need(a, 0, "condition", e, "tl.where"), need(a, 1, "x", e, "tl.where"), need(a, 2, "y", e, "tl.where"), e);
        if (name == "maximum" || name == "minimum") {
            auto [x, y] = unify(need(a, 0, "x", e, "tl." + name), need(a, 1, "y", e, "tl." + name), e);
            return CV::value(b_.binary(name == "maximum" ? OpKind::Maximum : OpKind::Minimum, x, y));
        }
        if (name == "sum" || name == "max" || name == "min") return reduce(e, name, a);
        // Composites lowered to ops the rules table already has.
        if (name == "fdiv" || name == "div_rn")
            return binop("Div", need(a, 0, "x", e, "tl." + name), need(a, 1, "y", e, "tl." + name), e);
        if (name == "sqrt_rn") return tl_call(e, "sqrt", "tl.sqrt", a);
        if (name == "fma") {  // x·y + z
            CV xy = binop("Mult", need(a, 0, "x", e, "tl.fma"), need(a, 1, "y", e, "tl.fma"), e);
            return binop("Add", xy, need(a, 2, "z", e, "tl.fma"), e);
        }
        if (name == "clamp") {  // min(max(x, lo), hi): at a bound the gradient is shared as for ties
            auto [x, lo] = unify(need(a, 0, "x", e, "tl.clamp"), need(a, 1, "min", e, "tl.clamp"), e);
            ValueId low = b_.binary(OpKind::Maximum, x, lo);
            auto [y, hi] = unify(CV::value(low), need(a, 2, "max", e, "tl.clamp"), e);
            return CV::value(b_.binary(OpKind::Minimum, y, hi));
        }
        if (name == "softmax") {  // exp(x - max) / Σ exp(x - max) along the last dim
            ValueId x = value_arg(need(a, 0, "input", e, "tl.softmax"), e);
            if (!fn_.type(x).is_float()) x = b_.cast(x, DType::F32);
            int last = static_cast<int>(fn_.type(x).rank()) - 1;
            if (last < 0) unsupported(e, "tl.softmax of a scalar", "");
            ValueId m = b_.broadcast(b_.reduce(OpKind::ReduceMax, x, last, true), fn_.type(x).shape);
            ValueId num = b_.unary(OpKind::Exp, b_.binary(OpKind::Sub, x, m));
            ValueId den = b_.broadcast(b_.reduce(OpKind::ReduceSum, num, last, true), fn_.type(x).shape);
            return CV::value(b_.binary(OpKind::Div, num, den));
        }
        if (name == "cast") return CV::value(b_.cast(value_arg(need(a, 0, "input", e, "tl.cast"), e), dtype_arg(need(a, 1, "dtype", e, "tl.cast"), e), true));
        if (name == "broadcast_to") {
            ValueId v = value_arg(need(a, 0, "input", e, "tl.broadcast_to"), e);
            return CV::value(b_.broadcast(v, shape_arg(need(a, 1, "shape", e, "tl.broadcast_to"), e)));
        }
        if (name == "dot") return dot(e, a);
        if (name == "trans" || name == "permute") {
            ValueId v = value_arg(need(a, 0, "input", e, "tl." + name), e);
            if (fn_.type(v).rank() != 2) unsupported(e, "tl." + name + " of a " + std::to_string(fn_.type(v).rank()) + "-D tile", "only 2-D tiles are supported");
            if (name == "permute") {
                const CV &dims = need(a, 1, "dims", e, "tl.permute");
                if (dims.kind != CV::Tuple || dims.items.size() != 2 || dims.items[0].i != 1 || dims.items[1].i != 0)
                    unsupported(e, "tl.permute", "only (1, 0) on 2-D tiles");
            }
            return CV::value(b_.trans(v));
        }
        if (name == "expand_dims") {
            const CV &ax = need(a, 1, "axis", e, "tl.expand_dims");
            return CV::value(b_.expand_dims(value_arg(need(a, 0, "input", e, "tl.expand_dims"), e), static_cast<int>(ax.i)));
        }
        if (name == "static_assert" || name == "device_assert" || name == "static_print" || name == "debug_barrier")
            return CV{};
        if (name == "constexpr") return need(a, 0, "value", e, "tl.constexpr");
        if (name == "rand") {
            ValueId seed = b_.cast(value_arg(need(a, 0, "seed", e, "tl.rand"), e), DType::I32);
            ValueId offs = value_arg(need(a, 1, "offset", e, "tl.rand"), e);
            if (ir::dtype_is_float(fn_.type(offs).elem)) unsupported(e, "tl.rand with float offsets", "");
            return CV::value(b_.rand(seed, offs));
        }
        if (name == "cdiv") {
            const CV &x = need(a, 0, "x", e, "cdiv"), &y = need(a, 1, "div", e, "cdiv");
            if (x.kind == CV::Int && y.kind == CV::Int) return CV::integer((x.i + y.i - 1) / y.i);
            CV num = binop("Add", x, binop("Sub", y, CV::integer(1), e), e);
            return binop("FloorDiv", num, y, e);
        }
        auto um = unary_math().find(name);
        if (um != unary_math().end()) {
            const CV &x = need(a, 0, "x", e, full);
            if (x.compile_time()) unsupported(e, full + " of a constant", "");
            ValueId v = x.v;
            if (!fn_.type(v).is_float() && um->second != OpKind::Abs) v = b_.cast(v, DType::F32);
            return CV::value(b_.unary(um->second, v));
        }
        unsupported(e, full, "not in tad's rules table yet");
    }

    // tl.dot(a, b, acc) is lowered as acc + dot(a, b): the accumulate is then an ordinary add,
    // which is what makes a K loop an accumulator loop for reverse mode.
    CV dot(const ast::Node &e, const Args &a) {
        ValueId x = value_arg(need(a, 0, "input", e, "tl.dot"), e), y = value_arg(need(a, 1, "other", e, "tl.dot"), e);
        if (fn_.type(x).rank() != 2 || fn_.type(y).rank() != 2) unsupported(e, "tl.dot of 3-D tiles", "batched dots are not supported yet");
        if (fn_.type(x).shape[1].value != fn_.type(y).shape[0].value)
            fail(TAD_ERR_UNSUPPORTED, at(e) + ": tl.dot shapes " + fn_.type(x).str() + " and " + fn_.type(y).str() + " do not multiply");
        if (fn_.type(x).elem != fn_.type(y).elem) {
            DType t = promote(fn_.type(x).elem, fn_.type(y).elem);
            x = b_.cast(x, t);
            y = b_.cast(y, t);
        }
        std::string precision;
        const CV *p = a.kw.count("input_precision") ? &a.kw.at("input_precision") : nullptr;
        if (p && p->kind == CV::Str) precision = p->s;
        const CV *tf32 = a.kw.count("allow_tf32") ? &a.kw.at("allow_tf32") : nullptr;
        if (tf32 && tf32->kind == CV::Bool && !tf32->i) precision = "ieee";
        const CV *out = a.kw.count("out_dtype") ? &a.kw.at("out_dtype") : nullptr;
        DType od = out && out->kind == CV::DTypeV ? out->dt : (ir::dtype_is_float(fn_.type(x).elem) ? DType::F32 : DType::I32);
        ValueId r = b_.dot(x, y, od, precision);
        const CV *acc = a.get(2, "acc");
        if (!acc || acc->kind == CV::None) return CV::value(r);
        ValueId av = value_arg(*acc, e);
        return CV::value(b_.binary(OpKind::Add, av, b_.cast(r, fn_.type(av).elem)));
    }

    CV load(const ast::Node &e, const Args &a) {
        ValueId p = value_arg(need(a, 0, "pointer", e, "tl.load"), e);
        if (!fn_.type(p).is_ptr) unsupported(e, "tl.load", "the address is not a pointer");
        if (a.kw.count("boundary_check") || a.kw.count("padding_option"))
            unsupported(e, "tl.load with boundary_check", "block pointers are not supported yet");
        const CV *mask = a.get(1, "mask");
        const CV *other = a.get(2, "other");
        ValueId m = ir::kNoValue, o = ir::kNoValue;
        std::vector<Dim> shape = fn_.type(p).shape;
        if (mask && mask->kind != CV::None) {
            ValueId mv = b_.cast(value_arg(*mask, e), DType::I1);
            std::vector<Dim> s2;
            if (!ir::broadcast_shapes(shape, fn_.type(mv).shape, &s2))
                fail(TAD_ERR_UNSUPPORTED, at(e) + ": mask " + fn_.type(mv).str() + " does not broadcast with pointer " + fn_.type(p).str());
            shape = s2;
            m = mv;
        }
        p = b_.broadcast(p, shape);
        if (m != ir::kNoValue) m = b_.broadcast(m, shape);
        if (other && other->kind != CV::None) {
            if (m == ir::kNoValue) unsupported(e, "tl.load with other= and no mask", "");
            Type elem = fn_.type(p).with_elem(fn_.type(p).elem);
            ValueId ov = b_.cast(materialize(*other, &elem, e), elem.elem);
            o = b_.broadcast(ov, shape);
        }
        return CV::value(b_.load(p, m, o));
    }

    CV store(const ast::Node &e, const std::string &name, const Args &a) {
        ValueId p = value_arg(need(a, 0, "pointer", e, "tl." + name), e);
        if (!fn_.type(p).is_ptr) unsupported(e, "tl." + name, "the address is not a pointer");
        Type elem = fn_.type(p).with_elem(fn_.type(p).elem);
        ValueId v = materialize(need(a, 1, name == "store" ? "value" : "val", e, "tl." + name), &elem, e);
        const CV *mask = a.get(2, "mask");
        std::vector<Dim> shape;
        if (!ir::broadcast_shapes(fn_.type(p).shape, fn_.type(v).shape, &shape))
            fail(TAD_ERR_UNSUPPORTED, at(e) + ": value " + fn_.type(v).str() + " does not broadcast with pointer " + fn_.type(p).str());
        ValueId m = ir::kNoValue;
        if (mask && mask->kind != CV::None) {
            m = b_.cast(value_arg(*mask, e), DType::I1);
            std::vector<Dim> s2;
            if (!ir::broadcast_shapes(shape, fn_.type(m).shape, &s2))
                fail(TAD_ERR_UNSUPPORTED, at(e) + ": mask " + fn_.type(m).str() + " does not broadcast with pointer " + fn_.type(p).str());
            shape = s2;
            m = b_.broadcast(m, shape);
        }
        p = b_.broadcast(p, shape);
        v = b_.broadcast(b_.cast(v, elem.elem), shape);
        if (name == "store") {
            b_.store(p, v, m);
        } else {
            const CV *sem = a.get(3, "sem");
            b_.atomic_add(p, v, m, sem && sem->kind == CV::Str ? sem->s : "acq_rel");
        }
        return CV{};
    }

    CV reduce(const ast::Node &e, const std::string &name, const Args &a) {
        ValueId v = value_arg(need(a, 0, "input", e, "tl." + name), e);
        const CV *axis = a.get(1, "axis");
        const CV *keep = a.kw.count("keep_dims") ? &a.kw.at("keep_dims") : nullptr;
        if (a.kw.count("return_indices") && a.kw.at("return_indices").i)
            unsupported(e, "tl." + name + " with return_indices", "");
        int ax = -1;
        if (axis && axis->kind != CV::None) {
            ax = static_cast<int>(axis->i);
            if (ax < 0) ax += static_cast<int>(fn_.type(v).rank());
        }
        bool kd = keep && keep->i;
        OpKind k = name == "sum" ? OpKind::ReduceSum : name == "max" ? OpKind::ReduceMax : OpKind::ReduceMin;
        if (k == OpKind::ReduceSum && fn_.type(v).elem == DType::I1) v = b_.cast(v, DType::I32);
        if (ax < 0 && kd) unsupported(e, "tl." + name + " over all dims with keep_dims", "");
        if (ax < 0 && fn_.type(v).rank() == 1) ax = 0;
        return CV::value(b_.reduce(k, v, ax, kd));
    }

    CV method(const ast::Node &e, const CV &m, const Args &a) {
        ValueId recv = m.items[0].v;
        if (m.s == "to") return CV::value(b_.cast(recv, dtype_arg(need(a, 0, "dtype", e, ".to"), e), true));
        Args with_self = a;
        with_self.pos.insert(with_self.pos.begin(), m.items[0]);
        if (m.s == "sum" || m.s == "max" || m.s == "min") return reduce(e, m.s, with_self);
        auto um = unary_math().find(m.s);
        if (um != unary_math().end()) return CV::value(b_.unary(um->second, recv));
        unsupported(e, "method '." + m.s + "'", "");
    }
};

}  // namespace

ir::Function lower_kernel(const KernelFile &kf, const std::string &kernel, const std::vector<ArgBinding> &args) {
    return Lowerer(kf.file, kf.jit_functions).run(kernel, args);
}

ir::Function lower_kernel(const ast::File &file, const std::string &kernel, const std::vector<ArgBinding> &args) {
    std::map<std::string, ast::NodePtr> jit;
    for (const auto &s : file.module->list("body"))
        if (s->is("FunctionDef"))
            for (const auto &d : s->list("decorator_list"))
                if (is_jit_decorator(*d)) jit[s->str("name")] = s;
    return Lowerer(file, jit).run(kernel, args);
}

}  // namespace tad::frontend
