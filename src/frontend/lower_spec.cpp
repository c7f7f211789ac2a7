// Provenance of compile-time values: which constexprs a value was computed from, whether its
// spelling still names them, and the record of every constexpr whose value the lowered IR depends
// on (ir::Function::specialized), so that a generated backward is never run for other values.
//
// A compile-time value is used either by its spelling (a dim spelled `BLOCK`, a constant spelled
// `SCALE` or `(D + BD - 1) // BD`: the emitted code recomputes it from the launch's constexprs) or
// by its value (a static `if`, a static_range trip count, an axis, a value folded by an operator
// that has no spelling). Every use by value goes through consume(); every use by spelling checks
// spellable() first and consumes the value where it is not.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

void record(const std::set<std::string> &deps, std::vector<std::string> &specialized) {
    for (const std::string &d : deps)
        if (std::find(specialized.begin(), specialized.end(), d) == specialized.end()) specialized.push_back(d);
}

}  // namespace

void Lowerer::consume(const CV &c) {
    record(c.deps, fn_.specialized);
    for (const CV &item : c.items) consume(item);
}

void Lowerer::consume_baked(const CV &c) {
    if (c.compile_time() && !c.symbolic) record(c.deps, fn_.specialized);
    for (const CV &item : c.items) consume_baked(item);
}

int64_t Lowerer::int_of(const CV &c, const ast::Node &n, const std::string &what) {
    if (c.kind != CV::Int && c.kind != CV::Bool) unsupported(n, what, "must be a constexpr integer");
    consume(c);
    return c.i;
}

bool Lowerer::flag_of(const CV *c) {
    if (!c) return false;
    consume(*c);
    if (c->kind == CV::Float) return c->f != 0;
    return (c->kind == CV::Int || c->kind == CV::Bool) && c->i != 0;
}

std::string Lowerer::str_of(const CV *c) {
    if (!c) return "";
    consume(*c);
    return c->kind == CV::Str ? c->s : "";
}

Dim Lowerer::dim_of(const CV &c, const ast::Node &n) {
    if (c.kind != CV::Int) unsupported(n, "shape", "dims must be constexpr integers");
    if (!spellable(c)) consume(c);
    return Dim{c.i, spellable(c) ? spelling(c) : std::to_string(c.i)};
}

CV Lowerer::from_dim(const Dim &d) const {
    std::set<std::string> deps;
    for (const std::string &name : ir::spelled_names(d.expr))
        if (compile_time_params_.count(name)) deps.insert(name);
    return deps.empty() ? CV::integer(d.value) : CV::symbol(d.value, d.expr, deps);
}

bool Lowerer::spellable(const CV &c) {
    if (c.kind == CV::Int) return c.deps.empty() || c.symbolic;
    if (c.kind == CV::Float) return c.deps.empty() ? std::isfinite(c.f) : c.symbolic;
    return false;
}

std::string Lowerer::spelling(const CV &c) {
    if (!spellable(c)) return "";
    if (c.kind == CV::Int) return c.symbolic ? c.s : std::to_string(c.i);
    return c.symbolic ? c.s : python_float(c.f);
}

void Lowerer::finish_specializations() {
    for (const std::string &name : fn_.specialized) {
        bool known = std::any_of(fn_.constexprs.begin(), fn_.constexprs.end(),
                                 [&](const ir::Constexpr &c) { return c.name == name; });
        if (known || fn_.param_index(name) >= 0) continue;  // a parameter: specialized on not being None
        // A parameter bound to None, a bool or a string is compile-time without being a constexpr:
        // the function depends on its value, so the backward takes it as one and is keyed on it.
        auto it = compile_time_params_.find(name);
        if (it == compile_time_params_.end() || it->second.empty())
            fail(TAD_ERR_UNSUPPORTED, file_.path + ": kernel '" + fn_.name + "' depends on the value of '" + name +
                                          "', which has no Python literal to check it by at launch");
        fn_.constexprs.push_back({name, it->second});
    }
    std::vector<std::string> ordered;
    auto specialized = [&](const std::string &n) {
        return std::find(fn_.specialized.begin(), fn_.specialized.end(), n) != fn_.specialized.end();
    };
    for (const ir::Param &p : fn_.params)
        if (specialized(p.name)) ordered.push_back(p.name);
    for (const ir::Constexpr &c : fn_.constexprs)
        if (specialized(c.name)) ordered.push_back(c.name);
    fn_.specialized = std::move(ordered);
}

}  // namespace tad::frontend::detail
