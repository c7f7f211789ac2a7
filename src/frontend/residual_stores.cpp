#include "frontend/residual_stores.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

namespace tad::frontend {

namespace {

using Pos = std::pair<int, int>;  // 1-based line, 0-based byte column

const char *const kImport =
    "\n\n# ---- added by tad: stores of values the backward reads back (docs/saved-residuals.md) ----\n"
    "import triton.language as _tad_tl  # noqa: E402\n";

// The program's linear id over `axes`.
std::string linear_id(const std::vector<int> &axes) {
    if (axes.empty()) return "0";
    std::string id, stride;
    for (int a : axes) {
        const std::string pid = "_tad_tl.program_id(" + std::to_string(a) + ")";
        id += id.empty() ? pid : " + " + stride + " * " + pid;
        const std::string n = "_tad_tl.num_programs(" + std::to_string(a) + ")";
        stride = stride.empty() ? n : stride + " * " + n;
    }
    return id;
}

// The element offset of each lane of r's value: the linear id, times the tile's size and plus the
// lane for a row vector.
std::string address(const ResidualStore &r) {
    const std::string id = linear_id(r.axes);
    if (r.dims.empty()) return id;
    return "(" + id + ") * " + r.dims[0] + " + _tad_tl.arange(0, " + r.dims[0] + ")";
}

Pos end_of(const ast::Node &n) { return {n.loc.end_line, n.loc.end_col}; }

// Where the last parameter's text ends (its annotation or default included), and whether any
// parameter has a default; false when the signature has *args, **kwargs or positional-only
// parameters (the launcher passes the buffer by keyword, which a trailing `/` would forbid).
bool last_param_end(const ast::Node &def, Pos *end, bool *defaults) {
    const ast::NodePtr args = def.node("args");
    if (args->node("vararg") || args->node("kwarg") || !args->list("posonlyargs").empty()) return false;
    *end = {0, 0};
    for (const char *field : {"posonlyargs", "args", "kwonlyargs", "defaults", "kw_defaults"})
        for (const ast::NodePtr &a : args->list(field)) {
            if (!a) continue;
            *end = std::max(*end, end_of(*a));
            if (a->is("arg") && a->node("annotation")) *end = std::max(*end, end_of(*a->node("annotation")));
        }
    *defaults = !args->list("defaults").empty() || !args->list("kwonlyargs").empty();
    return end->first > 0;
}

// Whether something other than triton.jit wraps the kernel: a decorator (an autotuner, heuristics,
// a staticmethod), or a module-level assignment that calls triton.autotune / triton.heuristics on it.
bool wrapped(const KernelFile &kf, const ast::Node &def) {
    for (const ast::NodePtr &d : def.list("decorator_list"))
        if (!is_jit_decorator(*d)) return true;
    const std::string &name = def.str("name");
    for (const ast::NodePtr &s : kf.file.module->list("body")) {
        if (!s->is("Assign")) continue;
        bool wraps = false, names = false;
        ast::walk(s->node("value"), [&](const ast::Node &n) {
            const std::string d = ast::dotted(&n);
            wraps = wraps || d.find("autotune") != std::string::npos || d.find("heuristics") != std::string::npos;
            names = names || (n.is("Name") && n.str("id") == name);
        });
        if (wraps && names) return true;
    }
    return false;
}

// The `for` statement of def's own body at `line`:`col` (1-based column), or null; `next` gets the
// statement after it (null when it is the body's last).
const ast::Node *loop_at(const ast::Node &def, int line, int col, const ast::Node **next) {
    const ast::NodeList &body = def.list("body");
    for (size_t i = 0; i < body.size(); ++i)
        if (body[i]->is("For") && body[i]->loc.line == line && body[i]->loc.col + 1 == col) {
            *next = i + 1 < body.size() ? body[i + 1].get() : nullptr;
            return body[i].get();
        }
    return nullptr;
}

// How a kernel's body binds names: how often each is bound (assigned, a loop target, ...), and its
// top-level statements `name = value`.
struct Bindings {
    std::map<std::string, int> count;
    std::map<std::string, const ast::Node *> assigned;
};

Bindings bindings_of(const ast::Node &def) {
    Bindings b;
    for (const ast::NodePtr &s : def.list("body")) {
        if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets")[0]->is("Name"))
            b.assigned[s->list("targets")[0]->str("id")] = s.get();
        ast::walk(s, [&](const ast::Node &n) {
            if (n.is("Name") && n.node("ctx") && !n.node("ctx")->is("Load")) ++b.count[n.str("id")];
        });
    }
    return b;
}

// The text of a tile-saving store's pointer or mask expression (residual_stores.h): each name read
// as its own text, or its value's text where the kernel assigns it after the loop; `like` replaced
// by the buffer's parameter. "" and `why` set where it cannot be.
class LikeText {
public:
    LikeText(const KernelFile &kf, const ast::Node &def, const ast::Node &loop, const ast::Node &store,
             const ResidualStore &r)
        : kf_(kf), loop_(loop), store_(store), r_(r), bindings_(bindings_of(def)) {
        for (const std::string &p : param_names(def)) params_.insert(p);
    }

    int likes = 0;  // how often `like` was read

    std::string text(const ast::Node &e, std::string *why) {
        std::vector<std::pair<const ast::Node *, std::string>> names;  // in source order
        bool ok = true;
        const ast::NodePtr root = std::make_shared<ast::Node>(e);  // walk() takes a pointer; names point into it
        ast::walk(root, [&](const ast::Node &n) {
            if (!ok) return;
            if (n.is("Lambda") || n.is("ListComp") || n.is("GeneratorExp") || n.is("NamedExpr")) {
                ok = false;
                *why = at(n) + ": the store's expressions hold a " + n.kind;
            } else if (n.is("Call") && effect(ast::dotted(n.node("func").get()))) {
                ok = false;
                *why = at(n) + ": the store's expressions call " + ast::dotted(n.node("func").get());
            } else if (n.is("Name")) {
                std::string t = name(n, why);
                ok = why->empty();
                if (t != n.str("id")) names.emplace_back(&n, t);
            }
        });
        if (!ok) return "";
        std::string out;
        ast::Loc from{e.loc.line, e.loc.col, 0, 0};
        for (const auto &[n, t] : names) {
            out += kf_.file.slice({from.line, from.col, n->loc.line, n->loc.col}) + t;
            from = {n->loc.end_line, n->loc.end_col, 0, 0};
        }
        return out + kf_.file.slice({from.line, from.col, e.loc.end_line, e.loc.end_col});
    }

private:
    const KernelFile &kf_;
    const ast::Node &loop_, &store_;
    const ResidualStore &r_;
    Bindings bindings_;
    std::set<std::string> params_;

    std::string at(const ast::Node &n) const {
        return kf_.file.path + ":" + std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col + 1);
    }

    static bool effect(const std::string &f) {
        for (const char *w : {"load", "store", "atomic", "rand", "print", "assert"})
            if (f.find(w) != std::string::npos) return true;
        return false;
    }

    // The text name n stands for where the store is inserted.
    std::string name(const ast::Node &n, std::string *why) {
        const std::string &id = n.str("id");
        const int times = bindings_.count.count(id) ? bindings_.count.at(id) : 0;
        if (params_.count(id) || times == 0) {
            if (times > 0) *why = at(n) + ": parameter '" + id + "' is assigned in the kernel";
            if (id != r_.like) return id;
            ++likes;
            return r_.param;
        }
        auto it = bindings_.assigned.find(id);
        if (times > 1 || it == bindings_.assigned.end()) {
            *why = at(n) + ": '" + id + "' is bound more than once, or not by an assignment at the kernel's top level";
            return id;
        }
        const int line = it->second->loc.line;
        if (line < loop_.loc.line) return id;
        if (line <= loop_.loc.end_line || line >= store_.loc.line) {
            *why = at(n) + ": '" + id + "' is assigned between the loop and the store only";
            return id;
        }
        const std::string value = text(*it->second->node("value"), why);
        return why->empty() ? "(" + value + ")" : id;
    }
};

// The tl.store statement of def's body at r.store_line:r.store_col after `loop`, or null.
const ast::Node *store_at(const ast::Node &def, const ast::Node &loop, const ResidualStore &r) {
    for (const ast::NodePtr &s : def.list("body")) {
        if (!s->is("Expr") || s->loc.line <= loop.loc.end_line) continue;
        const ast::NodePtr call = s->node("value");
        if (call->is("Call") && call->loc.line == r.store_line && call->loc.col + 1 == r.store_col) return call.get();
    }
    return nullptr;
}

// A call's argument by position or keyword, or null.
const ast::Node *argument(const ast::Node &call, size_t position, const std::string &keyword) {
    if (call.list("args").size() > position) return call.list("args")[position].get();
    for (const ast::NodePtr &k : call.list("keywords")) {
        const auto *a = std::get_if<std::string>(k->find("arg"));
        if (a && *a == keyword) return k->node("value").get();
    }
    return nullptr;
}

// The statement storing r's tile where the store at r.store_line writes; "" or why not.
std::string like_call(const KernelFile &kf, const ast::Node &def, const ast::Node &loop, const ResidualStore &r,
                      std::string *call) {
    const std::string at = kf.file.path + ":" + std::to_string(r.store_line) + ":" + std::to_string(r.store_col);
    const ast::Node *store = store_at(def, loop, r);
    if (!store) return at + ": no tl.store statement at the top level of kernel '" + r.kernel + "' after the loop";
    if (argument(*store, 3, "boundary_check")) return at + ": the store takes a boundary check (a block pointer)";
    const ast::Node *ptr = argument(*store, 0, "pointer"), *mask = argument(*store, 2, "mask");
    if (!ptr) return at + ": the store has no pointer argument";
    LikeText t(kf, def, loop, *store, r);
    std::string why;
    const std::string p = t.text(*ptr, &why);
    if (!why.empty()) return why;
    if (t.likes != 1) return at + ": the store's pointer reads '" + r.like + "' other than once";
    const std::string m = mask ? t.text(*mask, &why) : "";
    if (!why.empty()) return why;
    if (t.likes != 1) return at + ": the store's mask reads '" + r.like + "'";
    *call = "_tad_tl.store(" + p + ", " + r.expr + (mask ? ", mask=" + m : "") + ")";
    return "";
}

// A statement `x; <it>` may follow on one line: not a compound statement.
bool simple(const ast::Node &s) {
    for (const char *k : {"If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "FunctionDef",
                          "AsyncFunctionDef", "ClassDef", "Match"})
        if (s.is(k)) return false;
    return true;
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < text.size()) {
        size_t nl = text.find('\n', at);
        size_t end = nl == std::string::npos ? text.size() : nl + 1;
        out.push_back(text.substr(at, end - at));
        at = end;
    }
    if (!out.empty() && out.back().back() != '\n') out.back() += '\n';
    return out;
}

// Where r's statement goes: before the next statement on its line where that is a simple one, so
// that no line moves (diagnostics of the derivation name the user's lines); else on a line of its
// own after the loop (`line` set), moving the lines after it by one. "" or why not.
struct Placement {
    Pos before{0, 0};
    int line = 0;
    std::string text;
};

std::string place(const KernelFile &kf, const std::vector<std::string> &lines, const ResidualStore &r, Placement *out) {
    const ast::NodePtr &def = kf.jit(r.kernel);
    const std::string at = kf.file.path + ":" + std::to_string(r.line) + ":" + std::to_string(r.col);
    if (wrapped(kf, *def)) return "kernel '" + r.kernel + "' is wrapped in something other than triton.jit";
    if (r.like.empty() && r.dims.size() > 1) return at + ": a tile of more than one dim";
    const ast::Node *next = nullptr;
    const ast::Node *loop = loop_at(*def, r.line, r.col, &next);
    if (!loop) return at + ": no loop directly in the body of kernel '" + r.kernel + "'";
    if (!loop->list("orelse").empty()) return at + ": the loop has an else clause";
    const std::string indent = lines.at(static_cast<size_t>(loop->loc.line - 1)).substr(0, loop->loc.col);
    if (indent.find_first_not_of(" \t") != std::string::npos) return at + ": the loop shares its line with other code";
    std::string call = "_tad_tl.store(" + r.param + " + " + address(r) + ", " + r.expr + ")";
    if (!r.like.empty()) {
        const std::string why = like_call(kf, *def, *loop, r, &call);
        if (!why.empty()) return why;
    }
    // Right after the loop, before the next statement (the columns of the rest of that line move):
    // the earliest place, where the tile is the loop's result and nothing else is live yet.
    if (next && simple(*next) && next->loc.col == loop->loc.col && next->loc.line > loop->loc.end_line)
        *out = {{next->loc.line, next->loc.col}, 0, call + "; "};
    else
        *out = {{0, 0}, loop->loc.end_line, indent + call + "\n"};
    return "";
}

}  // namespace

std::string insert_residual_stores(const KernelFile &kf, const std::vector<ResidualStore> &stores, std::string *why) {
    std::vector<std::string> lines = lines_of(kf.file.source);
    std::map<std::string, std::vector<std::string>> params;  // kernel -> its new parameters
    std::vector<Placement> placed;
    for (const ResidualStore &r : stores) {
        Placement p;
        if (!(*why = place(kf, lines, r, &p)).empty()) return "";
        placed.push_back(p);
        params[r.kernel].push_back(r.param);
    }
    // Right to left on a line, so that each column still holds.
    std::stable_sort(placed.begin(), placed.end(),
                     [](const Placement &a, const Placement &b) { return a.before < b.before; });
    for (auto it = placed.rbegin(); it != placed.rend(); ++it)
        if (it->line == 0) lines.at(static_cast<size_t>(it->before.first - 1)).insert(it->before.second, it->text);
    for (const auto &[kernel, names] : params) {
        Pos end;
        bool defaults = false;
        if (!last_param_end(*kf.jit(kernel), &end, &defaults))
            return *why = "kernel '" + kernel + "' takes *args, **kwargs or positional-only parameters", "";
        std::string text;
        for (const std::string &p : names) text += ", " + p + (defaults ? "=None" : "");
        lines.at(static_cast<size_t>(end.first - 1)).insert(static_cast<size_t>(end.second), text);
    }
    // Bottom up, so that each line number still holds; statements after one loop keep their order.
    std::stable_sort(placed.begin(), placed.end(),
                     [](const Placement &a, const Placement &b) { return a.line < b.line; });
    for (auto it = placed.rbegin(); it != placed.rend(); ++it)
        if (it->line > 0) lines.insert(lines.begin() + it->line, it->text);
    std::string out;
    for (const std::string &l : lines) out += l;
    return out + kImport;
}

}  // namespace tad::frontend
