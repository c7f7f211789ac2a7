// Expressions: dispatch by node kind, names, constants, attributes and subscripts.
#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

CV Lowerer::eval(const ast::Node &e, Env &env) {
    ir::SrcLoc saved = b_.loc;
    if (e.has_loc) b_.loc = loc_of(e);
    CV r = eval_inner(e, env);
    b_.loc = saved;
    return r;
}

CV Lowerer::eval_inner(const ast::Node &e, Env &env) {
    if (e.is("Constant")) return constant(e);
    if (e.is("Name")) return name_value(e, env);
    if (e.is("Attribute")) return attribute(e, env);
    if (e.is("BinOp")) return binop(e.node("op")->kind, eval(*e.node("left"), env), eval(*e.node("right"), env), e);
    if (e.is("UnaryOp")) return unaryop(e, eval(*e.node("operand"), env));
    if (e.is("Compare")) {
        if (e.list("ops").size() != 1)
            unsupported(e, "chained comparison", "write it as separate comparisons joined by &");
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
    if (e.is("IfExp")) return if_exp(e, env);
    if (e.is("Subscript")) return subscript(e, env);
    if (e.is("Call")) return call(e, env);
    if (e.is("Slice")) {
        if (e.node("lower") || e.node("upper") || e.node("step"))
            unsupported(e, "slice with bounds", "only ':' and None index tiles");
        return CV::named(CV::FullSlice, ":");
    }
    unsupported(e, e.kind, "");
}

// A local, a @triton.jit function, a module, a Python builtin, or a module-level global (an import,
// an alias, a constexpr).
CV Lowerer::name_value(const ast::Node &e, Env &env) {
    const std::string &id = e.str("id");
    auto it = env.find(id);
    if (it != env.end()) return it->second;
    if (jit_.count(id)) return CV::named(CV::Func, id);
    if (id == "True" || id == "False") return CV::boolean(id == "True");
    if (id == "None") return CV{};
    std::string imported = imported_module(id);
    if (!imported.empty()) return CV::named(CV::Module, imported);
    if (id == "tl" || id == "triton" || id == "libdevice" || id == "math") return CV::named(CV::Module, id);
    if (id == "min" || id == "max" || id == "abs" || id == "float" || id == "int" || id == "range" || id == "len" ||
        id == "static_range")
        return CV::named(CV::Func, id);
    if (std::optional<CV> g = global_value(e, id)) return *g;
    auto half = env.find(kOneBranchPrefix + id);
    if (half != env.end())
        unsupported(e, "name '" + id + "'",
                    "assigned in only one branch of the if on a run-time value at " + half->second.s +
                        "; assign it before the if or in both branches");
    unsupported(e, "name '" + id + "'",
                "not defined in the kernel (module-level globals must be constexpr numbers, imports or aliases of "
                "triton.language functions)");
}

// `a if c else b`: chosen at compile time, or both sides evaluated and merged with where().
CV Lowerer::if_exp(const ast::Node &e, Env &env) {
    CV c = condition(*e.node("test"), env);
    if (!c.compile_time()) {
        CV a = eval(*e.node("body"), env), b = eval(*e.node("orelse"), env);
        return where(c, a, b, e);
    }
    return truthy(c, e) ? eval(*e.node("body"), env) : eval(*e.node("orelse"), env);
}

CV Lowerer::constant(const ast::Node &e) {
    const ast::Value &v = *e.find("value");
    if (auto p = std::get_if<int64_t>(&v)) return CV::integer(*p);
    if (auto p = std::get_if<double>(&v)) return CV::real(*p);
    if (auto p = std::get_if<bool>(&v)) return CV::boolean(*p);
    if (auto p = std::get_if<std::string>(&v)) return CV::named(CV::Str, *p);
    if (std::holds_alternative<ast::NoneValue>(v)) return CV{};
    unsupported(e, "constant", "");
}

CV Lowerer::attribute(const ast::Node &e, Env &env) {
    CV base = eval(*e.node("value"), env);
    const std::string &attr = e.str("attr");
    if (base.kind == CV::Module) {
        std::string full = base.s + "." + attr;
        auto dt = dtype_names().find(attr);
        if (base.s == "tl" && dt != dtype_names().end()) return CV::dtype(dt->second);
        if (base.s == "math")
            if (std::optional<CV> c = math_constant(attr)) return *c;
        return CV::named(CV::Module, full);
    }
    if (base.kind == CV::Value) {
        if (attr == "T") {
            if (fn_.type(base.v).rank() != 2) unsupported(e, ".T of a non-2-D tile", "");
            return CV::value(b_.trans(base.v));
        }
        const Type &t = fn_.type(base.v);
        if (attr == "dtype" || attr == "type") {  // for pointers and tiles alike: .element_ty follows
            CV d = CV::dtype(t.elem);
            d.i = t.is_ptr;  // a pointer's dtype: its element_ty is the pointee
            // `x.to(v.dtype)` must follow v's dtype when the backward runs on other input dtypes.
            if (!t.is_ptr) d.v = base.v;
            return d;
        }
        CV m = CV::named(CV::Method, attr);
        m.items.push_back(base);
        return m;
    }
    if (base.kind == CV::TensorDesc) return tensor_desc_attribute(e, base, attr);
    if (base.kind == CV::DTypeV && attr == "element_ty") return CV::dtype(base.dt);
    unsupported(e, "attribute '" + attr + "'", "");
}

CV Lowerer::subscript(const ast::Node &e, Env &env) {
    CV base = eval(*e.node("value"), env);
    const ast::Node &sl = *e.node("slice");
    std::vector<CV> idx;
    if (sl.is("Tuple"))
        for (const auto &x : sl.list("elts")) idx.push_back(eval(*x, env));
    else
        idx.push_back(eval(sl, env));
    if (base.kind == CV::Tuple) {
        if (idx.size() != 1 || idx[0].kind != CV::Int) unsupported(e, "tuple index", "needs a constant integer");
        const int64_t i = int_of(idx[0], e, "tuple index");
        const auto n = static_cast<int64_t>(base.items.size());
        if (i < -n || i >= n) unsupported(e, "tuple index " + std::to_string(i), "out of range");
        return base.items.at(static_cast<size_t>(i < 0 ? i + n : i));
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

}  // namespace tad::frontend::detail
