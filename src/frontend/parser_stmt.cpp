// Statements. A statement spans from its first token to the last one it consumed that is not a
// NEWLINE, INDENT or DEDENT, so a compound statement ends with its last block (a trailing ';'
// included, as in CPython).
#include "frontend/parser_internal.h"

namespace tad::frontend {

namespace {

const char *augmented_op(const Token &t) {
    static const std::pair<const char *, const char *> ops[] = {
        {"+=", "Add"},     {"-=", "Sub"},    {"*=", "Mult"},     {"@=", "MatMult"}, {"/=", "Div"},
        {"%=", "Mod"},     {"&=", "BitAnd"}, {"|=", "BitOr"},    {"^=", "BitXor"},  {"<<=", "LShift"},
        {">>=", "RShift"}, {"**=", "Pow"},   {"//=", "FloorDiv"}};
    if (t.kind != Tok::Op) return nullptr;
    for (const auto &[op, kind] : ops)
        if (t.text == op) return kind;
    return nullptr;
}

}  // namespace

void Parser::statement(NodeList &out) {
    if (peek().kind == Tok::Indent) fail(peek(), "unexpected indent");
    if (NodePtr s = compound_statement()) {
        out.push_back(s);
        return;
    }
    simple_statements(out);
}

// simple_stmt (';' simple_stmt)* [';'] NEWLINE
void Parser::simple_statements(NodeList &out) {
    for (;;) {
        out.push_back(simple_statement());
        if (!accept_op(";") || peek().kind == Tok::Newline) break;
    }
    if (peek().kind == Tok::Newline) {
        take();
        return;
    }
    const NodePtr &last_stmt = out.back();
    if (last_stmt->is("Expr") && last_stmt->node("value")->is("Name") &&
        last_stmt->node("value")->str("id") == "print" && starts_expression())
        fail_at(last_stmt->loc, "Missing parentheses in call to 'print'. Did you mean print(...)?");
    fail_invalid(peek());
}

NodePtr Parser::simple_statement() {
    Pos from = start();
    const Token &t = peek();
    if (t.kind != Tok::Name) return expression_statement();
    static const std::pair<const char *, const char *> bare[] = {
        {"pass", "Pass"}, {"break", "Break"}, {"continue", "Continue"}};
    for (const auto &[word, kind] : bare) {
        if (t.text == word) {
            take();
            return node(kind, span(from), {});
        }
    }
    if (t.text == "return") {
        take();
        NodePtr value = starts_expression() ? star_expressions() : nullptr;
        return node("Return", span(from), {{"value", opt(value)}});
    }
    if (t.text == "import") return import_statement();
    if (t.text == "from") return from_import_statement();
    if (t.text == "raise") {
        take();
        NodePtr exc, cause;
        if (starts_expression()) {
            exc = expression();
            if (accept_word("from")) cause = expression();
        }
        return node("Raise", span(from), {{"exc", opt(exc)}, {"cause", opt(cause)}});
    }
    if (t.text == "global" || t.text == "nonlocal") {
        take();
        ast::StringList names{name()};
        while (accept_op(",")) names.push_back(name());
        return node(t.text == "global" ? "Global" : "Nonlocal", span(from), {{"names", names}});
    }
    if (t.text == "del") return del_statement();
    if (t.text == "assert") {
        take();
        NodePtr test = expression();
        NodePtr msg = accept_op(",") ? expression() : nullptr;
        return node("Assert", span(from), {{"test", test}, {"msg", opt(msg)}});
    }
    return expression_statement();
}

// An expression, or an assignment of one of the three kinds.
NodePtr Parser::expression_statement() {
    Pos from = start();
    bool parenthesized = at_op("(");
    NodePtr first = yield_or_star_expressions();
    if (at_op(":")) {
        if (first->is("Tuple") || first->is("List"))
            fail_at(first->loc, std::string("only single target (not ") + (first->is("Tuple") ? "tuple" : "list") +
                                    ") can be annotated");
        if (!first->is("Name") && !first->is("Attribute") && !first->is("Subscript"))
            fail_at(first->loc, "illegal target for annotation");
        take();
        NodePtr annotation = expression();
        NodePtr value = accept_op("=") ? yield_or_star_expressions() : nullptr;
        set_context(first, "Store");
        int64_t simple = first->is("Name") && !parenthesized ? 1 : 0;
        return node("AnnAssign", span(from),
                    {{"target", first}, {"annotation", annotation}, {"value", opt(value)}, {"simple", simple}});
    }
    if (const char *op = augmented_op(peek())) {
        if (!first->is("Name") && !first->is("Attribute") && !first->is("Subscript"))
            fail_at(first->loc, "'" + describe(*first) + "' is an illegal expression for augmented assignment");
        take();
        NodePtr value = yield_or_star_expressions();
        set_context(first, "Store");
        return node("AugAssign", span(from), {{"target", first}, {"op", node_noloc(op)}, {"value", value}});
    }
    if (!at_op("=")) return node("Expr", span(from), {{"value", first}});
    NodeList targets{first};
    while (accept_op("=")) targets.push_back(yield_or_star_expressions());
    NodePtr value = targets.back();
    targets.pop_back();
    for (const NodePtr &target : targets) check_assign_target(target);
    return node("Assign", span(from), {{"targets", targets}, {"value", value}, {"type_comment", ast::NoneValue{}}});
}

namespace {
std::string join_dotted(const std::vector<std::string> &parts) {
    std::string out;
    for (const std::string &p : parts) out += (out.empty() ? "" : ".") + p;
    return out;
}
}  // namespace

NodePtr Parser::import_statement() {
    Pos from = start();
    take();
    NodeList names;
    do {
        Pos alias_from = start();
        std::vector<std::string> parts{name()};
        while (accept_op(".")) parts.push_back(name());
        Value asname = ast::NoneValue{};
        if (accept_word("as")) asname = name();
        names.push_back(node("alias", span(alias_from), {{"name", join_dotted(parts)}, {"asname", asname}}));
    } while (accept_op(","));
    return node("Import", span(from), {{"names", names}});
}

NodePtr Parser::from_import_statement() {
    Pos from = start();
    take();
    int64_t level = 0;
    while (at_op(".") || at_op("...")) level += static_cast<int64_t>(take().text.size());
    Value module = ast::NoneValue{};
    if (!at_word("import") || level == 0) {
        std::vector<std::string> parts{name()};
        while (accept_op(".")) parts.push_back(name());
        module = join_dotted(parts);
    }
    expect_word("import");
    NodeList names;
    if (at_op("*")) {
        const Token &star = take();
        names.push_back(node("alias", loc_of(star), {{"name", std::string("*")}, {"asname", ast::NoneValue{}}}));
    } else {
        bool parenthesized = accept_op("(");
        do {
            if (parenthesized && !names.empty() && at_op(")")) break;
            if (!parenthesized && !names.empty() && peek().kind == Tok::Newline)
                fail(last(), "trailing comma not allowed without surrounding parentheses");
            Pos alias_from = start();
            std::string id = name();
            Value asname = ast::NoneValue{};
            if (accept_word("as")) asname = name();
            names.push_back(node("alias", span(alias_from), {{"name", id}, {"asname", asname}}));
        } while (accept_op(","));
        if (parenthesized) expect_closing(")");
    }
    return node("ImportFrom", span(from), {{"module", module}, {"names", names}, {"level", level}});
}

NodePtr Parser::del_statement() {
    Pos from = start();
    take();
    NodeList targets;
    do {
        if (!targets.empty() && (peek().kind == Tok::Newline || at_op(";"))) break;
        NodePtr target = star_expression();
        set_context(target, "Del");
        targets.push_back(target);
    } while (accept_op(","));
    return node("Delete", span(from), {{"targets", targets}});
}

// block: NEWLINE INDENT statements DEDENT | simple_stmts. `after` and `line` name the statement
// that owns the block in the diagnostic about a missing indented block.
NodeList Parser::block(const std::string &after, int line) {
    NodeList body;
    if (peek().kind != Tok::Newline) {
        simple_statements(body);
        return body;
    }
    take();
    if (peek().kind != Tok::Indent)
        fail(peek(), "expected an indented block after " + after + " on line " + std::to_string(line));
    take();
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) statement(body);
    take();
    return body;
}

NodePtr Parser::compound_statement() {
    const Token &t = peek();
    if (t.is_op("@")) return decorated();
    if (t.kind != Tok::Name) return nullptr;
    Pos from = start();
    if (t.text == "if") return if_statement();
    if (t.text == "while") return while_statement();
    if (t.text == "for") return for_statement(from, false);
    if (t.text == "try") return try_statement();
    if (t.text == "with") return with_statement(from, false);
    if (t.text == "def") return function_def(from, false, {});
    if (t.text == "class") return class_def({});
    if (t.text == "async") {
        const Token &next = peek(1);
        take();
        if (next.is_word("def")) return function_def(from, true, {});
        if (next.is_word("for")) return for_statement(from, true);
        if (next.is_word("with")) return with_statement(from, true);
        fail_invalid(next);
    }
    if (t.text == "match") return match_statement();
    return nullptr;
}

NodePtr Parser::if_statement() {
    Pos from = start();
    const Token &keyword = take();
    NodePtr test = named_expression();
    if (at_op("=")) fail(peek(), "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    expect_op(":");
    NodeList body = block("'" + keyword.text + "' statement", keyword.line);
    NodeList orelse;
    if (at_word("elif")) {
        orelse.push_back(if_statement());
    } else if (at_word("else")) {
        const Token &e = take();
        expect_op(":");
        orelse = block("'else' statement", e.line);
    }
    return node("If", span(from), {{"test", test}, {"body", body}, {"orelse", orelse}});
}

NodePtr Parser::while_statement() {
    Pos from = start();
    const Token &keyword = take();
    NodePtr test = named_expression();
    if (at_op("=")) fail(peek(), "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    expect_op(":");
    NodeList body = block("'while' statement", keyword.line);
    NodeList orelse;
    if (at_word("else")) {
        const Token &e = take();
        expect_op(":");
        orelse = block("'else' statement", e.line);
    }
    return node("While", span(from), {{"test", test}, {"body", body}, {"orelse", orelse}});
}

NodePtr Parser::for_statement(Pos from, bool is_async) {
    const Token &keyword = take();
    NodePtr target = star_targets();
    expect_word("in");
    NodePtr iter = star_expressions();
    expect_op(":");
    NodeList body = block("'for' statement", keyword.line);
    NodeList orelse;
    if (at_word("else")) {
        const Token &e = take();
        expect_op(":");
        orelse = block("'else' statement", e.line);
    }
    return node(
        is_async ? "AsyncFor" : "For", span(from),
        {{"target", target}, {"iter", iter}, {"body", body}, {"orelse", orelse}, {"type_comment", ast::NoneValue{}}});
}

NodePtr Parser::with_statement(Pos from, bool is_async) {
    const Token &keyword = take();
    NodeList items;
    // `with (a as b, c):` groups the items; `with (a, b) as c:` and `with (a):` do not have to.
    bool grouped = at_op("(") && speculate([&] {
                       take();
                       NodeList attempt;
                       do {
                           if (!attempt.empty() && at_op(")")) break;
                           attempt.push_back(with_item());
                       } while (accept_op(","));
                       expect_closing(")");
                       if (!at_op(":")) fail(peek(), "expected ':'");
                       items = std::move(attempt);
                   });
    if (!grouped) {
        do items.push_back(with_item());
        while (accept_op(","));
    }
    expect_op(":");
    NodeList body = block("'with' statement", keyword.line);
    return node(is_async ? "AsyncWith" : "With", span(from),
                {{"items", items}, {"body", body}, {"type_comment", ast::NoneValue{}}});
}

NodePtr Parser::with_item() {
    NodePtr context = expression();
    NodePtr vars;
    if (accept_word("as")) {
        vars = star_target();
        if (!at_op(",") && !at_op(")") && !at_op(":")) fail_invalid(peek());
    }
    return node_noloc("withitem", {{"context_expr", context}, {"optional_vars", opt(vars)}});
}

NodePtr Parser::try_statement() {
    Pos from = start();
    const Token &keyword = take();
    expect_op(":");
    NodeList body = block("'try' statement", keyword.line);
    NodeList handlers;
    bool star = false;
    while (at_word("except")) {
        Pos handler_from = start();
        const Token &except = take();
        bool this_star = accept_op("*");
        if (!handlers.empty() && this_star != star)
            fail(except, "cannot have both 'except' and 'except*' on the same 'try'");
        star = this_star;
        NodePtr type;
        Value name_value = ast::NoneValue{};
        if (!at_op(":")) {
            type = expression();
            if (at_op(",")) fail_at(type->loc, "multiple exception types must be parenthesized");
            if (accept_word("as")) name_value = name();
        } else if (star) {
            fail(peek(), "expected one or more exception types");
        }
        expect_op(":");
        NodeList handler_body = block(star ? "'except*' statement" : "'except' statement", except.line);
        handlers.push_back(node("ExceptHandler", span(handler_from),
                                {{"type", opt(type)}, {"name", name_value}, {"body", handler_body}}));
    }
    NodeList orelse, finalbody;
    if (!handlers.empty() && at_word("else")) {
        const Token &e = take();
        expect_op(":");
        orelse = block("'else' statement", e.line);
    }
    if (at_word("finally")) {
        const Token &f = take();
        expect_op(":");
        finalbody = block("'finally' statement", f.line);
    }
    if (handlers.empty() && finalbody.empty()) fail(peek(), "expected 'except' or 'finally' block");
    return node(star ? "TryStar" : "Try", span(from),
                {{"body", body}, {"handlers", handlers}, {"orelse", orelse}, {"finalbody", finalbody}});
}

NodePtr Parser::function_def(Pos from, bool is_async, NodeList decorators) {
    const Token &keyword = take();
    std::string id = name();
    if (!at_op("(")) fail(peek(), "expected '('");
    take();
    NodePtr args = parameters(true, ")");
    expect_closing(")");
    NodePtr returns = accept_op("->") ? expression() : nullptr;
    expect_op(":");
    NodeList body = block("function definition", keyword.line);
    return node(is_async ? "AsyncFunctionDef" : "FunctionDef", span(from),
                {{"name", id},
                 {"args", args},
                 {"body", body},
                 {"decorator_list", decorators},
                 {"returns", opt(returns)},
                 {"type_comment", ast::NoneValue{}}});
}

NodePtr Parser::class_def(NodeList decorators) {
    Pos from = start();
    const Token &keyword = take();
    std::string id = name();
    CallArgs bases;
    if (at_op("(")) {
        Pos open = start();
        take();
        bases = call_arguments(open, false);
        expect_closing(")");
    }
    expect_op(":");
    NodeList body = block("class definition", keyword.line);
    return node("ClassDef", span(from),
                {{"name", id},
                 {"bases", bases.args},
                 {"keywords", bases.keywords},
                 {"body", body},
                 {"decorator_list", decorators}});
}

// ('@' named_expression NEWLINE)+ then a def, async def or class, which starts the node.
NodePtr Parser::decorated() {
    NodeList decorators;
    while (accept_op("@")) {
        decorators.push_back(named_expression());
        if (peek().kind != Tok::Newline) fail_invalid(peek());
        take();
    }
    Pos from = start();
    if (at_word("def")) return function_def(from, false, decorators);
    if (at_word("class")) return class_def(decorators);
    if (at_word("async") && at_word("def", 1)) {
        take();
        return function_def(from, true, decorators);
    }
    fail_invalid(peek());
}

// 'match' is a soft keyword: the statement is a match only when `match <subject>:` ends the line;
// otherwise (`match = 1`, `match(x)`) it is an ordinary statement and this returns null.
NodePtr Parser::match_statement() {
    Pos from = start();
    const Token &keyword = peek();
    NodePtr subject;
    bool is_match = speculate([&] {
        take();
        Pos subject_from = start();
        NodePtr first = star_named_expression();
        if (at_op(",")) {
            NodeList elts{first};
            while (accept_op(",")) {
                if (at_op(":")) break;
                elts.push_back(star_named_expression());
            }
            first = node("Tuple", span(subject_from), {{"elts", elts}, {"ctx", node_noloc("Load")}});
        }
        if (!at_op(":") || peek(1).kind != Tok::Newline) fail(peek(), "expected ':'");
        subject = first;
    });
    if (!is_match) return nullptr;
    take();
    take();
    if (peek().kind != Tok::Indent)
        fail(peek(), "expected an indented block after 'match' statement on line " + std::to_string(keyword.line));
    take();
    NodeList cases;
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) cases.push_back(match_case());
    take();
    return node("Match", span(from), {{"subject", subject}, {"cases", cases}});
}

}  // namespace tad::frontend
