// Statements: assignments, static `if`, and for loops (unrolled or lowered to IR loops).
#include <algorithm>
#include <functional>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

CV Lowerer::lower_body(const ast::NodeList &body, Env &env, const std::string &fname) {
    lower_block(body, env, fname);
    auto it = env.find("$return");
    return it == env.end() ? CV{} : it->second;
}

bool Lowerer::lower_block(const ast::NodeList &body, Env &env, const std::string &fname) {
    // pred_ already holds the liveness the block starts with; an early `return` in one of its
    // run-time `if`s narrows it for the statements after.
    const ValueId outer = pred_;
    ValueId live = alive(env);
    bool done = false;
    for (const auto &s : body) {
        b_.loc = loc_of(*s);
        if (alive(env) != live) {
            live = alive(env);
            pred_ = conjoin(outer, live);
        }
        if (s->is("Return")) {
            lower_return(*s, env);
            done = true;
        } else {
            done = lower_stmt(*s, env, fname);
        }
        if (done) break;
    }
    pred_ = outer;
    return done;
}

bool Lowerer::lower_stmt(const ast::Node &s, Env &env, const std::string &fname) {
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
        unsupported(s, "while loop",
                    "loops with a data-dependent trip count are not supported yet; use for ... in range(...)");
    } else if (s.is("If")) {
        CV c = condition(*s.node("test"), env);
        if (!c.compile_time()) return lower_dynamic_if(s, c, env, fname);
        return lower_block(truthy(c, s) ? s.list("body") : s.list("orelse"), env, fname);
    } else {
        static const std::map<std::string, std::string> names = {{"For", "for loop"},
                                                                 {"While", "while loop"},
                                                                 {"With", "with"},
                                                                 {"Try", "try"},
                                                                 {"FunctionDef", "nested function"},
                                                                 {"ClassDef", "class"},
                                                                 {"Raise", "raise"},
                                                                 {"Global", "global"},
                                                                 {"Nonlocal", "nonlocal"},
                                                                 {"Delete", "del"},
                                                                 {"Break", "break"},
                                                                 {"Continue", "continue"},
                                                                 {"Import", "import"},
                                                                 {"ImportFrom", "import"},
                                                                 {"Match", "match"}};
        auto it = names.find(s.kind);
        std::string name = it == names.end() ? s.kind : it->second;
        unsupported(s, name, "not allowed in @triton.jit function '" + fname + "'");
    }
    return false;
}

// A static condition chooses a branch by its value: the constexprs it was computed from, in this
// function or in the caller of an inlined helper, are specializations.
CV Lowerer::condition(const ast::Node &test, Env &env) {
    CV c = eval(test, env);
    if (c.compile_time()) consume(c);
    return c;
}

bool Lowerer::truthy(const CV &c, const ast::Node &n) const {
    switch (c.kind) {
    case CV::Int:
    case CV::Bool: return c.i != 0;
    case CV::Float: return c.f != 0;
    case CV::None: return false;
    default: unsupported(n, "condition of kind " + std::to_string(c.kind), "");
    }
}

void Lowerer::assign(const ast::Node &target, const CV &v, Env &env) {
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

void Lowerer::assigned_names(const ast::NodeList &body, std::vector<std::string> &out) {
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
            if (s->find(block) && std::holds_alternative<ast::NodeList>(*s->find(block)))
                assigned_names(s->list(block), out);
    }
}

// The callee and bounds of `for v in <callee>(lo, hi, step)`.
struct Lowerer::ForRange {
    std::string callee;  // as written: "range", "tl.range", "triton.language.static_range", ...
    bool is_static = false;  // tl.static_range: unrolled at compile time
    bool is_tl_range = false;
    CV lo, hi, step;
    // A negative constexpr step, counted up: the IR loop runs k = 0, 1, ... and the loop variable
    // is first - k * down (down is the step's magnitude, spelled like the step).
    CV first, down;
};

// One value a loop carries: a name's value, or one offset of a block pointer.
struct Lowerer::LoopSlot {
    std::string name;
    int dim = -1;  // >= 0: offset `dim` of the block pointer `name`
    ValueId init = ir::kNoValue;  // the value entering the loop
    ValueId arg = ir::kNoValue;  // the loop argument inside the body
};

namespace {

// The first `return`, or `break` / `continue` of this loop (not of a nested one), in a loop body.
const ast::Node *loop_exit(const ast::NodeList &body, bool nested_loop) {
    for (const auto &s : body) {
        if (s->is("Return") || (!nested_loop && (s->is("Break") || s->is("Continue")))) return s.get();
        bool inner = nested_loop || s->is("For") || s->is("While");
        for (const char *block : {"body", "orelse"})
            if (s->find(block) && std::holds_alternative<ast::NodeList>(*s->find(block)))
                if (const ast::Node *e = loop_exit(s->list(block), inner)) return e;
    }
    return nullptr;
}

// Whether `now` is the block pointer `before` with at most its offsets moved.
bool same_window(const CV &before, const CV &now) {
    if (now.kind != CV::BlockPtr || now.v != before.v || now.block.size() != before.block.size()) return false;
    for (size_t i = 0; i < 2 * before.block.size(); ++i) {
        const CV &x = now.items[i], &y = before.items[i];
        if (x.kind != y.kind || x.v != y.v || x.i != y.i) return false;
    }
    return true;
}

}  // namespace

void Lowerer::lower_for(const ast::Node &s, Env &env, const std::string &fname) {
    if (!s.list("orelse").empty()) unsupported(s, "for ... else", "");
    const ast::Node &target = *s.node("target");
    if (!target.is("Name")) unsupported(target, "loop target " + target.kind, "the loop variable must be a name");
    const ast::Node &iter = *s.node("iter");
    const ForRange r = for_range(iter, env);
    if (const ast::Node *exit = loop_exit(s.list("body"), false))
        unsupported(*exit, exit->is("Return") ? "return in a loop" : exit->is("Break") ? "break" : "continue", "");
    const std::string &var = target.str("id");
    if (r.is_static) {
        unroll_static_range(s, r, var, env, fname);
        return;
    }
    if (r.step.kind == CV::Int && r.step.i == 0) unsupported(iter, r.callee + " with a step of 0", "");
    lower_range_loop(s, r.step.kind == CV::Int && r.step.i < 0 ? counting_up(r, iter) : r, var, env, fname);
}

// range(lo, hi, -s) visits lo, lo - s, ... while above hi, as Triton lowers a negative constexpr
// step: a loop over k below cdiv(lo - hi, s), none when lo <= hi, its variable lo - k * s.
Lowerer::ForRange Lowerer::counting_up(ForRange r, const ast::Node &iter) {
    CV step = unaryop_neg(r.step, iter);
    r.first = r.lo;
    r.down = step;
    CV span = binop("Sub", r.lo, r.hi, iter);
    r.hi = binop("FloorDiv", binop("Add", span, binop("Sub", step, CV::integer(1), iter), iter), step, iter);
    r.lo = CV::integer(0);
    r.step = CV::integer(1);
    return r;
}

Lowerer::ForRange Lowerer::for_range(const ast::Node &iter, Env &env) {
    CV fn = iter.is("Call") ? eval(*iter.node("func"), env) : CV{};
    ForRange r;
    r.callee = fn.kind == CV::Func || fn.kind == CV::Module ? fn.s : "";
    const std::string &it = r.callee;
    r.is_static = it == "tl.static_range" || it == "triton.language.static_range";
    r.is_tl_range = it == "tl.range" || it == "triton.language.range";
    if (!(it == "range" || r.is_static || r.is_tl_range))
        unsupported(iter, "for loop over " + (it.empty() ? iter.kind : it),
                    "only range, tl.range and tl.static_range are supported");
    std::vector<CV> bounds;
    for (const auto &a : iter.list("args")) bounds.push_back(eval(*a, env));
    if (bounds.empty() || bounds.size() > 3) unsupported(iter, it, "expects 1 to 3 positional bounds");
    r.lo = bounds.size() > 1 ? bounds[0] : CV::integer(0);
    r.hi = bounds.size() > 1 ? bounds[1] : bounds[0];
    r.step = bounds.size() > 2 ? bounds[2] : CV::integer(1);
    return r;
}

void Lowerer::unroll_static_range(const ast::Node &s, const ForRange &r, const std::string &var, Env &env,
                                  const std::string &fname) {
    const CV &lo = r.lo, &hi = r.hi, &step = r.step;
    if (lo.kind != CV::Int || hi.kind != CV::Int || step.kind != CV::Int || step.i == 0)
        unsupported(*s.node("iter"), "tl.static_range", "bounds must be constexpr integers");
    // Unrolled: the trip count and the loop variable's values are baked in.
    for (const CV *b : {&lo, &hi, &step}) consume(*b);
    for (int64_t v = lo.i; step.i > 0 ? v < hi.i : v > hi.i; v += step.i) {
        env[var] = CV::integer(v);
        for (const auto &stmt : s.list("body")) {
            b_.loc = loc_of(*stmt);
            lower_stmt(*stmt, env, fname);
        }
    }
}

void Lowerer::lower_range_loop(const ast::Node &s, const ForRange &r, const std::string &var, Env &env,
                               const std::string &fname) {
    const ast::Node &iter = *s.node("iter");
    Type i32{DType::I32, false, {}};
    auto bound = [&](const CV &c) { return b_.cast(materialize(c, &i32, iter), DType::I32); };
    ValueId vlo = bound(r.lo), vhi = bound(r.hi), vstep = bound(r.step);
    std::vector<LoopSlot> slots = loop_slots(s, var, env);
    b_.loc = loc_of(s);
    ValueId iv = b_.for_begin(vlo, vhi, vstep, r.is_tl_range ? "tl.range" : "range");
    const bool down = r.down.kind != CV::None;
    fn_.values[iv].name = down ? var + "_up" : var;
    Env body = env;
    for (size_t k = 0; k < slots.size(); ++k) {
        LoopSlot &sl = slots[k];
        sl.arg = b_.loop_arg(sl.init, static_cast<int>(k));
        fn_.values[sl.arg].name = sl.dim < 0 ? sl.name : sl.name + "_off" + std::to_string(sl.dim);
        if (sl.dim < 0)
            body[sl.name] = CV::value(sl.arg);
        else
            body[sl.name].offset(static_cast<size_t>(sl.dim)) = CV::value(sl.arg);
    }
    // After the loop arguments, which follow for_begin directly.
    body[var] = down ? binop("Sub", r.first, binop("Mult", CV::value(iv), r.down, iter), iter) : CV::value(iv);
    if (down && body[var].kind == CV::Value) fn_.values[body[var].v].name = var;
    for (const auto &stmt : s.list("body")) {
        b_.loc = loc_of(*stmt);
        lower_stmt(*stmt, body, fname);
    }
    std::vector<ValueId> yields;
    for (const LoopSlot &sl : slots) yields.push_back(loop_yield(s, sl, env, body));
    b_.loc = loc_of(s);
    b_.for_end(yields);
    for (size_t k = 0; k < slots.size(); ++k) {
        const LoopSlot &sl = slots[k];
        ValueId res = b_.loop_result(static_cast<int>(k), fn_.type(sl.arg));
        fn_.values[res].name = fn_.values[sl.arg].name;
        if (sl.dim < 0)
            env[sl.name] = CV::value(res);
        else
            env[sl.name].offset(static_cast<size_t>(sl.dim)) = CV::value(res);
    }
}

// What the loop carries: the names its body assigns that are defined before it, each a value or,
// for a block pointer, its offsets (one slot each); their initial values are materialized here.
std::vector<Lowerer::LoopSlot> Lowerer::loop_slots(const ast::Node &s, const std::string &var, const Env &env) {
    std::vector<std::string> names;
    assigned_names(s.list("body"), names);
    Type i32{DType::I32, false, {}};
    std::vector<LoopSlot> slots;
    for (const auto &n : names) {
        if (n == var || !env.count(n) || env.at(n).kind == CV::Module || env.at(n).kind == CV::Func) continue;
        const CV &c = env.at(n);
        if (c.kind == CV::BlockPtr) {
            for (size_t d = 0; d < c.block.size(); ++d)
                slots.push_back({n, static_cast<int>(d), b_.cast(materialize(c.offset(d), &i32, s), DType::I32)});
            continue;
        }
        if (c.kind == CV::TensorDesc)
            unsupported(s, "tensor descriptor '" + n + "' rebuilt in a loop",
                        "create it once before the loop and give each access its offsets");
        if (c.kind != CV::Value && c.kind != CV::Int && c.kind != CV::Float && c.kind != CV::Bool)
            unsupported(s, "loop-carried '" + n + "'", "only tiles, numbers and block pointers can change in a loop");
        slots.push_back({n, -1, materialize(c, nullptr, s)});
    }
    return slots;
}

// The value slot `sl` yields at the end of an iteration, typed as its loop argument.
ValueId Lowerer::loop_yield(const ast::Node &s, const LoopSlot &sl, const Env &before, const Env &body) {
    const Type t = fn_.type(sl.arg);
    const CV &now = body.at(sl.name);
    if (sl.dim >= 0 && !same_window(before.at(sl.name), now))
        unsupported(s, "block pointer '" + sl.name + "' rebuilt in a loop", "move it with tl.advance instead");
    ValueId y = materialize(sl.dim < 0 ? now : now.offset(static_cast<size_t>(sl.dim)), &t, s);
    if (!fn_.type(y).same_shape(t) || fn_.type(y).is_ptr != t.is_ptr)
        fail(TAD_ERR_UNSUPPORTED, at(s) + ": loop-carried '" + sl.name + "' changes from " + t.str() + " to " +
                                      fn_.type(y).str() +
                                      " in the loop; give it its final shape before the loop (e.g. tl.zeros)");
    return t.is_ptr ? y : b_.cast(y, t.elem);
}

}  // namespace tad::frontend::detail
