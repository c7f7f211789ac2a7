// The ast, ident and count groups of features.h: one walk over the @triton.jit functions for node
// paths and structural counts, one over the whole file for identifiers.
#include <cctype>
#include <set>

#include "retrieve/features.h"
#include "retrieve/triton_api.h"
#include "support/identifier.h"

namespace tad::retrieve {

namespace {

bool is_docstring(const ast::Node &n) {
    if (!n.is("Expr")) return false;
    ast::NodePtr v = n.node("value");
    return v->is("Constant") && std::holds_alternative<std::string>(*v->find("value"));
}

// A node's label in paths: its kind, refined by the operator or the triton.language callee.
std::string label(const ast::Node &n, const frontend::KernelFile &kf) {
    if (n.is("BinOp") || n.is("AugAssign") || n.is("UnaryOp") || n.is("BoolOp"))
        return n.kind + ":" + n.node("op")->kind;
    if (n.is("Compare")) return "Compare:" + n.list("ops")[0]->kind;
    if (n.is("Constant")) return "Constant";
    if (!n.is("Call")) return n.kind;
    const ast::Node *func = n.node("func").get();
    const std::string callee = ast::dotted(func);
    const std::string fn = triton_function(callee);
    if (!fn.empty()) return "Call:" + fn;
    if (kf.jit_functions.count(callee)) return "Call:helper";
    if (func->is("Attribute")) return "Call:." + func->str("attr");
    return "Call";
}

class JitWalker {
public:
    JitWalker(const frontend::KernelFile &kf, Features &out) : kf_(kf), out_(out) {}

    void function(const ast::Node &def) {
        for (const auto &p : def.node("args")->list("args"))
            if (is_constexpr_param(*p)) count("constexprs");
        const ast::NodeList &body = def.list("body");
        for (size_t i = 0; i < body.size(); ++i)
            if (i > 0 || !is_docstring(*body[i])) visit(*body[i], "", "", 0);
    }

private:
    void visit(const ast::Node &n, const std::string &parent, const std::string &grand, int loops) {
        if (!n.has_loc) {  // operators, contexts, `arguments`: their children still count
            children(n, parent, grand, loops);
            return;
        }
        if (is_docstring(n)) return;
        const std::string me = label(n, kf_);
        auto &g = out_.group(Group::Ast);
        g["ast:" + me] += 1;
        if (!parent.empty()) g["ast:" + parent + ">" + me] += 1;
        if (!grand.empty()) g["ast:" + grand + ">" + parent + ">" + me] += 1;
        loops += structure(n, me, loops);
        children(n, me, parent, loops);
    }

    void children(const ast::Node &n, const std::string &me, const std::string &parent, int loops) {
        for (const auto &field : n.fields) {
            if (auto p = std::get_if<ast::NodePtr>(&field.second)) {
                if (*p) visit(**p, me, parent, loops);
            } else if (auto l = std::get_if<ast::NodeList>(&field.second)) {
                for (const auto &c : *l)
                    if (c) visit(*c, me, parent, loops);
            }
        }
    }

    // Counts what `n` is; returns 1 when it opens a loop.
    int structure(const ast::Node &n, const std::string &me, int loops) {
        if (n.is("For") || n.is("While")) {
            count("loops");
            const ast::Node *it = n.is("For") ? n.node("iter").get() : nullptr;
            if (it && it->is("Call") && triton_function(ast::dotted(it->node("func").get())) == "static_range")
                count("static_loops");
            double &depth = out_.group(Group::Count)["count:loop_depth"];
            depth = std::max(depth, static_cast<double>(loops + 1));
            return 1;
        }
        if (n.is("If")) count("ifs");
        if (n.is("Subscript") && has_none_index(n)) count("tiles_2d");
        if (me.rfind("Call:", 0) == 0) call(n, me.substr(5));
        return 0;
    }

    void call(const ast::Node &n, const std::string &fn) {
        const std::string category = call_category(fn);
        if (!category.empty()) count(category);
        if (fn != "program_id") return;
        const ast::NodeList &args = n.list("args");
        const ast::Node *axis = args.empty() ? nullptr : args[0].get();
        for (const auto &kw : n.list("keywords"))
            if (kw->find("arg") && std::holds_alternative<std::string>(*kw->find("arg")))
                axis = kw->node("value").get();
        int64_t a = 0;
        if (axis && axis->is("Constant") && std::holds_alternative<int64_t>(*axis->find("value")))
            a = std::get<int64_t>(*axis->find("value"));
        double &axes = out_.group(Group::Count)["count:program_axes"];
        axes = std::max(axes, static_cast<double>(a + 1));
    }

    static bool has_none_index(const ast::Node &n) {
        ast::NodePtr s = n.node("slice");
        if (!s || !s->is("Tuple")) return false;
        for (const auto &e : s->list("elts"))
            if (e->is("Constant") && std::holds_alternative<ast::NoneValue>(*e->find("value"))) return true;
        return false;
    }

    void count(const std::string &name) { out_.group(Group::Count)["count:" + name] += 1; }

    const frontend::KernelFile &kf_;
    Features &out_;
};

// Identifiers of a subtree, imports and docstrings left out.
void identifiers(const ast::Node &n, std::map<std::string, double> &g) {
    if (n.is("Import") || n.is("ImportFrom") || is_docstring(n)) return;
    std::string text;
    if (n.is("Name")) text = n.str("id");
    if (n.is("Attribute")) text = n.str("attr");
    if (n.is("FunctionDef") || n.is("ClassDef")) text = n.str("name");
    if (n.is("arg")) text = n.str("arg");
    if (n.is("keyword") && n.find("arg") && std::holds_alternative<std::string>(*n.find("arg"))) text = n.str("arg");
    if (n.is("Constant") && std::holds_alternative<std::string>(*n.find("value"))) {
        const std::string &s = std::get<std::string>(*n.find("value"));
        if (s.size() <= 32 && is_identifier(s)) text = s;  // "gelu", "relu": names passed as strings
    }
    for (const auto &t : subtokens(text)) g["id:" + t] += 1;
    for (const auto &field : n.fields) {
        if (auto p = std::get_if<ast::NodePtr>(&field.second)) {
            if (*p) identifiers(**p, g);
        } else if (auto l = std::get_if<ast::NodeList>(&field.second)) {
            for (const auto &c : *l)
                if (c) identifiers(*c, g);
        }
    }
}

}  // namespace

std::vector<std::string> subtokens(const std::string &s) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        bool digits = !cur.empty() && std::isdigit(static_cast<unsigned char>(cur[0]));
        if (cur.size() > 1 && !digits) out.push_back(cur);
        cur.clear();
    };
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (!std::isalnum(c)) {
            flush();
            continue;
        }
        const unsigned char prev = i ? static_cast<unsigned char>(s[i - 1]) : 0;
        const bool boundary =
            (std::isupper(c) && std::islower(prev)) || (std::isdigit(c) != 0) != (std::isdigit(prev) != 0);
        if (boundary && std::isalnum(prev)) flush();
        cur += static_cast<char>(std::tolower(c));
    }
    flush();
    return out;
}

void add_ast_features(const frontend::KernelFile &kf, Features &out) {
    std::set<const ast::Node *> seen, launched;
    for (const auto &k : kf.stub.launched) launched.insert(kf.jit(k).get());
    JitWalker walker(kf, out);
    for (const auto &[name, def] : kf.jit_functions)
        if (seen.insert(def.get()).second) walker.function(*def);
    auto &c = out.group(Group::Count);
    c["count:kernels"] = static_cast<double>(launched.size());
    c["count:helpers"] = static_cast<double>(seen.size() - launched.size());
    c["count:launches"] = static_cast<double>(kf.stub.launched.size());
    c["count:grad_inputs"] = static_cast<double>(kf.stub.grad_inputs.size());
    ast::walk(kf.file.module, [&](const ast::Node &n) {
        if (n.is("Call") && ast::dotted(n.node("func").get()).find("TensorDescriptor") != std::string::npos)
            c["count:descriptors"] += 1;
    });
}

void add_ident_features(const ast::File &file, Features &out) { identifiers(*file.module, out.group(Group::Ident)); }

}  // namespace tad::retrieve
