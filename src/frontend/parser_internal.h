// The recursive-descent parser behind parse_source, split over parser_*.cpp by grammar area. It
// follows CPython 3.11's PEG grammar (Grammar/python.gram) rule by rule where the result or the
// node locations depend on it. Tokens are read on demand; before reporting a syntax error the
// parser reads the rest of the file, so that a lexical error anywhere in it wins, as in CPython.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "support/error.h"

namespace tad::frontend {

using ast::Loc;
using ast::NodeList;
using ast::NodePtr;
using ast::Value;

struct Pos {
    int line;
    int col;
};

using Fields = std::initializer_list<std::pair<const char *, Value>>;

// A node with a location and its fields in CPython's order.
NodePtr node(const char *kind, const Loc &loc, Fields fields);
// A node without location (arguments, comprehension, withitem, match_case, Module, operators).
NodePtr node_noloc(const char *kind, Fields fields = {});
// None for a null pointer.
Value opt(const NodePtr &n);
// The ast class name used in diagnostics about `e` ("function call", "literal", ...).
std::string describe(const ast::Node &e);

// A string being assembled from adjacent literals (CPython's FstringParser state).
struct StringParts {
    NodeList values;  // Constant and FormattedValue nodes so far
    std::string pending;  // literal text not yet made into a Constant
    bool fstring = false;  // an f-string took part: the result is a JoinedStr
};

// The str Constant for `value`, spanning `first` to `last`; kind "u" when `first` starts with u.
NodePtr string_constant(const std::string &value, const Token &first, const Token &last);
// Turns the pending text into a Constant at the end of `parts.values`.
void flush_pending(StringParts &parts, const Token &first, const Token &last);
// The Constant (no f-string involved) or JoinedStr for `parts`.
NodePtr finish_string(StringParts &parts, const Token &first, const Token &last);

class Parser {
public:
    // `text` must outlive the parser.
    Parser(const std::string &text, Origin origin);

    // file: [statements] ENDMARKER
    NodePtr module();
    // An f-string replacement field, tokenized as "(" + text + ")": star_expressions ENDMARKER.
    NodePtr fstring_replacement();

private:
    // Tokens (parser.cpp).
    const Token &peek(size_t ahead = 0);
    const Token &take();
    const Token &last() const { return toks_[pos_ - 1]; }
    bool at_op(const char *op, size_t ahead = 0) { return peek(ahead).is_op(op); }
    // A keyword or soft keyword spelled `word`.
    bool at_word(const char *word, size_t ahead = 0) { return peek(ahead).is_word(word); }
    bool at_name(size_t ahead = 0);  // a NAME that is not a keyword
    bool accept_op(const char *op);
    bool accept_word(const char *word);
    void expect_op(const char *op);
    void expect_word(const char *word);
    void expect_closing(const char *bracket);
    std::string name();
    Pos start() { return {peek().line, peek().col}; }
    Loc span(Pos from) const;
    static Loc loc_of(const Token &t) { return {t.line, t.col, t.end_line, t.end_col}; }
    // A syntax error at `at`, unless the rest of the file holds a lexical error: that one is
    // reported instead, as CPython does.
    [[noreturn]] void fail(const Token &at, const std::string &what);
    [[noreturn]] void fail_at(const Loc &at, const std::string &what);
    [[noreturn]] void fail_invalid(const Token &at);  // "invalid syntax"
    void read_to_end();
    bool starts_expression(size_t ahead = 0);
    void check_height(const NodePtr &root);
    // Runs `attempt`; on a syntax error (not a lexical one) rewinds and returns false.
    template <typename F> bool speculate(F attempt);

    // Targets (parser.cpp).
    void set_context(const NodePtr &e, const char *ctx);
    void check_assign_target(const NodePtr &e);
    NodePtr star_targets();
    NodePtr star_target();

    // Statements (parser_stmt.cpp).
    void statement(NodeList &out);
    void simple_statements(NodeList &out);
    NodePtr simple_statement();
    NodePtr expression_statement();
    NodePtr import_statement();
    NodePtr from_import_statement();
    NodePtr del_statement();
    NodeList block(const std::string &after, int line);
    NodePtr compound_statement();
    NodePtr if_statement();
    NodePtr while_statement();
    NodePtr for_statement(Pos from, bool is_async);
    NodePtr with_statement(Pos from, bool is_async);
    NodePtr with_item();
    NodePtr try_statement();
    NodePtr function_def(Pos from, bool is_async, NodeList decorators);
    NodePtr class_def(NodeList decorators);
    NodePtr decorated();
    NodePtr match_statement();

    // Expressions (parser_expr.cpp).
    NodePtr star_expressions();
    NodePtr star_expression();
    NodePtr star_named_expression();
    NodePtr named_expression();
    NodePtr expression();
    NodePtr yield_or_star_expressions();
    NodePtr yield_expression();
    NodePtr lambda();
    NodePtr disjunction();
    NodePtr inversion();
    NodePtr binary(int min_level);
    NodePtr factor();
    NodePtr power();
    NodePtr primary();
    NodePtr atom();
    NodePtr paren_atom();
    NodePtr list_atom();
    NodePtr brace_atom();
    NodePtr dict_rest(Pos from, NodePtr key, NodePtr value);
    bool at_comprehension();
    NodeList comprehensions();
    NodePtr subscript_slices();
    NodePtr slice_item();
    NodePtr call(NodePtr func, Pos from);

    // Arguments and parameters (parser_args.cpp).
    struct CallArgs {
        NodeList args;
        NodeList keywords;
    };
    CallArgs call_arguments(Pos open, bool allow_genexp);
    NodePtr generator_argument(const NodePtr &elt, Pos open, const CallArgs &before);
    void check_positional_argument(const NodePtr &e, bool keyword_seen, bool keyword_unpack_seen);
    struct ParamLists;
    NodePtr parameters(bool annotated, const char *close);
    void positional_only_marker(const Token &slash, ParamLists &p);
    void star_parameter(const Token &star, bool annotated, const char *close, ParamLists &p);
    void named_parameter(bool annotated, ParamLists &p);
    NodePtr parameter(bool annotated, bool star_annotation);

    // Literals (parser_literal.cpp, parser_fstring.cpp). Offsets index the token's text.
    NodePtr number();
    NodePtr strings();
    std::string decode_str(const Token &t, size_t begin, size_t end);
    uint32_t hex_escape(const Token &t, char letter, size_t &i, size_t end);
    std::string decode_bytes(const Token &t, size_t begin, size_t end);
    [[noreturn]] void fail_literal(const Token &t, const std::string &what);
    void fstring_parts(StringParts &parts, const Token &t, size_t &pos, size_t end, bool raw, int depth,
                       const Token &first, const Token &last);
    std::string fstring_literal(const Token &t, size_t &pos, size_t end, bool raw, int depth, bool &doubled_brace);
    NodePtr fstring_field(const Token &t, size_t &pos, size_t end, bool raw, int depth, const Token &first,
                          const Token &last, std::string &debug_text);
    size_t fstring_expression_end(const Token &t, size_t pos, size_t end);
    size_t fstring_string_end(const Token &t, size_t pos, size_t end);
    void fstring_close_bracket(const Token &t, char ch, std::string &open);
    NodePtr fstring_expression(const Token &t, size_t brace, size_t begin, size_t end);

    // Patterns (parser_pattern.cpp).
    NodePtr match_case();
    NodePtr patterns();
    NodePtr pattern();
    NodePtr or_pattern();
    NodePtr closed_pattern();
    NodePtr name_pattern(Pos from);
    NodePtr group_pattern(Pos from);
    NodePtr maybe_star_pattern();
    NodePtr mapping_pattern();
    NodePtr mapping_key();
    NodePtr class_pattern(NodePtr cls, Pos from);
    NodePtr signed_number();
    NodePtr name_or_attr();

    // Depth of nested expressions; bounded so hostile input cannot exhaust the stack.
    struct Nest {
        explicit Nest(Parser &p);
        ~Nest() { --parser.depth_; }
        Parser &parser;
    };

    Lexer lexer_;
    bool lexer_failed_ = false;
    std::deque<Token> toks_;  // tokens read so far; a deque keeps references valid
    size_t pos_ = 0;
    int depth_ = 0;
};

template <typename F> bool Parser::speculate(F attempt) {
    size_t saved = pos_;
    try {
        attempt();
        return true;
    } catch (const Error &) {
        if (lexer_failed_) throw;
        pos_ = saved;
        return false;
    }
}

}  // namespace tad::frontend
