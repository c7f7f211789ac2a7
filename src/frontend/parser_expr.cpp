// Expressions, from star_expressions down to atoms. Every node spans from the first token its
// rule consumed to the last one, so `(a) + b` starts at the parenthesis while the Name `a` inside
// does not: a parenthesized group returns the inner node untouched, as in CPython.
#include "frontend/parser_internal.h"

namespace tad::frontend {

namespace {

struct OpKind {
    const char *op;
    const char *kind;
};

// Binary operator levels, loosest first.
const std::vector<std::vector<OpKind>> kBinaryLevels = {
    {{"|", "BitOr"}},
    {{"^", "BitXor"}},
    {{"&", "BitAnd"}},
    {{"<<", "LShift"}, {">>", "RShift"}},
    {{"+", "Add"}, {"-", "Sub"}},
    {{"*", "Mult"}, {"/", "Div"}, {"//", "FloorDiv"}, {"%", "Mod"}, {"@", "MatMult"}},
};

const char *find_op(const std::vector<OpKind> &ops, const Token &t) {
    if (t.kind != Tok::Op) return nullptr;
    for (const OpKind &o : ops)
        if (t.text == o.op) return o.kind;
    return nullptr;
}

NodePtr load() { return node_noloc("Load"); }

}  // namespace

// star_expressions: star_expression (',' star_expression)* [','], a Tuple when there is a comma.
NodePtr Parser::star_expressions() {
    Pos from = start();
    NodePtr first = star_expression();
    if (!at_op(",")) return first;
    NodeList elts{first};
    while (accept_op(",")) {
        if (!starts_expression()) break;
        elts.push_back(star_expression());
    }
    return node("Tuple", span(from), {{"elts", elts}, {"ctx", load()}});
}

NodePtr Parser::star_expression() {
    if (!at_op("*")) return expression();
    Pos from = start();
    take();
    NodePtr value = binary(0);
    return node("Starred", span(from), {{"value", value}, {"ctx", load()}});
}

NodePtr Parser::star_named_expression() {
    if (!at_op("*")) return named_expression();
    Pos from = start();
    take();
    NodePtr value = binary(0);
    return node("Starred", span(from), {{"value", value}, {"ctx", load()}});
}

NodePtr Parser::named_expression() {
    if (at_name() && at_op(":=", 1)) {
        Pos from = start();
        const Token &t = take();
        NodePtr target = node("Name", loc_of(t), {{"id", t.text}, {"ctx", node_noloc("Store")}});
        take();
        NodePtr value = expression();
        return node("NamedExpr", span(from), {{"target", target}, {"value", value}});
    }
    NodePtr e = expression();
    if (at_op(":=")) fail_at(e->loc, "cannot use assignment expressions with " + describe(*e));
    return e;
}

NodePtr Parser::expression() {
    Nest nest(*this);
    if (at_word("lambda")) return lambda();
    Pos from = start();
    NodePtr body = disjunction();
    if (!accept_word("if")) return body;
    NodePtr test = disjunction();
    if (!accept_word("else")) fail(peek(), "expected 'else' after 'if' expression");
    NodePtr orelse = expression();
    return node("IfExp", span(from), {{"test", test}, {"body", body}, {"orelse", orelse}});
}

NodePtr Parser::yield_or_star_expressions() { return at_word("yield") ? yield_expression() : star_expressions(); }

NodePtr Parser::yield_expression() {
    Pos from = start();
    take();
    if (accept_word("from")) {
        NodePtr value = expression();
        return node("YieldFrom", span(from), {{"value", value}});
    }
    NodePtr value = starts_expression() ? star_expressions() : nullptr;
    return node("Yield", span(from), {{"value", opt(value)}});
}

NodePtr Parser::lambda() {
    Pos from = start();
    take();
    NodePtr args = parameters(false, ":");
    expect_op(":");
    NodePtr body = expression();
    return node("Lambda", span(from), {{"args", args}, {"body", body}});
}

// disjunction: conjunction ('or' conjunction)*, conjunction: inversion ('and' inversion)*. Both
// levels are parsed here, without a call per level, to keep deeply nested expressions shallow.
NodePtr Parser::disjunction() {
    Pos from = start();
    NodeList alternatives;
    do {
        Pos and_from = start();
        NodeList operands{inversion()};
        while (accept_word("and")) operands.push_back(inversion());
        alternatives.push_back(operands.size() == 1
                                   ? operands[0]
                                   : node("BoolOp", span(and_from), {{"op", node_noloc("And")}, {"values", operands}}));
    } while (accept_word("or"));
    if (alternatives.size() == 1) return alternatives[0];
    return node("BoolOp", span(from), {{"op", node_noloc("Or")}, {"values", alternatives}});
}

// inversion: 'not'* comparison; comparison: bitwise_or (compare_op bitwise_or)*
NodePtr Parser::inversion() {
    std::vector<Pos> nots;
    while (at_word("not")) {
        nots.push_back(start());
        take();
    }
    Pos from = start();
    NodePtr e = binary(0);
    NodeList ops;
    NodeList comparators;
    static const std::vector<OpKind> symbols = {{"==", "Eq"},  {"!=", "NotEq"}, {"<", "Lt"},
                                                {"<=", "LtE"}, {">", "Gt"},     {">=", "GtE"}};
    for (;;) {
        const char *kind = find_op(symbols, peek());
        int words = 1;
        if (at_word("in")) {
            kind = "In";
        } else if (at_word("not") && at_word("in", 1)) {
            kind = "NotIn";
            words = 2;
        } else if (at_word("is")) {
            bool negated = at_word("not", 1);
            kind = negated ? "IsNot" : "Is";
            words = negated ? 2 : 1;
        }
        if (!kind) break;
        for (int i = 0; i < words; ++i) take();
        ops.push_back(node_noloc(kind));
        comparators.push_back(binary(0));
    }
    if (!ops.empty()) e = node("Compare", span(from), {{"left", e}, {"ops", ops}, {"comparators", comparators}});
    for (auto it = nots.rbegin(); it != nots.rend(); ++it)
        e = node("UnaryOp", span(*it), {{"op", node_noloc("Not")}, {"operand", e}});
    return e;
}

// Binary operators by precedence climbing: operands bind to operators of level `min_level` or
// tighter, left to right.
NodePtr Parser::binary(int min_level) {
    Pos from = start();
    NodePtr left = factor();
    for (;;) {
        int level = min_level;
        const char *kind = nullptr;
        while (level < static_cast<int>(kBinaryLevels.size()) && !(kind = find_op(kBinaryLevels[level], peek())))
            ++level;
        if (!kind) return left;
        take();
        NodePtr right = binary(level + 1);
        left = node("BinOp", span(from), {{"left", left}, {"op", node_noloc(kind)}, {"right", right}});
    }
}

// factor: ('+' | '-' | '~')* power
NodePtr Parser::factor() {
    static const std::vector<OpKind> unary = {{"+", "UAdd"}, {"-", "USub"}, {"~", "Invert"}};
    std::vector<std::pair<Pos, const char *>> ops;
    while (const char *kind = find_op(unary, peek())) {
        ops.emplace_back(start(), kind);
        take();
    }
    NodePtr e = power();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
        e = node("UnaryOp", span(it->first), {{"op", node_noloc(it->second)}, {"operand", e}});
    return e;
}

// power: await_primary ['**' factor]
NodePtr Parser::power() {
    Pos from = start();
    NodePtr base;
    if (accept_word("await")) {
        NodePtr value = primary();
        base = node("Await", span(from), {{"value", value}});
    } else {
        base = primary();
    }
    if (!accept_op("**")) return base;
    Nest nest(*this);
    NodePtr exponent = factor();
    return node("BinOp", span(from), {{"left", base}, {"op", node_noloc("Pow")}, {"right", exponent}});
}

NodePtr Parser::primary() {
    Pos from = start();
    NodePtr e = atom();
    for (;;) {
        if (accept_op(".")) {
            std::string attr = name();
            e = node("Attribute", span(from), {{"value", e}, {"attr", attr}, {"ctx", load()}});
        } else if (at_op("(")) {
            e = call(e, from);
        } else if (accept_op("[")) {
            NodePtr slice = subscript_slices();
            expect_closing("]");
            e = node("Subscript", span(from), {{"value", e}, {"slice", slice}, {"ctx", load()}});
        } else {
            return e;
        }
    }
}

NodePtr Parser::atom() {
    const Token &t = peek();
    switch (t.kind) {
    case Tok::Name: {
        Value constant;
        if (t.text == "None") {
            constant = ast::NoneValue{};
        } else if (t.text == "True" || t.text == "False") {
            constant = t.text == "True";
        } else if (is_keyword(t.text)) {
            fail_invalid(t);
        } else {
            take();
            return node("Name", loc_of(t), {{"id", t.text}, {"ctx", load()}});
        }
        take();
        return node("Constant", loc_of(t), {{"value", constant}, {"kind", ast::NoneValue{}}});
    }
    case Tok::Number: return number();
    case Tok::String: return strings();
    case Tok::Op:
        if (t.text == "(") return paren_atom();
        if (t.text == "[") return list_atom();
        if (t.text == "{") return brace_atom();
        if (t.text == "...") {
            take();
            return node("Constant", loc_of(t), {{"value", ast::EllipsisValue{}}, {"kind", ast::NoneValue{}}});
        }
        break;
    default: break;
    }
    fail_invalid(t);
}

// '(' ... ')': empty tuple, (yield), group, generator expression or tuple.
NodePtr Parser::paren_atom() {
    Pos from = start();
    take();
    if (accept_op(")")) return node("Tuple", span(from), {{"elts", NodeList{}}, {"ctx", load()}});
    if (at_word("yield")) {
        NodePtr y = yield_expression();
        expect_closing(")");
        return y;
    }
    NodePtr first = star_named_expression();
    if (at_comprehension()) {
        if (first->is("Starred")) fail_at(first->loc, "iterable unpacking cannot be used in comprehension");
        NodeList generators = comprehensions();
        expect_closing(")");
        return node("GeneratorExp", span(from), {{"elt", first}, {"generators", generators}});
    }
    if (!at_op(",")) {
        expect_closing(")");
        if (first->is("Starred")) fail_at(first->loc, "cannot use starred expression here");
        return first;
    }
    NodeList elts{first};
    while (accept_op(",")) {
        if (at_op(")")) break;
        elts.push_back(star_named_expression());
    }
    expect_closing(")");
    return node("Tuple", span(from), {{"elts", elts}, {"ctx", load()}});
}

NodePtr Parser::list_atom() {
    Pos from = start();
    take();
    if (accept_op("]")) return node("List", span(from), {{"elts", NodeList{}}, {"ctx", load()}});
    NodePtr first = star_named_expression();
    if (at_comprehension()) {
        if (first->is("Starred")) fail_at(first->loc, "iterable unpacking cannot be used in comprehension");
        NodeList generators = comprehensions();
        expect_closing("]");
        return node("ListComp", span(from), {{"elt", first}, {"generators", generators}});
    }
    NodeList elts{first};
    while (accept_op(",")) {
        if (at_op("]")) break;
        elts.push_back(star_named_expression());
    }
    expect_closing("]");
    return node("List", span(from), {{"elts", elts}, {"ctx", load()}});
}

// '{' ... '}': dict, set, or their comprehensions.
NodePtr Parser::brace_atom() {
    Pos from = start();
    take();
    if (accept_op("}")) return node("Dict", span(from), {{"keys", NodeList{}}, {"values", NodeList{}}});
    if (at_op("**")) {
        const Token &star = take();
        NodePtr value = binary(0);
        if (at_comprehension()) fail(star, "dict unpacking cannot be used in dict comprehension");
        return dict_rest(from, nullptr, value);
    }
    Pos first_from = start();
    NodePtr first = star_named_expression();
    if (accept_op(":")) {
        bool bare_walrus =
            first->is("NamedExpr") && first->loc.line == first_from.line && first->loc.col == first_from.col;
        if (first->is("Starred") || bare_walrus) fail_at(first->loc, "invalid syntax");
        NodePtr value = expression();
        if (!at_comprehension()) return dict_rest(from, first, value);
        NodeList generators = comprehensions();
        expect_closing("}");
        return node("DictComp", span(from), {{"key", first}, {"value", value}, {"generators", generators}});
    }
    if (at_comprehension()) {
        if (first->is("Starred")) fail_at(first->loc, "iterable unpacking cannot be used in comprehension");
        NodeList generators = comprehensions();
        expect_closing("}");
        return node("SetComp", span(from), {{"elt", first}, {"generators", generators}});
    }
    NodeList elts{first};
    while (accept_op(",")) {
        if (at_op("}")) break;
        elts.push_back(star_named_expression());
    }
    expect_closing("}");
    return node("Set", span(from), {{"elts", elts}});
}

// The rest of a dict display after its first item; a null key stands for `**value`.
NodePtr Parser::dict_rest(Pos from, NodePtr key, NodePtr value) {
    NodeList keys{std::move(key)};
    NodeList values{std::move(value)};
    while (accept_op(",")) {
        if (at_op("}")) break;
        if (accept_op("**")) {
            keys.push_back(nullptr);
            values.push_back(binary(0));
            continue;
        }
        keys.push_back(expression());
        if (!accept_op(":")) fail(peek(), "':' expected after dictionary key");
        values.push_back(expression());
    }
    expect_closing("}");
    return node("Dict", span(from), {{"keys", keys}, {"values", values}});
}

bool Parser::at_comprehension() { return at_word("for") || (at_word("async") && at_word("for", 1)); }

// for_if_clauses: ('async'? 'for' star_targets 'in' disjunction ('if' disjunction)*)+
NodeList Parser::comprehensions() {
    NodeList generators;
    while (at_comprehension()) {
        int64_t is_async = accept_word("async") ? 1 : 0;
        take();
        NodePtr target = star_targets();
        expect_word("in");
        NodePtr iter = disjunction();
        NodeList ifs;
        while (accept_word("if")) ifs.push_back(disjunction());
        generators.push_back(
            node_noloc("comprehension", {{"target", target}, {"iter", iter}, {"ifs", ifs}, {"is_async", is_async}}));
    }
    return generators;
}

// slices: a single slice, or a Tuple of them when there is a comma or a starred item.
NodePtr Parser::subscript_slices() {
    Pos from = start();
    NodePtr first = slice_item();
    if (!at_op(",") && !first->is("Starred")) return first;
    NodeList elts{first};
    while (accept_op(",")) {
        if (at_op("]")) break;
        elts.push_back(slice_item());
    }
    return node("Tuple", span(from), {{"elts", elts}, {"ctx", load()}});
}

NodePtr Parser::slice_item() {
    Pos from = start();
    if (accept_op("*")) {
        NodePtr value = expression();
        return node("Starred", span(from), {{"value", value}, {"ctx", load()}});
    }
    NodePtr lower;
    if (!at_op(":")) {
        lower = named_expression();
        if (!at_op(":")) return lower;
        bool bare_walrus = lower->is("NamedExpr") && lower->loc.line == from.line && lower->loc.col == from.col;
        if (bare_walrus) fail_invalid(peek());
    }
    take();
    auto ends = [&] { return at_op(":") || at_op("]") || at_op(","); };
    NodePtr upper = ends() ? nullptr : expression();
    NodePtr step;
    if (accept_op(":")) step = ends() ? nullptr : expression();
    return node("Slice", span(from), {{"lower", opt(lower)}, {"upper", opt(upper)}, {"step", opt(step)}});
}

NodePtr Parser::call(NodePtr func, Pos from) {
    Pos open = start();
    take();
    CallArgs a = call_arguments(open, true);
    expect_closing(")");
    return node("Call", span(from), {{"func", func}, {"args", a.args}, {"keywords", a.keywords}});
}

}  // namespace tad::frontend
