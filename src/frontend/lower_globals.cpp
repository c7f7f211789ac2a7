// Module-level names a kernel reads: imports (`from triton.language.extra.libdevice import rsqrt`,
// `from triton import language as tl`), aliases (`my_exp = tl.exp`), constexpr globals (plain or
// annotated, `_MODE: tl.constexpr = tl.constexpr(0)`), and the math module's constants.
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

// triton.language is spelled `tl` inside the lowering, whatever the file imports it as, so that
// tl_call and the dtype names see one prefix.
std::string canonical_module(const std::string &path) {
    const std::string tl = "triton.language";
    if (path == tl) return "tl";
    if (path.rfind(tl + ".", 0) == 0) return "tl" + path.substr(tl.size());
    return path;
}

// The dotted path an `import` binds `name` to ("" when the statement binds no such name).
std::string import_binding(const ast::Node &s, const std::string &name) {
    std::string found;
    for (const auto &alias : s.list("names")) {
        const std::string &imported = alias->str("name");
        const ast::Value *as = alias->find("asname");
        const bool renamed = as && std::holds_alternative<std::string>(*as);
        const std::string bound = renamed ? std::get<std::string>(*as) : imported.substr(0, imported.find('.'));
        if (bound != name) continue;
        if (s.is("Import")) {
            found = renamed ? imported : bound;  // `import a.b` binds `a`
        } else {
            const ast::Value *mod = s.find("module");
            if (!mod || !std::holds_alternative<std::string>(*mod)) continue;  // relative imports
            found = std::get<std::string>(*mod) + "." + imported;
        }
    }
    return found;
}

}  // namespace

std::string Lowerer::imported_module(const std::string &name) const {
    std::string found;
    for (const auto &s : file_.module->list("body"))
        if (s->is("Import") || s->is("ImportFrom")) {
            std::string path = import_binding(*s, name);
            if (!path.empty()) found = canonical_module(path);
        }
    return found;
}

const ast::Node *Lowerer::module_global(const std::string &name) const {
    const ast::Node *found = nullptr;
    for (const auto &s : file_.module->list("body")) {
        if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets")[0]->is("Name") &&
            s->list("targets")[0]->str("id") == name)
            found = s->node("value").get();
        if (s->is("AnnAssign") && s->node("value") && s->node("target")->is("Name") &&
            s->node("target")->str("id") == name)
            found = s->node("value").get();
    }
    return found;
}

// A global's value where Triton allows one in a kernel: a compile-time number, string or dtype, a
// module or function (an alias), or a @triton.jit function. Null for anything else.
std::optional<CV> Lowerer::global_value(const ast::Node &e, const std::string &id) {
    const ast::Node *g = module_global(id);
    if (!g) return std::nullopt;
    if (!globals_in_progress_.insert(id).second)
        unsupported(e, "name '" + id + "'", "its module-level value reads itself");
    Env none;
    CV v = eval(*g, none);
    globals_in_progress_.erase(id);
    if (!v.compile_time()) return std::nullopt;
    return v;
}

// TAD_DIFFERENTIATE_AS = {helper: definition, ...} at module level (names or strings): a helper
// with no derivative rule (inline assembly, say) is lowered as its definition, whose derivative
// tad takes; the forward itself still runs the helper. Returns the definition's name, or `callee`.
std::string Lowerer::differentiable_definition(const ast::Node &call, const std::string &callee) const {
    const ast::Node *table = module_global("TAD_DIFFERENTIATE_AS");
    if (!table) return callee;
    if (!table->is("Dict")) unsupported(*table, "TAD_DIFFERENTIATE_AS", "must be a dict {helper: definition}");
    auto name_of = [&](const ast::Node &n) {
        const ast::Value *v = n.is("Constant") ? n.find("value") : nullptr;
        if (v && std::holds_alternative<std::string>(*v)) return std::get<std::string>(*v);
        if (n.is("Name")) return n.str("id");
        unsupported(n, "TAD_DIFFERENTIATE_AS entry", "keys and values name @triton.jit functions");
    };
    const ast::NodeList &keys = table->list("keys"), &values = table->list("values");
    for (size_t i = 0; i < keys.size(); ++i) {
        if (!keys[i] || name_of(*keys[i]) != callee) continue;
        const std::string def = name_of(*values[i]);
        if (!jit_.count(def))
            unsupported(*values[i], "TAD_DIFFERENTIATE_AS", "'" + def + "' is not a @triton.jit function");
        if (param_names(*jit_.at(def)) != param_names(*jit_.at(callee)))
            unsupported(call, "TAD_DIFFERENTIATE_AS", "'" + def + "' must take the parameters of '" + callee + "'");
        return def;
    }
    return callee;
}

// TAD_DERIVATIVES = {helper: (d_x, d_y, ...)}: for an elementwise helper, one @triton.jit function
// per parameter (None: no gradient) taking the helper's parameters and returning the derivative of
// its result along that parameter. Empty when the helper has none.
std::vector<std::string> Lowerer::user_derivatives(const ast::Node &call, const std::string &helper) const {
    const ast::Node *table = module_global("TAD_DERIVATIVES");
    if (!table || !jit_.count(helper)) return {};
    if (!table->is("Dict")) unsupported(*table, "TAD_DERIVATIVES", "must be a dict {helper: (derivative, ...)}");
    for (size_t i = 0; i < table->list("keys").size(); ++i) {
        const ast::Node *key = table->list("keys")[i].get();
        if (!key || !key->is("Name") || key->str("id") != helper) continue;
        const ast::Node &value = *table->list("values")[i];
        std::vector<std::string> out;
        for (const auto &d : value.is("Tuple") ? value.list("elts") : ast::NodeList{table->list("values")[i]}) {
            const bool none = d->is("Constant") && std::holds_alternative<ast::NoneValue>(*d->find("value"));
            if (!none && (!d->is("Name") || !jit_.count(d->str("id"))))
                unsupported(*d, "TAD_DERIVATIVES entry", "each derivative is a @triton.jit function or None");
            out.push_back(none ? "" : d->str("id"));
        }
        if (out.size() != param_names(*jit_.at(helper)).size())
            unsupported(call, "TAD_DERIVATIVES", "'" + helper + "' needs one derivative (or None) per parameter");
        return out;
    }
    return {};
}

std::optional<CV> Lowerer::math_constant(const std::string &attr) {
    static const std::map<std::string, double> constants = {
        {"pi", M_PI}, {"e", M_E}, {"tau", 2 * M_PI}, {"inf", INFINITY}, {"nan", NAN}};
    auto it = constants.find(attr);
    if (it == constants.end()) return std::nullopt;
    return CV::real(it->second);
}

// math.<fn> of Python numbers, folded: the result has no spelling, so a constexpr it reads is
// specialized on where the value is used.
CV Lowerer::math_call(const ast::Node &e, const std::string &fn, const Args &a) {
    using F = double (*)(double);
    static const std::map<std::string, F> unary = {
        {"sqrt", [](double x) { return std::sqrt(x); }},   {"exp", [](double x) { return std::exp(x); }},
        {"exp2", [](double x) { return std::exp2(x); }},   {"log2", [](double x) { return std::log2(x); }},
        {"log10", [](double x) { return std::log10(x); }}, {"sin", [](double x) { return std::sin(x); }},
        {"cos", [](double x) { return std::cos(x); }},     {"tan", [](double x) { return std::tan(x); }},
        {"atan", [](double x) { return std::atan(x); }},   {"tanh", [](double x) { return std::tanh(x); }},
        {"erf", [](double x) { return std::erf(x); }},     {"fabs", [](double x) { return std::fabs(x); }}};
    std::set<std::string> deps;
    std::vector<double> xs;
    for (const CV &x : a.pos) {
        if (x.kind != CV::Int && x.kind != CV::Float && x.kind != CV::Bool)
            unsupported(e, "math." + fn, "takes numbers at compile time");
        xs.push_back(x.kind == CV::Float ? x.f : static_cast<double>(x.i));
        deps.insert(x.deps.begin(), x.deps.end());
    }
    CV r;
    auto u = unary.find(fn);
    if (u != unary.end() && xs.size() == 1)
        r = CV::real(u->second(xs[0]));
    else if (fn == "log" && (xs.size() == 1 || xs.size() == 2))
        r = CV::real(xs.size() == 1 ? std::log(xs[0]) : std::log(xs[0]) / std::log(xs[1]));
    else if (fn == "pow" && xs.size() == 2)
        r = CV::real(std::pow(xs[0], xs[1]));
    else if ((fn == "floor" || fn == "ceil") && xs.size() == 1)
        r = CV::integer(static_cast<int64_t>(fn == "floor" ? std::floor(xs[0]) : std::ceil(xs[0])));
    else
        unsupported(e, "math." + fn, "not one of the math functions tad folds on constants");
    r.deps = std::move(deps);
    return r;
}

}  // namespace tad::frontend::detail
