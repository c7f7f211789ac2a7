// The importer of import.h: sections found in the comment banners, the stub made from the
// autograd.Function's forward on the AST (tad's parser), the text assembled from source lines.
#include "retrieve/import.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "frontend/kernel_file.h"
#include "frontend/parser.h"
#include "retrieve/dataset.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::retrieve {

namespace {

enum class Kind { Helpers, Forward, Backward, Autograd, Other };

struct Section {
    Kind kind;
    std::string title;
    int first = 0, last = 0;  // 1-based lines, banners included
};

std::vector<std::string> split_lines(const std::string &text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string trim(const std::string &s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// "# =====...", "# -----...": a comment of at least ten rule characters.
bool is_banner(const std::string &line) {
    std::string t = trim(line);
    if (t.empty() || t[0] != '#') return false;
    t = trim(t.substr(1));
    return t.size() >= 10 && t.find_first_not_of("=-#*~") == std::string::npos;
}

bool contains(std::string text, const char *word) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text.find(word) != std::string::npos;
}

// Titles say what a section holds; "SHARED HELPERS (used by both forward and backward)" names both
// passes, so helpers are recognised first.
Kind classify(const std::string &title) {
    if (contains(title, "autograd")) return Kind::Autograd;
    if (contains(title, "shared") || contains(title, "helper")) return Kind::Helpers;
    if (contains(title, "backward")) return Kind::Backward;
    if (contains(title, "forward")) return Kind::Forward;
    return Kind::Other;
}

// Sections open at a banner, a comment line (the title) and a banner; each runs to the next.
std::vector<Section> find_sections(const std::vector<std::string> &lines) {
    std::vector<Section> out;
    for (size_t i = 0; i + 2 < lines.size(); ++i) {
        if (!is_banner(lines[i]) || is_banner(lines[i + 1]) || !is_banner(lines[i + 2])) continue;
        const std::string t = trim(lines[i + 1]);
        if (t.empty() || t[0] != '#') continue;
        if (!out.empty()) out.back().last = static_cast<int>(i);
        out.push_back({classify(t.substr(1)), trim(t.substr(1)), static_cast<int>(i) + 1, 0});
        i += 2;
    }
    if (!out.empty()) out.back().last = static_cast<int>(lines.size());
    return out;
}

std::string at(const std::string &path, const ast::Node &n) { return where(path, n.loc.line, n.loc.col + 1); }

const ast::Node *method(const ast::Node &cls, const char *name) {
    for (const auto &s : cls.list("body"))
        if (s->is("FunctionDef") && s->str("name") == name) return s.get();
    return nullptr;
}

// The first class deriving from (torch.autograd.)Function with a forward.
const ast::Node *autograd_class(const ast::File &f) {
    for (const auto &s : f.module->list("body")) {
        if (!s->is("ClassDef")) continue;
        for (const auto &b : s->list("bases")) {
            const std::string base = ast::dotted(b.get());
            const bool function =
                base == "Function" || (base.size() > 9 && base.compare(base.size() - 9, 9, ".Function") == 0);
            if (function && method(*s, "forward")) return s.get();
        }
    }
    return nullptr;
}

bool rooted_at(const ast::Node &target, const std::string &ctx) {
    const ast::Node *n = &target;
    while (n->is("Attribute") || n->is("Subscript")) n = n->node("value").get();
    return n->is("Name") && n->str("id") == ctx;
}

const ast::Node *reads(const ast::NodePtr &n, const std::string &ctx) {
    const ast::Node *found = nullptr;
    ast::walk(n, [&](const ast::Node &x) {
        if (!found && x.is("Name") && x.str("id") == ctx) found = &x;
    });
    return found;
}

// A statement that only hands something to ctx: ctx.save_for_backward(...), ctx.x = ...
bool ctx_only(const ast::Node &s, const std::string &ctx) {
    if (s.is("Expr")) {
        const ast::NodePtr v = s.node("value");
        return v->is("Call") && rooted_at(*v->node("func"), ctx);
    }
    if (s.is("AugAssign")) return rooted_at(*s.node("target"), ctx);
    if (!s.is("Assign")) return false;
    for (const auto &t : s.list("targets")) {
        const ast::NodeList single = {t};
        const ast::NodeList &parts = t->is("Tuple") ? t->list("elts") : single;
        for (const auto &p : parts)
            if (!rooted_at(*p, ctx)) return false;
    }
    return true;
}

// What becomes of the forward's lines: dropped (ctx statements) or replaced by `pass` (a block whose
// statements all went).
struct Edits {
    std::set<int> dropped;
    std::set<int> pass;  // first line of a dropped statement that becomes `pass`
};

void mark_lines(const ast::Node &s, std::set<int> &lines) {
    for (int l = s.loc.line; l <= s.loc.end_line; ++l) lines.insert(l);
}

void edit_block(const std::string &path, const ast::NodeList &body, const std::string &ctx, bool nested, Edits &e);

// Headers of compound statements may not read ctx; their blocks are edited like the body.
void edit_compound(const std::string &path, const ast::Node &s, const std::string &ctx, Edits &e) {
    for (const auto &[name, value] : s.fields) {
        if (auto block = std::get_if<ast::NodeList>(&value);
            block && (name == "body" || name == "orelse" || name == "finalbody")) {
            if (!block->empty() && block->front()->has_loc && !block->front()->is("ExceptHandler"))
                edit_block(path, *block, ctx, true, e);
        } else if (auto p = std::get_if<ast::NodePtr>(&value)) {
            if (const ast::Node *r = reads(*p, ctx))
                fail(TAD_ERR_UNSUPPORTED,
                     at(path, *r) + ": the forward reads '" + ctx + "', which tad's stub does not have");
        }
    }
}

void edit_block(const std::string &path, const ast::NodeList &body, const std::string &ctx, bool nested, Edits &e) {
    size_t dropped = 0;
    for (const auto &s : body) {
        if (ctx_only(*s, ctx)) {
            mark_lines(*s, e.dropped);
            ++dropped;
        } else if (s->is("If") || s->is("For") || s->is("While") || s->is("With") || s->is("Try")) {
            edit_compound(path, *s, ctx, e);
        } else if (const ast::Node *r = reads(s, ctx)) {
            fail(TAD_ERR_UNSUPPORTED,
                 at(path, *r) + ": the forward reads '" + ctx + "', which tad's stub does not have");
        }
    }
    if (nested && dropped == body.size()) e.pass.insert(body.front()->loc.line);
}

// The gradient positions of the backward's last return: the elements that are not None.
std::vector<size_t> gradient_positions(const std::string &path, const ast::Node &backward) {
    const ast::Node *ret = nullptr;
    for (const auto &s : backward.list("body"))
        ast::walk(s, [&](const ast::Node &n) {
            if (n.is("Return")) ret = &n;
        });
    std::vector<size_t> out;
    const ast::NodePtr v = ret ? ret->node("value") : nullptr;
    const ast::NodeList single = {v};
    const ast::NodeList &items = v && v->is("Tuple") ? v->list("elts") : single;
    for (size_t i = 0; i < items.size(); ++i) {
        const ast::Node *x = items[i].get();
        const bool none = !x || (x->is("Constant") && std::holds_alternative<ast::NoneValue>(*x->find("value")));
        if (!none) out.push_back(i);
    }
    if (out.empty()) fail(TAD_ERR_UNSUPPORTED, at(path, ret ? *ret : backward) + ": the backward returns no gradient");
    return out;
}

std::string snake_case(std::string name) {
    while (!name.empty() && name[0] == '_') name.erase(0, 1);
    for (const char *suffix : {"Function", "AutoGrad", "Autograd", "Func", "Fn"}) {
        const std::string s = suffix;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            name.erase(name.size() - s.size());
            break;
        }
    }
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        const bool upper = std::isupper(c) != 0;
        const bool after_lower = i > 0 && (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                                           std::isdigit(static_cast<unsigned char>(name[i - 1])));
        const bool before_lower = i > 0 && i + 1 < name.size() &&
                                  std::isupper(static_cast<unsigned char>(name[i - 1])) &&
                                  std::islower(static_cast<unsigned char>(name[i + 1]));
        if (upper && (after_lower || before_lower) && !out.empty() && out.back() != '_') out += '_';
        out += static_cast<char>(std::tolower(c));
    }
    return out.empty() ? "stub" : out;
}

bool defines(const ast::File &f, const std::string &name) {
    for (const auto &s : f.module->list("body")) {
        if ((s->is("FunctionDef") || s->is("ClassDef")) && s->str("name") == name) return true;
        if (s->is("Assign"))
            for (const auto &t : s->list("targets"))
                if (t->is("Name") && t->str("id") == name) return true;
    }
    return false;
}

struct Signature {
    std::string ctx, text;
    std::vector<std::string> params;
};

// The forward's parameters after ctx, with their defaults (annotations dropped: they may name
// types the file imports only for the class).
Signature signature(const ast::File &f, const ast::Node &fwd) {
    const ast::NodePtr a = fwd.node("args");
    if (a->node("vararg") || a->node("kwarg"))
        fail(TAD_ERR_UNSUPPORTED,
             at(f.path, fwd) + ": the forward takes *args or **kwargs; a stub names its parameters");
    ast::NodeList params = a->list("posonlyargs");
    for (const auto &p : a->list("args")) params.push_back(p);
    if (params.empty()) fail(TAD_ERR_SYNTAX, at(f.path, fwd) + ": the forward has no ctx parameter");
    const ast::NodeList &defaults = a->list("defaults");
    const size_t first_default = params.size() - defaults.size();
    Signature s;
    s.ctx = params[0]->str("arg");
    auto add = [&](const ast::Node &p, const ast::NodePtr &dflt) {
        s.params.push_back(p.str("arg"));
        s.text += (s.text.empty() ? "" : ", ") + p.str("arg") + (dflt ? "=" + f.slice(dflt->loc) : "");
    };
    for (size_t i = 1; i < params.size(); ++i)
        add(*params[i], i >= first_default ? defaults[i - first_default] : nullptr);
    const ast::NodeList &kwonly = a->list("kwonlyargs");
    if (!kwonly.empty()) s.text += ", *";
    for (size_t i = 0; i < kwonly.size(); ++i) add(*kwonly[i], a->list("kw_defaults")[i]);
    return s;
}

// The forward's body re-indented to four spaces, with the edits applied.
std::string stub_body(const std::vector<std::string> &lines, const ast::Node &fwd, const Edits &e) {
    const ast::NodeList &body = fwd.list("body");
    size_t first = 0;
    if (body.size() > 1 && body[0]->is("Expr") && body[0]->node("value")->is("Constant")) first = 1;  // docstring
    const size_t indent = static_cast<size_t>(body[first]->loc.col);
    std::string out;
    for (int l = body[first]->loc.line; l <= fwd.loc.end_line; ++l) {
        const std::string &line = lines[static_cast<size_t>(l - 1)];
        const size_t lead = std::min(line.find_first_not_of(' '), line.size());
        if (e.pass.count(l)) {
            out += "    " + std::string(lead > indent ? lead - indent : 0, ' ') + "pass\n";
            continue;
        }
        if (e.dropped.count(l)) continue;
        out += trim(line).empty() ? "\n" : "    " + line.substr(std::min(indent, lead)) + "\n";
    }
    return out;
}

// ("a", "b") or ("a",): a Python tuple of the names.
std::string quoted_list(const std::vector<std::string> &items) {
    std::string out;
    for (const auto &s : items) out += (out.empty() ? "\"" : ", \"") + s + "\"";
    return "(" + out + (items.size() == 1 ? ",)" : ")");
}

// A file name as an entry name: a Python identifier.
std::string entry_name(const std::string &file) {
    std::string stem = file.substr(0, file.size() - 3);
    for (char &ch : stem)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return std::isdigit(static_cast<unsigned char>(stem[0])) ? "_" + stem : stem;
}

Json sidecar(const std::string &source_path, const std::string &name) {
    Json m = Json::object();
    m.set_null("family");
    m.set("provenance", "imported from " + source_path);
    m.set("backward", "imported/" + name + ".py");
    m.set("backward_kind", "imported");
    m.set_null("gpu");
    m.set_null("timings");
    return m;
}

// Converts and writes one file; returns the report's entry, or throws why it was not imported.
Json import_one(const std::string &source_path, const std::string &dir) {
    const std::string file = source_path.substr(source_path.rfind('/') + 1);
    const std::string name = entry_name(file);
    const std::string target = fs::join(dir, name + ".py");
    if (fs::exists(target))
        fail(TAD_ERR_INVALID_ARGUMENT, source_path + ": the dataset has an entry '" + name + "' already");
    const std::string text = fs::read_file(source_path, TAD_MAX_FORWARD_BYTES);
    Converted c = convert_sectioned(source_path, text);
    try {
        frontend::analyze(frontend::parse_source(target, c.forward));
    } catch (const Error &e) {
        fail(e.status(), source_path + ": the converted forward file does not load: " + e.what());
    }
    fs::make_dirs(fs::join(dir, "imported"));
    fs::make_dirs(fs::join(dir, "meta"));
    fs::write_file_atomic(fs::join(fs::join(dir, "imported"), name + ".py"), text);
    fs::write_file_atomic(fs::join(fs::join(dir, "meta"), name + ".json"),
                          sidecar(source_path, name).dump(true) + "\n");
    fs::write_file_atomic(target, c.forward);
    Json r = Json::object();
    r.set("source", source_path);
    r.set("entry", target);
    r.set("stub", c.stub);
    JsonRef g = r.set_array("grad_inputs");
    for (const auto &x : c.grad_inputs) g.push(x);
    JsonRef sec = r.set_array("sections");
    for (const auto &x : c.sections) sec.push(x);
    JsonRef notes = r.set_array("notes");
    for (const auto &x : c.notes) notes.push(x);
    return r;
}

}  // namespace

std::string import_dataset(const std::string &source_dir, const std::string &dataset_dir) {
    const std::string src = fs::absolute(source_dir);
    if (!fs::is_directory(src)) fail(TAD_ERR_IO, source_dir + ": not a directory");
    const std::string dir = fs::absolute(dataset_dir.empty() ? default_dataset_dir() : dataset_dir);
    fs::make_dirs(dir);
    Json r = Json::object();
    r.set("kind", "import");
    r.set("source_dir", src);
    r.set("dataset_dir", dir);
    JsonRef imported = r.set_array("imported");
    JsonRef skipped = r.set_array("skipped");
    for (const auto &name : fs::list_dir(src)) {
        const std::string path = fs::join(src, name);
        if (name.size() < 4 || name.compare(name.size() - 3, 3, ".py") != 0 || fs::is_directory(path)) continue;
        try {
            imported.push_copy(import_one(path, dir));
        } catch (const Error &e) {
            JsonRef o = skipped.push_object();
            o.set("source", path);
            o.set("reason", e.what());
        }
    }
    return r.dump();
}

Converted convert_sectioned(const std::string &path, const std::string &text) {
    const ast::File f = frontend::parse_source(path, text);
    const std::vector<std::string> lines = split_lines(f.source);
    const std::vector<Section> sections = find_sections(lines);
    if (sections.empty())
        fail(TAD_ERR_SYNTAX,
             path + ": no section banners (\"# ====\" / \"# FORWARD ...\" / \"# ====\"); not a sectioned fwd/bwd file");
    const ast::Node *cls = autograd_class(f);
    if (!cls) fail(TAD_ERR_SYNTAX, path + ": no torch.autograd.Function class with a forward");
    const ast::Node *fwd = method(*cls, "forward"), *bwd = method(*cls, "backward");
    if (!bwd) fail(TAD_ERR_SYNTAX, at(path, *cls) + ": class '" + cls->str("name") + "' has no backward");
    Converted c;
    const Signature sig = signature(f, *fwd);
    for (size_t i : gradient_positions(path, *bwd))
        if (i < sig.params.size()) c.grad_inputs.push_back(sig.params[i]);
    Edits edits;
    edit_block(path, fwd->list("body"), sig.ctx, false, edits);
    c.stub = snake_case(cls->str("name"));
    if (defines(f, c.stub)) c.stub += "_stub";
    std::set<int> removed;
    // The backward section goes whole; of the autograd.Function one, its banner and the class (what
    // follows the class, SWEEP and make_args, stays).
    for (const auto &s : sections) {
        c.sections.push_back(s.title);
        const int last = s.kind == Kind::Backward ? s.last : s.kind == Kind::Autograd ? s.first + 2 : 0;
        for (int l = s.first; l <= last; ++l) removed.insert(l);
    }
    const int cls_first =
        cls->list("decorator_list").empty() ? cls->loc.line : cls->list("decorator_list")[0]->loc.line;
    for (int l = cls_first; l <= cls->loc.end_line; ++l) removed.insert(l);
    for (size_t l = 1; l <= lines.size(); ++l)
        if (!removed.count(static_cast<int>(l))) c.forward += lines[l - 1] + "\n";
    c.forward += "\n\n# The stub: " + cls->str("name") + ".forward without " + sig.ctx + " (tad dataset import).\n";
    c.forward += "import tad  # noqa: E402\n\n\n@tad.autodiff(grad_inputs=" + quoted_list(c.grad_inputs) + ")\n";
    c.forward += "def " + c.stub + "(" + sig.text + "):\n" + stub_body(lines, *fwd, edits);
    if (!defines(f, "SWEEP") || !defines(f, "make_args"))
        c.notes.push_back(
            "no SWEEP or make_args: retrieval can use the entry, but tad cannot trace, generate or "
            "verify it until they are added");
    return c;
}

}  // namespace tad::retrieve
