// `if` on a run-time scalar and early `return`, by if-conversion: the IR has no branches, so both
// branches are lowered one after the other, each under its predicate (which masks its loads and
// stores), and the names they assign are merged with where(cond, then, else) afterwards.
// "Returned" is a per-function liveness flag kept in the environment ("$alive": absent while the
// program certainly runs, False once it certainly returned, else an i1 scalar); the statements
// after a `return` in a run-time branch run under it.
#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

const char *kAlive = "$alive";

bool same_cv(const CV &a, const CV &b) {
    // Equal values from different constexprs differ: the merge would otherwise forget one of them.
    if (a.kind != b.kind || a.v != b.v || a.i != b.i || a.s != b.s || a.dt != b.dt ||
        a.items.size() != b.items.size() || a.deps != b.deps)
        return false;
    if (a.kind == CV::Float && !(a.f == b.f)) return false;
    if (a.block.size() != b.block.size()) return false;
    for (size_t d = 0; d < a.block.size(); ++d)
        if (a.block[d].value != b.block[d].value) return false;
    for (size_t k = 0; k < a.items.size(); ++k)
        if (!same_cv(a.items[k], b.items[k])) return false;
    return true;
}

bool is_number(const CV &c) {
    return c.kind == CV::Value || c.kind == CV::Int || c.kind == CV::Float || c.kind == CV::Bool;
}

}  // namespace

ValueId Lowerer::alive(const Env &env) {
    auto it = env.find(kAlive);
    return it == env.end() || it->second.kind != CV::Value ? ir::kNoValue : it->second.v;
}

bool Lowerer::returned(const Env &env) {
    auto it = env.find(kAlive);
    return it != env.end() && it->second.kind == CV::Bool && !it->second.i;
}

ValueId Lowerer::conjoin(ValueId a, ValueId b) {
    if (a == ir::kNoValue) return b;
    if (b == ir::kNoValue || a == b) return a;
    return b_.binary(OpKind::And, a, b);
}

ValueId Lowerer::predicated(ValueId mask, const std::vector<Dim> &shape) {
    if (pred_ == ir::kNoValue) return mask;
    ValueId p = b_.broadcast(pred_, shape);
    return mask == ir::kNoValue ? p : b_.binary(OpKind::And, mask, p);
}

void Lowerer::lower_return(const ast::Node &s, Env &env) {
    ast::NodePtr v = s.node("value");
    CV r = v ? eval(*v, env) : CV{};
    // A value returned on some paths only would need merging with the later return's value; a
    // helper can compute it with tl.where and return once instead.
    if (r.kind != CV::None && (dynamic_ifs_ > 0 || alive(env) != ir::kNoValue))
        unsupported(s, "return with a value under an if on a run-time value",
                    "compute the result with tl.where and return it at the end of the function");
    env["$return"] = r;
    env[kAlive] = CV::boolean(false);
}

ValueId Lowerer::scalar_condition(const CV &c, const ast::Node &s) {
    if (c.kind != CV::Value) unsupported(s, "if", "the condition is neither a constexpr nor a run-time scalar");
    const Type &t = fn_.type(c.v);
    if (!t.scalar())
        unsupported(s, "if",
                    "the condition is a tile (" + t.str() +
                        "); only scalar conditions are supported (use tl.where to choose per element)");
    if (t.is_ptr) unsupported(s, "if", "the condition is a pointer; only scalar conditions are supported");
    if (t.elem == DType::I1) return c.v;
    return b_.binary(OpKind::Ne, c.v, b_.constant(0, t.elem));
}

bool Lowerer::lower_dynamic_if(const ast::Node &s, const CV &cond, Env &env, const std::string &fname) {
    b_.loc = loc_of(s);
    const ValueId c = scalar_condition(cond, s), outer = pred_;
    Env then_env = env, else_env = env;
    ++dynamic_ifs_;
    pred_ = conjoin(outer, c);
    lower_block(s.list("body"), then_env, fname);
    if (!s.list("orelse").empty()) {
        b_.loc = loc_of(s);
        pred_ = conjoin(outer, b_.unary(OpKind::Not, c));
        lower_block(s.list("orelse"), else_env, fname);
    }
    pred_ = outer;
    --dynamic_ifs_;
    b_.loc = loc_of(s);
    merge_branches(s, c, env, then_env, else_env);
    return returned(env);
}

void Lowerer::merge_branches(const ast::Node &s, ValueId c, Env &env, const Env &then_env, const Env &else_env) {
    const bool then_out = returned(then_env), else_out = returned(else_env);
    if (then_out && else_out) {
        env[kAlive] = CV::boolean(false);
        return;
    }
    // After a branch that returned, only the other branch's state matters, and the program lives
    // on only where that branch was taken.
    if (then_out || else_out) {
        env = then_out ? else_env : then_env;
        ValueId taken = then_out ? b_.unary(OpKind::Not, c) : c;
        env[kAlive] = CV::value(conjoin(taken, alive(env)));
        return;
    }
    const ValueId live_then = alive(then_env), live_else = alive(else_env);
    Env merged = merged_names(s, c, env, then_env, else_env);
    if (live_then != live_else) {
        // Returned in a nested `if` of one branch: c ? live_then : live_else (kNoValue: true).
        ValueId live = live_then == ir::kNoValue   ? b_.binary(OpKind::Or, c, live_else)
                       : live_else == ir::kNoValue ? b_.binary(OpKind::Or, b_.unary(OpKind::Not, c), live_then)
                                                   : b_.where(c, live_then, live_else);
        merged[kAlive] = CV::value(live);
    }
    env = std::move(merged);
}

// `env` with the names both branches assign merged; a name only one branch assigns becomes
// undefined, with a marker saying why.
Lowerer::Env Lowerer::merged_names(const ast::Node &s, ValueId c, const Env &env, const Env &then_env,
                                   const Env &else_env) {
    Env merged = env;
    for (const Env *side : {&then_env, &else_env})
        for (const auto &[name, v] : *side) {
            if (name[0] == '$') {
                if (name.rfind(kOneBranchPrefix, 0) == 0) merged[name] = v;
                continue;
            }
            const Env &other = side == &then_env ? else_env : then_env;
            auto o = other.find(name);
            if (o == other.end()) {
                merged.erase(name);
                merged[kOneBranchPrefix + name] = CV::named(CV::Str, at(s));
            } else if (side == &then_env) {
                merged[name] = merge_value(s, c, name, v, o->second);
            }
        }
    return merged;
}

CV Lowerer::merge_value(const ast::Node &s, ValueId c, const std::string &name, const CV &t, const CV &e) {
    if (same_cv(t, e)) return t;
    auto mismatch = [&](const std::string &a, const std::string &b) {
        unsupported(s, "if",
                    "'" + name + "' is " + a + " after one branch and " + b +
                        " after the other; both branches must give it the same type and shape");
    };
    auto describe = [&](const CV &v) {
        static const char *kinds[] = {
            "a tile",  "an int",   "a float",    "a bool",   "None",    "a string",        "a dtype",
            "a tuple", "a module", "a function", "a method", "a slice", "a block pointer", "a tensor descriptor"};
        return v.kind == CV::Value ? fn_.type(v.v).str() : std::string(kinds[v.kind]);
    };
    if (t.kind == CV::Tuple && e.kind == CV::Tuple && t.items.size() == e.items.size()) {
        CV r = t;
        for (size_t k = 0; k < t.items.size(); ++k) r.items[k] = merge_value(s, c, name, t.items[k], e.items[k]);
        return r;
    }
    if (t.kind == CV::BlockPtr && e.kind == CV::BlockPtr) return merge_block_ptr(s, c, name, t, e);
    if (t.kind == CV::TensorDesc && e.kind == CV::TensorDesc)
        unsupported(s, "if",
                    "tensor descriptor '" + name +
                        "' is rebuilt in a branch; create it once before the if and choose the offsets instead");
    auto pointer = [&](const CV &v) { return v.kind == CV::Value && fn_.type(v.v).is_ptr; };
    if (!is_number(t) || !is_number(e) || pointer(t) != pointer(e)) mismatch(describe(t), describe(e));
    if (t.kind == CV::Value && e.kind == CV::Value) {
        // Python numbers take the other side's type (as in arithmetic); run-time values must agree.
        const Type &a = fn_.type(t.v), &b = fn_.type(e.v);
        bool tiles = !a.scalar() && !b.scalar();
        if (a.elem != b.elem || (tiles && !a.same_shape(b))) mismatch(a.str(), b.str());
    }
    CV r = where(CV::value(c), t, e, s);
    if (fn_.values[r.v].name.empty()) fn_.values[r.v].name = name;
    return r;
}

// A block pointer moved by tl.advance in a branch: only the offsets differ, and they merge as
// numbers.
CV Lowerer::merge_block_ptr(const ast::Node &s, ValueId c, const std::string &name, const CV &t, const CV &e) {
    CV r = t;
    const size_t rank = t.block.size();
    bool same_window = t.v == e.v && rank == e.block.size();
    for (size_t k = 0; same_window && k < 2 * rank; ++k) same_window = same_cv(t.items[k], e.items[k]);
    if (!same_window)
        unsupported(s, "if", "block pointer '" + name + "' is rebuilt in a branch; move it with tl.advance instead");
    for (size_t d = 0; d < rank; ++d) r.offset(d) = merge_value(s, c, name, t.offset(d), e.offset(d));
    return r;
}

}  // namespace tad::frontend::detail
