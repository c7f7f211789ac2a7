#include "frontend/parser.h"

#include <cctype>
#include <cstring>

#include "frontend/parser_internal.h"
#include "support/fs.h"

namespace tad::frontend {

NodePtr node(const char *kind, const Loc &loc, Fields fields) {
    NodePtr n = ast::make(kind, loc);
    n->fields.reserve(fields.size());
    for (const auto &[name, value] : fields) n->fields.emplace_back(name, value);
    return n;
}

NodePtr node_noloc(const char *kind, Fields fields) {
    NodePtr n = ast::make_noloc(kind);
    n->fields.reserve(fields.size());
    for (const auto &[name, value] : fields) n->fields.emplace_back(name, value);
    return n;
}

Value opt(const NodePtr &n) { return n ? Value(n) : Value(ast::NoneValue{}); }

std::string describe(const ast::Node &e) {
    static const std::pair<const char *, const char *> names[] = {{"Attribute", "attribute"},
                                                                  {"Subscript", "subscript"},
                                                                  {"Starred", "starred"},
                                                                  {"Name", "name"},
                                                                  {"List", "list"},
                                                                  {"Tuple", "tuple"},
                                                                  {"Lambda", "lambda"},
                                                                  {"Call", "function call"},
                                                                  {"BoolOp", "expression"},
                                                                  {"BinOp", "expression"},
                                                                  {"UnaryOp", "expression"},
                                                                  {"GeneratorExp", "generator expression"},
                                                                  {"Yield", "yield expression"},
                                                                  {"YieldFrom", "yield expression"},
                                                                  {"Await", "await expression"},
                                                                  {"ListComp", "list comprehension"},
                                                                  {"SetComp", "set comprehension"},
                                                                  {"DictComp", "dict comprehension"},
                                                                  {"Dict", "dict literal"},
                                                                  {"Set", "set display"},
                                                                  {"JoinedStr", "f-string expression"},
                                                                  {"FormattedValue", "f-string expression"},
                                                                  {"Compare", "comparison"},
                                                                  {"IfExp", "conditional expression"},
                                                                  {"NamedExpr", "named expression"}};
    if (e.is("Constant")) {
        const Value *v = e.find("value");
        if (std::holds_alternative<ast::NoneValue>(*v)) return "None";
        if (const bool *b = std::get_if<bool>(v)) return *b ? "True" : "False";
        if (std::holds_alternative<ast::EllipsisValue>(*v)) return "ellipsis";
        return "literal";
    }
    for (const auto &[kind, name] : names)
        if (e.kind == kind) return name;
    return "expression";
}

Parser::Parser(const std::string &text, Origin origin) : lexer_(text, std::move(origin)) {}

Parser::Nest::Nest(Parser &p) : parser(p) {
    // Bounds the recursion that brackets do not (their nesting stops at 200 in the lexer):
    // lambdas, conditional expressions, powers. Deeper trees fail check_height anyway.
    constexpr int kMaxDepth = 3000;
    if (++parser.depth_ > kMaxDepth) {
        --parser.depth_;
        parser.fail(parser.peek(), "expression nested too deeply");
    }
}

const Token &Parser::peek(size_t ahead) {
    while (toks_.size() <= pos_ + ahead) {
        if (!toks_.empty() && toks_.back().kind == Tok::End) return toks_.back();
        try {
            toks_.push_back(lexer_.next());
        } catch (const Error &) {
            lexer_failed_ = true;
            throw;
        }
    }
    return toks_[pos_ + ahead];
}

const Token &Parser::take() {
    const Token &t = peek();
    if (t.kind != Tok::End) ++pos_;
    return t;
}

bool Parser::at_name(size_t ahead) {
    const Token &t = peek(ahead);
    return t.kind == Tok::Name && !is_keyword(t.text);
}

bool Parser::accept_op(const char *op) {
    if (!at_op(op)) return false;
    take();
    return true;
}

bool Parser::accept_word(const char *word) {
    if (!at_word(word)) return false;
    take();
    return true;
}

void Parser::expect_op(const char *op) {
    if (accept_op(op)) return;
    if (std::strcmp(op, ":") == 0) fail(peek(), "expected ':'");
    fail_invalid(peek());
}

void Parser::expect_word(const char *word) {
    if (!accept_word(word)) fail(peek(), std::string("expected '") + word + "'");
}

// A closing bracket; when an expression follows the previous one instead, a comma is likely
// missing.
void Parser::expect_closing(const char *bracket) {
    if (accept_op(bracket)) return;
    Tok prev = last().kind;
    bool prev_ends = prev == Tok::Name || prev == Tok::Number || prev == Tok::String || last().is_op(")") ||
                     last().is_op("]") || last().is_op("}");
    if (prev_ends && starts_expression() && !at_op("*") && !at_op("-") && !at_op("+"))
        fail(peek(), "invalid syntax. Perhaps you forgot a comma?");
    fail_invalid(peek());
}

std::string Parser::name() {
    if (!at_name()) fail_invalid(peek());
    return take().text;
}

Loc Parser::span(Pos from) const {
    size_t i = pos_;
    while (i > 1 && toks_[i - 1].kind != Tok::Name && toks_[i - 1].kind != Tok::Number &&
           toks_[i - 1].kind != Tok::String && toks_[i - 1].kind != Tok::Op)
        --i;
    const Token &end = toks_[i - 1];
    return {from.line, from.col, end.end_line, end.end_col};
}

void Parser::fail(const Token &at, const std::string &what) { fail_at(loc_of(at), what); }

void Parser::fail_at(const Loc &at, const std::string &what) {
    read_to_end();
    syntax_error(lexer_.origin(), at.line, at.col, what);
}

void Parser::fail_invalid(const Token &at) { fail(at, "invalid syntax"); }

void Parser::read_to_end() {
    for (size_t ahead = 0; peek(ahead).kind != Tok::End; ++ahead) {}
}

bool Parser::starts_expression(size_t ahead) {
    const Token &t = peek(ahead);
    switch (t.kind) {
    case Tok::Number:
    case Tok::String: return true;
    case Tok::Name: {
        static const char *const starters[] = {"None", "True", "False", "not", "lambda", "await"};
        if (!is_keyword(t.text)) return true;
        for (const char *s : starters)
            if (t.text == s) return true;
        return false;
    }
    case Tok::Op: {
        static const char *const starters[] = {"(", "[", "{", "-", "+", "~", "...", "*"};
        for (const char *s : starters)
            if (t.text == s) return true;
        return false;
    }
    default: return false;
    }
}

// Sets Store or Del on a target and everything it unpacks into.
void Parser::set_context(const NodePtr &e, const char *ctx) {
    bool del = std::strcmp(ctx, "Del") == 0;
    if (e->is("Name") || e->is("Attribute") || e->is("Subscript")) {
        e->set("ctx", node_noloc(ctx));
        return;
    }
    if (e->is("Starred") && !del) {
        e->set("ctx", node_noloc(ctx));
        set_context(e->node("value"), ctx);
        return;
    }
    if (e->is("Tuple") || e->is("List")) {
        e->set("ctx", node_noloc(ctx));
        for (const NodePtr &elt : e->list("elts")) set_context(elt, ctx);
        return;
    }
    fail_at(e->loc, std::string(del ? "cannot delete " : "cannot assign to ") + describe(*e));
}

// A target of `=`, parsed as an expression.
void Parser::check_assign_target(const NodePtr &e) {
    bool target_kind = e->is("Name") || e->is("Attribute") || e->is("Subscript") || e->is("Starred") ||
                       e->is("Tuple") || e->is("List");
    if (!target_kind)
        fail_at(e->loc, "cannot assign to " + describe(*e) + " here. Maybe you meant '==' instead of '='?");
    set_context(e, "Store");
}

// star_targets: star_target (',' star_target)* [','], a Tuple when there is a comma.
NodePtr Parser::star_targets() {
    Pos from = start();
    NodePtr first = star_target();
    if (!at_op(",")) return first;
    NodeList elts{first};
    while (accept_op(",")) {
        if (!at_name() && !at_op("(") && !at_op("[") && !at_op("*")) break;
        elts.push_back(star_target());
    }
    return node("Tuple", span(from), {{"elts", elts}, {"ctx", node_noloc("Store")}});
}

NodePtr Parser::star_target() {
    Pos from = start();
    if (accept_op("*")) {
        if (at_op("*")) fail_invalid(peek());
        NodePtr inner = star_target();
        return node("Starred", span(from), {{"value", inner}, {"ctx", node_noloc("Store")}});
    }
    // A target is an atom with trailers (`a`, `a.b[c]`, `(a, b)`, `[a, *b]`), never an operator
    // expression, so that `for x in y` stops before `in`.
    NodePtr e = primary();
    set_context(e, "Store");
    return e;
}

NodePtr Parser::module() {
    NodeList body;
    while (peek().kind != Tok::End) statement(body);
    NodePtr m = node_noloc("Module", {{"body", body}, {"type_ignores", NodeList{}}});
    check_height(m);
    return m;
}

namespace {

// Appends the children of `n` (null ones left out) to `out`, in field order.
void append_children(const ast::Node &n, std::vector<const ast::Node *> &out) {
    for (const auto &field : n.fields) {
        if (const NodePtr *child = std::get_if<NodePtr>(&field.second)) {
            if (*child) out.push_back(child->get());
        } else if (const NodeList *list = std::get_if<NodeList>(&field.second)) {
            for (const NodePtr &item : *list)
                if (item) out.push_back(item.get());
        }
    }
}

}  // namespace

// Long operator chains build deep trees without deep recursion (`a + a + ... + a`). CPython 3.11
// rejects trees taller than this (RecursionError during ast construction); so does tad, which
// keeps recursive walks over the tree safe.
void Parser::check_height(const NodePtr &root) {
    constexpr int kMaxHeight = 2995;
    std::vector<const ast::Node *> level{root.get()}, next;
    const ast::Node *deep = root.get();
    for (int height = 1; !level.empty(); ++height) {
        if (height > kMaxHeight) fail_at(deep->loc, "expression nested too deeply");
        next.clear();
        for (const ast::Node *n : level) {
            if (n->has_loc) deep = n;
            append_children(*n, next);
        }
        level.swap(next);
    }
}

NodePtr Parser::fstring_replacement() {
    NodePtr e = star_expressions();
    if (peek().kind == Tok::Newline) take();
    if (peek().kind != Tok::End) fail_invalid(peek());
    return e;
}

namespace {

// The encoding a PEP 263 comment declares on line 1, or on line 2 after a blank or comment line;
// "" when there is none. `line` receives the comment's line.
std::string declared_encoding(const std::string &text, int &line) {
    size_t pos = 0;
    for (line = 1; line <= 2 && pos < text.size(); ++line) {
        size_t eol = std::min(text.find('\n', pos), text.size());
        size_t p = text.find_first_not_of(" \t\f", pos);
        if (p >= eol) {  // blank line
            pos = eol + 1;
            continue;
        }
        if (text[p] != '#') return "";
        size_t c = text.find("coding", p);
        if (c < eol && c + 6 < eol && (text[c + 6] == ':' || text[c + 6] == '=')) {
            size_t b = text.find_first_not_of(" \t", c + 7);
            size_t e = b;
            while (e < eol && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '-' || text[e] == '_' ||
                               text[e] == '.'))
                ++e;
            std::string name;
            for (size_t k = b; k < e; ++k)
                name += text[k] == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(text[k])));
            return name;
        }
        pos = eol + 1;
    }
    return "";
}

// The source as UTF-8 with '\n' line endings and no byte-order mark: what CPython's decoding layer
// hands its tokenizer, and what node locations refer to. Latin-1 files (PEP 263) are transcoded.
std::string decode_source(const std::string &path, const std::string &source) {
    size_t begin = source.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    int line = 0;
    std::string encoding = declared_encoding(source.substr(begin, 4096), line);
    static const char *const utf8[] = {"utf-8", "utf8", "ascii", "us-ascii"};
    static const char *const latin1[] = {"latin-1", "latin1", "iso-8859-1", "iso8859-1", "iso-latin-1", "l1"};
    auto in = [&](const auto &names) {
        for (const char *n : names)
            if (encoding == n) return true;
        return false;
    };
    bool is_latin1 = in(latin1) || encoding.rfind("latin-1-", 0) == 0 || encoding.rfind("iso-8859-1-", 0) == 0;
    if (!encoding.empty() && !is_latin1 && !in(utf8) && encoding.rfind("utf-8-", 0) != 0) {
        Origin origin;
        origin.path = path;
        syntax_error(origin, line, 0, "unsupported source encoding '" + encoding + "' (tad reads UTF-8 and Latin-1)");
    }
    std::string out;
    out.reserve(source.size() - begin);
    for (size_t i = begin; i < source.size(); ++i) {
        char c = source[i];
        unsigned char u = static_cast<unsigned char>(c);
        if (c == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else if (is_latin1 && u >= 0x80) {
            out += static_cast<char>(0xc0 | (u >> 6));
            out += static_cast<char>(0x80 | (u & 0x3f));
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

ast::File parse_source(const std::string &path, const std::string &source) {
    ast::File file;
    file.path = path;
    file.source = decode_source(path, source);
    Origin origin;
    origin.path = path;
    Parser parser(file.source, origin);
    file.module = parser.module();
    return file;
}

ast::File parse_file(const std::string &path) { return parse_source(path, fs::read_file(path)); }

}  // namespace tad::frontend
