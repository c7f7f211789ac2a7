// Calls: dispatch by callee, inlining of @triton.jit helpers, Python builtins, tile methods and
// argument helpers.
#include <cctype>
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

const CV &Lowerer::need(const Args &a, size_t i, const std::string &name, const ast::Node &n, const std::string &fn) {
    const CV *c = a.get(i, name);
    if (!c) fail(TAD_ERR_UNSUPPORTED, at(n) + ": " + fn + " needs argument '" + name + "'");
    return *c;
}

CV Lowerer::call(const ast::Node &e, Env &env) {
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
    if (f.kind == CV::DTypeV) {  // tl.float32(x): a cast, as Triton's dtype objects convert when called
        if (a.pos.size() != 1) unsupported(e, "dtype call", "takes one argument, the value to convert");
        return CV::value(b_.cast(value_arg(a.pos[0], e), dtype_arg(f, e), true));
    }
    if (f.kind == CV::Module) {
        std::string name = f.s;
        bool constants = !a.pos.empty();
        for (const CV &x : a.pos) constants = constants && x.compile_time();
        if (name.rfind("math.", 0) == 0 && constants) return math_call(e, name.substr(5), a);
        for (const char *prefix :
             {"tl.math.", "tl.extra.cuda.libdevice.", "tl.extra.libdevice.", "libdevice.", "tl.", "math.", "triton."})
            if (name.rfind(prefix, 0) == 0) {
                name = name.substr(std::string(prefix).size());
                break;
            }
        return tl_call(e, name, f.s, a);
    }
    unsupported(e, "call", "the callee is not a @triton.jit function or a triton.language builtin");
}

CV Lowerer::inline_call(const ast::Node &e, const std::string &called, const Args &a) {
    const std::string callee = differentiable_definition(e, called);
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
        if (v)
            env[name] = *v;
        else if (i >= first_default)
            env[name] = eval(*defaults[i - first_default], env);
        else
            fail(TAD_ERR_UNSUPPORTED, at(e) + ": call of '" + callee + "' is missing argument '" + name + "'");
    }
    std::vector<CV> bound;
    for (const auto &p : params) bound.push_back(env.at(p->str("arg")));
    call_stack_.push_back(callee);
    int outer_ifs = dynamic_ifs_;
    dynamic_ifs_ = 0;  // a `return` here leaves the helper, not the caller's branch
    CV r = lower_body(def.list("body"), env, callee);
    dynamic_ifs_ = outer_ifs;
    call_stack_.pop_back();
    const std::vector<std::string> partials = user_derivatives(e, called);
    return partials.empty() ? r : with_derivatives(e, r, partials, bound, a);
}

// The helper's value with the gradient its TAD_DERIVATIVES give: grad_via(y, Σ stop_gradient(∂y/∂x_i)
// · x_i), whose derivative along each x_i is the given ∂y/∂x_i (elementwise helpers).
CV Lowerer::with_derivatives(const ast::Node &e, const CV &y, const std::vector<std::string> &partials,
                             const std::vector<CV> &bound, const Args &a) {
    if (y.kind != CV::Value || !fn_.type(y.v).is_float())
        unsupported(e, "TAD_DERIVATIVES", "the helper must return one float tile or scalar");
    CV sum = CV::real(0.0);
    for (size_t i = 0; i < partials.size(); ++i) {
        if (partials[i].empty() || bound[i].kind != CV::Value || fn_.type(bound[i].v).is_ptr) continue;
        CV d = inline_call(e, partials[i], a);
        if (d.kind != CV::Value) unsupported(e, "TAD_DERIVATIVES", "'" + partials[i] + "' must return a tile");
        sum = binop("Add", sum, binop("Mult", CV::value(b_.unary(OpKind::StopGradient, d.v)), bound[i], e), e);
    }
    const Type &t = fn_.type(y.v);
    ValueId s = b_.cast(b_.broadcast(materialize(sum, &t, e), t.shape), t.elem);
    return CV::value(b_.append(ir::Op(OpKind::GradVia, {y.v, s}), t));
}

namespace {

// float(s) of a string: the special values Triton kernels spell (float("-inf")), or a number.
double parse_float(const std::string &s) {
    std::string t;
    for (char ch : s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (t == "inf" || t == "+inf" || t == "infinity") return INFINITY;
    if (t == "-inf" || t == "-infinity") return -INFINITY;
    if (t == "nan") return NAN;
    return std::stod(s);
}

}  // namespace

CV Lowerer::builtin(const ast::Node &e, const std::string &name, const Args &a) {
    if ((name == "min" || name == "max") && a.pos.size() >= 2 && a.kw.empty()) {
        CV acc = a.pos[0];
        for (size_t i = 1; i < a.pos.size(); ++i) acc = extremum(e, name == "min", acc, a.pos[i]);
        return acc;
    }
    if (name == "float" && a.pos.size() == 1 && a.pos[0].kind == CV::Str) {
        CV r = CV::real(parse_float(a.pos[0].s));
        r.deps = a.pos[0].deps;
        return r;
    }
    if ((name == "float" || name == "int") && a.pos.size() == 1 &&
        (a.pos[0].kind == CV::Int || a.pos[0].kind == CV::Float)) {
        const CV &x = a.pos[0];
        if (name == "float") return x.kind == CV::Int ? as_float(x) : x;
        if (x.kind == CV::Int) return x;
        CV r = CV::integer(static_cast<int64_t>(x.f));
        r.deps = x.deps;
        return r;
    }
    unsupported(e, "call of '" + name + "'",
                "Python builtins other than float() and int() of constants are not supported in kernels");
}

// Builtin min / max of two values: folded on compile-time ones; on run-time ones tl.minimum /
// tl.maximum, as Triton's code generator maps them.
CV Lowerer::extremum(const ast::Node &e, bool min, const CV &x, const CV &y) {
    if (!x.compile_time() || !y.compile_time()) {
        auto [vx, vy] = unify(x, y, e);
        return CV::value(b_.binary(min ? OpKind::Minimum : OpKind::Maximum, vx, vy));
    }
    const CV cmp = fold(min ? "LtE" : "GtE", x, y, e);
    // The choice depends on both: the result keeps no spelling.
    CV r = cmp.i ? x : y;
    r.deps = cmp.deps;
    r.symbolic = false;
    if (r.kind == CV::Int) r.s = std::to_string(r.i);
    return r;
}

CV Lowerer::method(const ast::Node &e, const CV &m, const Args &a) {
    if (m.items[0].kind == CV::TensorDesc) return tensor_desc_method(e, m.items[0], m.s, a);
    ValueId recv = m.items[0].v;
    if (m.s == "to") {
        const CV &d = need(a, 0, "dtype", e, ".to");
        if (d.kind == CV::DTypeV && d.v != ir::kNoValue && !fn_.type(recv).is_ptr)
            return CV::value(b_.cast_like(recv, d.v));
        return CV::value(b_.cast(recv, dtype_arg(d, e), true));
    }
    Args with_self = a;
    with_self.pos.insert(with_self.pos.begin(), m.items[0]);
    static const std::set<std::string> tl_methods = {"sum",     "max",         "min",         "argmax", "argmin",
                                                     "cumsum",  "reshape",     "split",       "cast",   "trans",
                                                     "permute", "expand_dims", "broadcast_to"};
    if (tl_methods.count(m.s)) return tl_call(e, m.s, "." + m.s, with_self);
    auto um = unary_math().find(m.s);
    if (um != unary_math().end()) return CV::value(b_.unary(um->second, recv));
    unsupported(e, "method '." + m.s + "'", "");
}

DType Lowerer::dtype_arg(const CV &c, const ast::Node &n) {
    if (c.kind != CV::DTypeV) unsupported(n, "dtype argument", "expected a triton.language dtype such as tl.float32");
    consume(c);
    return c.dt;
}

std::vector<Dim> Lowerer::shape_arg(const CV &c, const ast::Node &n) {
    std::vector<Dim> s;
    std::vector<CV> items = c.kind == CV::Tuple ? c.items : std::vector<CV>{c};
    for (const CV &d : items) s.push_back(dim_of(d, n));
    return s;
}

}  // namespace tad::frontend::detail
