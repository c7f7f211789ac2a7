// Match statement cases and patterns (PEP 634).
#include "frontend/parser_internal.h"

namespace tad::frontend {

namespace {
bool is_imaginary(const NodePtr &e) {
    const NodePtr &c = e->is("UnaryOp") ? e->node("operand") : e;
    return std::holds_alternative<ast::Imaginary>(*c->find("value"));
}
}  // namespace

// "case" patterns [guard] ':' block
NodePtr Parser::match_case() {
    const Token &keyword = peek();
    if (!keyword.is_word("case")) fail_invalid(keyword);
    take();
    NodePtr pattern = patterns();
    NodePtr guard = accept_word("if") ? named_expression() : nullptr;
    expect_op(":");
    NodeList body = block("'case' statement", keyword.line);
    return node_noloc("match_case", {{"pattern", pattern}, {"guard", opt(guard)}, {"body", body}});
}

// open_sequence_pattern | pattern: `case a, *b:` is a sequence without brackets.
NodePtr Parser::patterns() {
    Pos from = start();
    NodePtr first = maybe_star_pattern();
    if (!at_op(",")) {
        if (first->is("MatchStar")) fail_at(first->loc, "invalid syntax");
        return first;
    }
    NodeList elts{first};
    while (accept_op(",")) {
        if (at_op(":") || at_word("if")) break;
        elts.push_back(maybe_star_pattern());
    }
    return node("MatchSequence", span(from), {{"patterns", elts}});
}

NodePtr Parser::maybe_star_pattern() {
    if (!at_op("*")) return pattern();
    Pos from = start();
    take();
    Value captured = ast::NoneValue{};
    if (!accept_word("_")) captured = name();
    return node("MatchStar", span(from), {{"name", captured}});
}

// or_pattern ['as' NAME]
NodePtr Parser::pattern() {
    Pos from = start();
    NodePtr p = or_pattern();
    if (!accept_word("as")) return p;
    if (at_word("_")) fail(peek(), "cannot use '_' as a target");
    std::string target = name();
    return node("MatchAs", span(from), {{"pattern", p}, {"name", target}});
}

NodePtr Parser::or_pattern() {
    Pos from = start();
    NodePtr first = closed_pattern();
    if (!at_op("|")) return first;
    NodeList alternatives{first};
    while (accept_op("|")) alternatives.push_back(closed_pattern());
    return node("MatchOr", span(from), {{"patterns", alternatives}});
}

NodePtr Parser::closed_pattern() {
    Pos from = start();
    const Token &t = peek();
    if (t.kind == Tok::Number || t.is_op("-")) {
        NodePtr value = signed_number();
        return node("MatchValue", span(from), {{"value", value}});
    }
    if (t.kind == Tok::String) {
        NodePtr value = strings();
        return node("MatchValue", span(from), {{"value", value}});
    }
    if (t.kind == Tok::Name) return name_pattern(from);
    if (t.is_op("(")) return group_pattern(from);
    if (t.is_op("[")) {
        take();
        NodeList elts;
        while (!at_op("]")) {
            elts.push_back(maybe_star_pattern());
            if (!accept_op(",")) break;
        }
        expect_closing("]");
        return node("MatchSequence", span(from), {{"patterns", elts}});
    }
    if (t.is_op("{")) return mapping_pattern();
    fail_invalid(t);
}

// A pattern starting with a NAME: None / True / False, a dotted value, a class pattern, or a
// capture (`_` captures nothing).
NodePtr Parser::name_pattern(Pos from) {
    const Token &t = peek();
    if (t.text == "None" || t.text == "True" || t.text == "False") {
        take();
        Value v = ast::NoneValue{};
        if (t.text != "None") v = t.text == "True";
        return node("MatchSingleton", loc_of(t), {{"value", v}});
    }
    if (is_keyword(t.text)) fail_invalid(t);
    if (at_op(".", 1) || at_op("(", 1)) {
        NodePtr cls = name_or_attr();
        if (at_op("(")) return class_pattern(cls, from);
        return node("MatchValue", span(from), {{"value", cls}});
    }
    take();
    Value captured = ast::NoneValue{};
    if (t.text != "_") captured = t.text;
    return node("MatchAs", loc_of(t), {{"pattern", ast::NoneValue{}}, {"name", captured}});
}

// '(' pattern ')' is the pattern itself; '(' ')' and '(' pattern ',' ... ')' are sequences.
NodePtr Parser::group_pattern(Pos from) {
    take();
    NodeList elts;
    if (!at_op(")")) {
        NodePtr first = maybe_star_pattern();
        if (accept_op(")")) {
            if (first->is("MatchStar")) fail_at(first->loc, "invalid syntax");
            return first;
        }
        if (!at_op(",")) expect_closing(")");
        elts.push_back(first);
        while (accept_op(",")) {
            if (at_op(")")) break;
            elts.push_back(maybe_star_pattern());
        }
    }
    expect_closing(")");
    return node("MatchSequence", span(from), {{"patterns", elts}});
}

// '{' (key ':' pattern ',')* ['**' NAME] '}'
NodePtr Parser::mapping_pattern() {
    Pos from = start();
    take();
    NodeList keys, values;
    Value rest = ast::NoneValue{};
    while (!at_op("}")) {
        if (accept_op("**")) {
            rest = name();
            accept_op(",");
            break;
        }
        keys.push_back(mapping_key());
        expect_op(":");
        values.push_back(pattern());
        if (!accept_op(",")) break;
    }
    expect_closing("}");
    return node("MatchMapping", span(from), {{"keys", keys}, {"patterns", values}, {"rest", rest}});
}

// A mapping pattern's key: a literal or a dotted name, as an expression.
NodePtr Parser::mapping_key() {
    const Token &t = peek();
    if (t.kind == Tok::Number || t.is_op("-")) return signed_number();
    if (t.kind == Tok::String) return strings();
    if (t.is_word("None") || t.is_word("True") || t.is_word("False")) return atom();
    if (at_name() && at_op(".", 1)) return name_or_attr();
    fail_invalid(t);
}

// NAME ('.' NAME)*, as Name or Attribute nodes in Load context.
NodePtr Parser::name_or_attr() {
    Pos from = start();
    const Token &t = take();
    NodePtr e = node("Name", loc_of(t), {{"id", t.text}, {"ctx", node_noloc("Load")}});
    while (accept_op(".")) {
        std::string attr = name();
        e = node("Attribute", span(from), {{"value", e}, {"attr", attr}, {"ctx", node_noloc("Load")}});
    }
    return e;
}

// cls '(' [patterns] [NAME '=' pattern, ...] ')'
NodePtr Parser::class_pattern(NodePtr cls, Pos from) {
    take();
    NodeList positional, keyword_patterns;
    ast::StringList keyword_names;
    while (!at_op(")")) {
        if (at_name() && at_op("=", 1)) {
            keyword_names.push_back(take().text);
            take();
            keyword_patterns.push_back(pattern());
        } else {
            if (!keyword_names.empty()) fail(peek(), "positional patterns follow keyword patterns");
            positional.push_back(pattern());
        }
        if (!accept_op(",")) break;
    }
    expect_closing(")");
    return node(
        "MatchClass", span(from),
        {{"cls", cls}, {"patterns", positional}, {"kwd_attrs", keyword_names}, {"kwd_patterns", keyword_patterns}});
}

// ['-'] NUMBER [('+' | '-') IMAGINARY]: the literals a value pattern may hold.
NodePtr Parser::signed_number() {
    Pos from = start();
    NodePtr value;
    if (accept_op("-")) {
        if (peek().kind != Tok::Number) fail_invalid(peek());
        NodePtr operand = number();
        value = node("UnaryOp", span(from), {{"op", node_noloc("USub")}, {"operand", operand}});
    } else {
        if (peek().kind != Tok::Number) fail_invalid(peek());
        value = number();
    }
    if (!at_op("+") && !at_op("-")) return value;
    const char *op = at_op("+") ? "Add" : "Sub";
    if (is_imaginary(value)) fail_at(value->loc, "real number required in complex literal");
    take();
    if (peek().kind != Tok::Number) fail_invalid(peek());
    NodePtr imaginary = number();
    if (!is_imaginary(imaginary)) fail_at(imaginary->loc, "imaginary number required in complex literal");
    return node("BinOp", span(from), {{"left", value}, {"op", node_noloc(op)}, {"right", imaginary}});
}

}  // namespace tad::frontend
