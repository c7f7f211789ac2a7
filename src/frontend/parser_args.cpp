// Call arguments (calls and class bases) and parameter lists (def and lambda).
#include "frontend/parser_internal.h"

namespace tad::frontend {

// The arguments after an opening parenthesis at `open`, up to (not including) the closing one.
// With `allow_genexp`, a sole unparenthesized generator expression is the argument and spans the
// call's parentheses: `f(x for x in y)`.
Parser::CallArgs Parser::call_arguments(Pos open, bool allow_genexp) {
    CallArgs out;
    bool keyword_seen = false;
    bool keyword_unpack_seen = false;
    while (!at_op(")")) {
        Pos from = start();
        if (accept_op("*")) {
            NodePtr value = expression();
            if (keyword_unpack_seen)
                fail_at(span(from), "iterable argument unpacking follows keyword argument unpacking");
            out.args.push_back(node("Starred", span(from), {{"value", value}, {"ctx", node_noloc("Load")}}));
        } else if (accept_op("**")) {
            NodePtr value = expression();
            out.keywords.push_back(node("keyword", span(from), {{"arg", ast::NoneValue{}}, {"value", value}}));
            keyword_unpack_seen = true;
        } else if (at_name() && at_op("=", 1)) {
            std::string arg = take().text;
            take();
            NodePtr value = expression();
            out.keywords.push_back(node("keyword", span(from), {{"arg", arg}, {"value", value}}));
            keyword_seen = true;
        } else {
            NodePtr e = named_expression();
            if (allow_genexp && at_comprehension()) {
                out.args.push_back(generator_argument(e, open, out));
                return out;
            }
            check_positional_argument(e, keyword_seen, keyword_unpack_seen);
            out.args.push_back(e);
        }
        if (!accept_op(",")) break;
    }
    return out;
}

// `f(elt for ...)`: the generator expression, spanning the call's parentheses, must be the only
// argument.
NodePtr Parser::generator_argument(const NodePtr &elt, Pos open, const CallArgs &before) {
    if (!before.args.empty() || !before.keywords.empty())
        fail_at(elt->loc, "Generator expression must be parenthesized");
    NodeList generators = comprehensions();
    if (!at_op(")")) fail_at(elt->loc, "Generator expression must be parenthesized");
    const Token &close = peek();
    Loc loc{open.line, open.col, close.end_line, close.end_col};
    return node("GeneratorExp", loc, {{"elt", elt}, {"generators", generators}});
}

// A positional argument `e` just parsed: not the target of a misplaced '=', nor after keywords.
void Parser::check_positional_argument(const NodePtr &e, bool keyword_seen, bool keyword_unpack_seen) {
    if (at_op("=") && e->is("Constant") && describe(*e) != "literal")
        fail_at(e->loc, "cannot assign to " + describe(*e));
    if (at_op("=")) fail_at(e->loc, "expression cannot contain assignment, perhaps you meant \"==\"?");
    if (keyword_unpack_seen) fail_at(e->loc, "positional argument follows keyword argument unpacking");
    if (keyword_seen) fail_at(e->loc, "positional argument follows keyword argument");
}

// What a parameter list has collected so far.
struct Parser::ParamLists {
    NodeList posonly, args, defaults, kwonly, kw_defaults;
    NodePtr vararg, kwarg;
    bool slash_seen = false;
    bool star_seen = false;
    Token star;
};

// Parameters up to `close` (")" for def, ":" for lambda); `annotated` for def.
NodePtr Parser::parameters(bool annotated, const char *close) {
    ParamLists p;
    while (!at_op(close)) {
        const Token &t = peek();
        if (accept_op("/")) {
            positional_only_marker(t, p);
        } else if (accept_op("*")) {
            star_parameter(t, annotated, close, p);
        } else if (accept_op("**")) {
            p.kwarg = parameter(annotated, false);
            if (at_op("=")) fail(peek(), "var-keyword argument cannot have default value");
            if (accept_op(",") && !at_op(close)) fail(peek(), "arguments cannot follow var-keyword argument");
            break;
        } else {
            named_parameter(annotated, p);
        }
        if (!accept_op(",")) break;
    }
    if (p.star_seen && !p.vararg && p.kwonly.empty()) fail(p.star, "named arguments must follow bare *");
    return node_noloc("arguments", {{"posonlyargs", p.posonly},
                                    {"args", p.args},
                                    {"vararg", opt(p.vararg)},
                                    {"kwonlyargs", p.kwonly},
                                    {"kw_defaults", p.kw_defaults},
                                    {"kwarg", opt(p.kwarg)},
                                    {"defaults", p.defaults}});
}

// '/' (the token `slash`, just taken): the parameters so far are positional-only.
void Parser::positional_only_marker(const Token &slash, ParamLists &p) {
    if (p.slash_seen) fail(slash, "/ may appear only once");
    if (p.star_seen) fail(slash, "/ must be ahead of *");
    if (p.args.empty()) fail(slash, "at least one argument must precede /");
    p.posonly = std::move(p.args);
    p.args.clear();
    p.slash_seen = true;
}

// '*' (the token `star`, just taken), bare or with the var-positional parameter.
void Parser::star_parameter(const Token &star, bool annotated, const char *close, ParamLists &p) {
    if (p.star_seen) fail(star, "* argument may appear only once");
    p.star_seen = true;
    p.star = star;
    if (!at_op(",") && !at_op(close)) p.vararg = parameter(annotated, true);
    if (at_op("=")) fail(peek(), "var-positional argument cannot have default value");
}

// NAME [':' expression] ['=' default]: keyword-only after '*'.
void Parser::named_parameter(bool annotated, ParamLists &p) {
    NodePtr a = parameter(annotated, false);
    NodePtr value = accept_op("=") ? expression() : nullptr;
    if (p.star_seen) {
        p.kwonly.push_back(a);
        p.kw_defaults.push_back(value);
        return;
    }
    if (!value && !p.defaults.empty()) fail_at(a->loc, "non-default argument follows default argument");
    if (value) p.defaults.push_back(value);
    p.args.push_back(a);
}

// NAME [':' expression]; `*args: *Ts` (PEP 646) when `star_annotation`.
NodePtr Parser::parameter(bool annotated, bool star_annotation) {
    Pos from = start();
    std::string id = name();
    NodePtr annotation;
    if (annotated && accept_op(":")) {
        Pos star = start();
        if (star_annotation && accept_op("*")) {
            NodePtr value = expression();
            annotation = node("Starred", span(star), {{"value", value}, {"ctx", node_noloc("Load")}});
        } else {
            annotation = expression();
        }
    }
    return node("arg", span(from), {{"arg", id}, {"annotation", opt(annotation)}, {"type_comment", ast::NoneValue{}}});
}

}  // namespace tad::frontend
