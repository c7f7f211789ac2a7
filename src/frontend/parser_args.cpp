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
                if (!out.args.empty() || !out.keywords.empty())
                    fail_at(e->loc, "Generator expression must be parenthesized");
                NodeList generators = comprehensions();
                if (!at_op(")")) fail_at(e->loc, "Generator expression must be parenthesized");
                const Token &close = peek();
                Loc loc{open.line, open.col, close.end_line, close.end_col};
                out.args.push_back(node("GeneratorExp", loc, {{"elt", e}, {"generators", generators}}));
                return out;
            }
            if (at_op("=") && e->is("Constant") && describe(*e) != "literal")
                fail_at(e->loc, "cannot assign to " + describe(*e));
            if (at_op("=")) fail_at(e->loc, "expression cannot contain assignment, perhaps you meant \"==\"?");
            if (keyword_unpack_seen) fail_at(e->loc, "positional argument follows keyword argument unpacking");
            if (keyword_seen) fail_at(e->loc, "positional argument follows keyword argument");
            out.args.push_back(e);
        }
        if (!accept_op(",")) break;
    }
    return out;
}

// Parameters up to `close` (")" for def, ":" for lambda); `annotated` for def.
NodePtr Parser::parameters(bool annotated, const char *close) {
    NodeList posonly, args, defaults, kwonly, kw_defaults;
    NodePtr vararg, kwarg;
    bool slash_seen = false;
    bool star_seen = false;
    Token star;
    while (!at_op(close)) {
        const Token &t = peek();
        if (accept_op("/")) {
            if (slash_seen) fail(t, "/ may appear only once");
            if (star_seen) fail(t, "/ must be ahead of *");
            if (args.empty()) fail(t, "at least one argument must precede /");
            posonly = std::move(args);
            args.clear();
            slash_seen = true;
        } else if (accept_op("*")) {
            if (star_seen) fail(t, "* argument may appear only once");
            star_seen = true;
            star = t;
            if (!at_op(",") && !at_op(close)) vararg = parameter(annotated, true);
            if (at_op("=")) fail(peek(), "var-positional argument cannot have default value");
        } else if (accept_op("**")) {
            kwarg = parameter(annotated, false);
            if (at_op("=")) fail(peek(), "var-keyword argument cannot have default value");
            if (accept_op(",") && !at_op(close)) fail(peek(), "arguments cannot follow var-keyword argument");
            break;
        } else {
            NodePtr a = parameter(annotated, false);
            NodePtr value = accept_op("=") ? expression() : nullptr;
            if (star_seen) {
                kwonly.push_back(a);
                kw_defaults.push_back(value);
            } else {
                if (!value && !defaults.empty()) fail_at(a->loc, "non-default argument follows default argument");
                if (value) defaults.push_back(value);
                args.push_back(a);
            }
        }
        if (!accept_op(",")) break;
    }
    if (star_seen && !vararg && kwonly.empty()) fail(star, "named arguments must follow bare *");
    return node_noloc("arguments", {{"posonlyargs", posonly},
                                    {"args", args},
                                    {"vararg", opt(vararg)},
                                    {"kwonlyargs", kwonly},
                                    {"kw_defaults", kw_defaults},
                                    {"kwarg", opt(kwarg)},
                                    {"defaults", defaults}});
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
