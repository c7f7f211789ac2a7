// ir::parse: the printer's text form back to a Function (the grammar is print()'s output; see
// printer.cpp). Lines whose first non-blank characters are `//` are comments.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "ir/ir.h"
#include "ir/text.h"
#include "support/error.h"

namespace tad::ir {

namespace {

// A position in the text, advanced one character at a time.
class Cursor {
public:
    explicit Cursor(const std::string &s) : s_(s) {}

    bool at_end() const { return pos_ >= s_.size(); }
    char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
    bool at_eol() const { return at_end() || peek() == '\n'; }
    bool looking_at(const std::string &w) const { return s_.compare(pos_, w.size(), w) == 0; }

    char get() {
        const char c = s_[pos_++];
        if (c == '\n') {
            ++line_;
            col_ = 1;
        } else {
            ++col_;
        }
        return c;
    }

    void skip_blanks() {
        while (peek() == ' ' || peek() == '\t' || peek() == '\r') get();
    }

    // Blank lines and comment lines, up to the next line with content.
    void skip_empty_lines() {
        for (;;) {
            skip_blanks();
            if (looking_at("//")) {
                while (!at_eol()) get();
            }
            if (at_end() || peek() != '\n') return;
            get();
        }
    }

    [[noreturn]] void error(const std::string &message) const { error_at(line_, col_, message); }
    [[noreturn]] static void error_at(int line, int col, const std::string &message) {
        fail(TAD_ERR_SYNTAX, std::to_string(line) + ":" + std::to_string(col) + ": " + message);
    }

    int line() const { return line_; }
    int col() const { return col_; }

private:
    const std::string &s_;
    size_t pos_ = 0;
    int line_ = 1, col_ = 1;
};

// What the text says before the ops are assembled into a Function.
struct ParsedParam {
    Param param;
    ValueId value = kNoValue;  // explicit `%N name: type`, else kNoValue
    Type type;
    bool explicit_kind = false;
    int line = 0, col = 0;
};

class Parser {
public:
    explicit Parser(const std::string &text) : c_(text) {
        for (const OpInfo &i : op_table()) ops_by_name_[i.name] = i.kind;
    }

    Function run() {
        c_.skip_empty_lines();
        header();
        body();
        c_.skip_empty_lines();
        if (!c_.at_end()) c_.error("text after the function's closing '}'");
        return finish();
    }

private:
    Cursor c_;
    std::map<std::string, OpKind> ops_by_name_;
    Function f_;
    std::vector<ParsedParam> params_;
    struct Use {
        ValueId v;
        int line, col;
    };
    std::vector<Use> uses_;
    std::vector<ValueInfo> defined_;  // by value id; def_op -1 while undefined
    int close_line_ = 0, close_col_ = 0;

    // ---- tokens ---------------------------------------------------------------------------------

    void expect(char ch, const char *what) {
        c_.skip_blanks();
        if (c_.peek() != ch) c_.error(std::string("expected ") + what);
        c_.get();
    }

    bool accept(char ch) {
        c_.skip_blanks();
        if (c_.peek() != ch) return false;
        c_.get();
        return true;
    }

    // Accepts `w` when it is the next word (not a prefix of a longer one).
    bool accept_word(const std::string &w) {
        c_.skip_blanks();
        if (!c_.looking_at(w) || is_word_char(c_.peek(w.size()))) return false;
        for (size_t i = 0; i < w.size(); ++i) c_.get();
        return true;
    }

    static bool is_word_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; }

    std::string word(const char *what) {
        c_.skip_blanks();
        if (!is_word_char(c_.peek()) || std::isdigit(static_cast<unsigned char>(c_.peek())))
            c_.error(std::string("expected ") + what);
        std::string w;
        while (is_word_char(c_.peek())) w += c_.get();
        return w;
    }

    std::string quoted() {
        const int line = c_.line(), col = c_.col();
        c_.get();  // the opening quote
        std::string s;
        while (c_.peek() != '"') {
            if (c_.at_eol()) Cursor::error_at(line, col, "unterminated string");
            char ch = c_.get();
            if (ch == '\\') {
                if (c_.at_eol()) Cursor::error_at(line, col, "unterminated string");
                ch = c_.get();
                if (ch == 'n') ch = '\n';
            }
            s += ch;
        }
        c_.get();
        return s;
    }

    std::string word_or_quoted(const char *what) {
        c_.skip_blanks();
        return c_.peek() == '"' ? quoted() : word(what);
    }

    int64_t integer(const char *what) {
        c_.skip_blanks();
        const int line = c_.line(), col = c_.col();
        std::string digits;
        if (c_.peek() == '-') digits += c_.get();
        while (std::isdigit(static_cast<unsigned char>(c_.peek()))) digits += c_.get();
        if (digits.empty() || digits == "-") Cursor::error_at(line, col, std::string("expected ") + what);
        errno = 0;
        const long long v = std::strtoll(digits.c_str(), nullptr, 10);
        if (errno == ERANGE) Cursor::error_at(line, col, digits + " is out of range");
        return v;
    }

    double number() {
        c_.skip_blanks();
        const int line = c_.line(), col = c_.col();
        std::string s;
        while (std::isalnum(static_cast<unsigned char>(c_.peek())) || c_.peek() == '.' || c_.peek() == '-' ||
               c_.peek() == '+')
            s += c_.get();
        char *end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0') Cursor::error_at(line, col, "expected a number");
        return v;
    }

    ValueId value_ref() {
        c_.skip_blanks();
        const int line = c_.line(), col = c_.col();
        expect('%', "'%' and a value number");
        if (!std::isdigit(static_cast<unsigned char>(c_.peek()))) c_.error("expected a value number after '%'");
        const int64_t v = integer("a value number");
        if (v > 1000000000) Cursor::error_at(line, col, "value number %" + std::to_string(v) + " is too large");
        uses_.push_back({static_cast<ValueId>(v), line, col});
        return static_cast<ValueId>(v);
    }

    // ---- types ----------------------------------------------------------------------------------

    DType dtype() {
        c_.skip_blanks();
        const int line = c_.line(), col = c_.col();
        const std::string w = word("a type");
        for (DType t : {DType::I1, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64})
            if (w == dtype_name(t)) return t;
        Cursor::error_at(line, col, "unknown element type '" + w + "'");
    }

    Dim dim() {
        c_.skip_blanks();
        Dim d;
        if (c_.peek() == '-' || std::isdigit(static_cast<unsigned char>(c_.peek()))) {
            d.value = integer("a dim");
            d.expr = std::to_string(d.value);
            if (!accept('=')) return d;
        } else {
            d.expr = word_or_quoted("a dim");
            expect('=', "'=' and the dim's value");
        }
        d.value = integer("the dim's value");
        return d;
    }

    Type type() {
        Type t;
        if (accept_word("ptr")) {
            expect('<', "'<' after ptr");
            t.elem = dtype();
            t.is_ptr = true;
            expect('>', "'>'");
        } else {
            t.elem = dtype();
        }
        if (c_.peek() != '[') return t;
        c_.get();
        do t.shape.push_back(dim());
        while (accept(','));
        expect(']', "',' or ']'");
        return t;
    }

    // ---- header ---------------------------------------------------------------------------------

    // A constexpr's Python literal: everything up to the next ',' or ')' outside brackets and quotes.
    std::string literal() {
        c_.skip_blanks();
        std::string s;
        int depth = 0;
        char quote = 0;
        while (!c_.at_eol()) {
            const char ch = c_.peek();
            if (!quote && depth == 0 && (ch == ',' || ch == ')')) break;
            s += c_.get();
            if (quote) {
                if (ch == '\\' && !c_.at_eol()) s += c_.get();
                if (ch == quote) quote = 0;
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
            } else {
                depth += (ch == '(' || ch == '[' || ch == '{') - (ch == ')' || ch == ']' || ch == '}');
            }
        }
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
        if (s.empty()) c_.error("expected the constexpr's value");
        return s;
    }

    void kind_suffix(ParsedParam &p) {
        if (!accept_word("kind")) return;
        expect('=', "'=' after kind");
        const int line = c_.line(), col = c_.col();
        const std::string k = word("a parameter kind");
        for (ParamKind pk : {ParamKind::Pointer, ParamKind::Int, ParamKind::Float})
            if (k == text::kind_name(pk)) {
                p.param.kind = pk;
                p.explicit_kind = true;
                return;
            }
        Cursor::error_at(line, col, "unknown parameter kind '" + k + "' (pointer, int or float)");
    }

    void header_entry() {
        c_.skip_blanks();
        ParsedParam p;
        p.line = c_.line();
        p.col = c_.col();
        if (c_.peek() == '%') {
            p.value = value_ref();
            uses_.pop_back();  // a definition, not a use
        }
        const std::string name = word_or_quoted("a parameter name");
        expect(':', "':' after the parameter name");
        if (accept_word("constexpr")) {
            if (p.value != kNoValue) Cursor::error_at(p.line, p.col, "a constexpr has no value number");
            expect('=', "'=' and the constexpr's value");
            f_.constexprs.push_back(Constexpr{name, literal()});
            return;
        }
        p.param.name = name;
        p.type = type();
        p.param.kind = text::default_kind(p.type);
        kind_suffix(p);
        if (accept_word("final_of")) {
            expect('=', "'=' after final_of");
            p.param.final_of = word_or_quoted("a parameter name");
        }
        params_.push_back(std::move(p));
    }

    void specialized() {
        if (!accept_word("specialized")) return;
        expect('(', "'(' after specialized");
        do f_.specialized.push_back(word_or_quoted("a constexpr name"));
        while (accept(','));
        expect(')', "',' or ')'");
    }

    void header() {
        if (!accept_word("func")) c_.error("expected 'func'");
        expect('@', "'@' and the function's name");
        f_.name = word_or_quoted("the function's name");
        expect('(', "'('");
        if (!accept(')')) {
            do header_entry();
            while (accept(','));
            expect(')', "',' or ')'");
        }
        specialized();
        expect('{', "'{'");
        end_of_line();
        add_leading_params();
    }

    // Without value numbers in the header, parameter i is %i, defined by op i.
    void add_leading_params() {
        const bool numbered = !params_.empty() && params_[0].value != kNoValue;
        for (size_t i = 0; i < params_.size(); ++i) {
            ParsedParam &p = params_[i];
            if ((p.value != kNoValue) != numbered)
                Cursor::error_at(p.line, p.col, "either every parameter has a value number or none has");
            if (numbered) continue;
            Op op{OpKind::Param};
            op.ival = static_cast<int64_t>(i);
            op.name = p.param.name;
            op.result = static_cast<ValueId>(i);
            define(op.result, ValueInfo{p.type, static_cast<int>(f_.ops.size()), p.param.name}, p.line, p.col);
            f_.ops.push_back(std::move(op));
        }
    }

    void end_of_line() {
        c_.skip_blanks();
        if (!c_.at_eol()) c_.error("unexpected text at the end of the line");
        if (!c_.at_end()) c_.get();
    }

    // ---- ops ------------------------------------------------------------------------------------

    void define(ValueId v, ValueInfo info, int line, int col) {
        if (static_cast<size_t>(v) >= defined_.size()) defined_.resize(static_cast<size_t>(v) + 1);
        if (defined_[v].def_op >= 0) Cursor::error_at(line, col, "value %" + std::to_string(v) + " is defined twice");
        defined_[v] = std::move(info);
    }

    void body() {
        for (;;) {
            c_.skip_empty_lines();
            if (c_.at_end()) c_.error("expected '}' at the end of the function");
            if (c_.peek() == '}') {
                close_line_ = c_.line();
                close_col_ = c_.col();
                c_.get();
                end_of_line();
                return;
            }
            op_line();
        }
    }

    OpKind op_kind() {
        c_.skip_blanks();
        const int line = c_.line(), col = c_.col();
        const std::string name = word("an op name");
        auto it = ops_by_name_.find(name);
        if (it == ops_by_name_.end()) Cursor::error_at(line, col, "unknown op '" + name + "'");
        return it->second;
    }

    // Operands, the trailing ones labelled mask= / other=.
    void operands(Op &op) {
        c_.skip_blanks();
        if (c_.peek() != '%' && !c_.looking_at("mask=") && !c_.looking_at("other=")) return;
        do {
            c_.skip_blanks();
            const int line = c_.line(), col = c_.col();
            if (accept_word("mask")) {
                if (op.has_mask || op.has_other) Cursor::error_at(line, col, "mask= comes once, before other=");
                expect('=', "'='");
                op.has_mask = true;
            } else if (accept_word("other")) {
                if (op.has_other) Cursor::error_at(line, col, "other= comes once");
                expect('=', "'='");
                op.has_other = true;
            } else if (op.has_mask || op.has_other) {
                c_.error("expected mask= or other=: labelled operands come last");
            }
            op.operands.push_back(value_ref());
        } while (accept(','));
    }

    int axis() {
        if (!accept_word("axis")) c_.error("expected axis=");
        expect('=', "'=' after axis");
        return static_cast<int>(integer("the axis"));
    }

    std::string optional_attr(const char *key) {
        if (!accept_word(key)) return "";
        expect('=', "'='");
        return word_or_quoted("a name");
    }

    std::string parenthesized_name() {
        expect('(', "'('");
        std::string n = word_or_quoted("a name");
        expect(')', "')'");
        return n;
    }

    std::string optional_parenthesized_name() {
        c_.skip_blanks();
        return c_.peek() == '(' ? parenthesized_name() : "";
    }

    int64_t index() {
        expect('#', "'#' and an index");
        return integer("an index");
    }

    void attrs(Op &op) {
        switch (op_info(op.kind).attrs) {
        case OpAttrs::None: break;
        case OpAttrs::Param:
            op.ival = index();
            op.name = optional_parenthesized_name();
            break;
        case OpAttrs::Constant:
            op.fval = number();
            op.name = optional_parenthesized_name();
            break;
        case OpAttrs::Axis: op.axis = axis(); break;
        case OpAttrs::Range:
            op.ival = integer("the range's start");
            expect(',', "',' and the range's end");
            op.ival2 = integer("the range's end");
            break;
        case OpAttrs::Index: op.ival = index(); break;
        case OpAttrs::AxisKeepDims:
            op.axis = axis();
            op.keep_dims = accept_word("keep_dims");
            break;
        case OpAttrs::AxisReverse:
            op.axis = axis();
            op.ival = accept_word("reverse") ? 1 : 0;
            break;
        case OpAttrs::Precision: op.name = optional_attr("precision"); break;
        case OpAttrs::Access: op.name = optional_attr("sem"); break;
        case OpAttrs::Iterator:
            op.name = parenthesized_name();
            op.ival = accept_word("pipelined") ? 1 : 0;
            op.ival2 = accept_word("rerun") ? 1 : 0;
            break;
        }
    }

    // `  // name` after the type: the rest of the line.
    std::string value_name() {
        c_.skip_blanks();
        if (!c_.looking_at("//")) return "";
        c_.get();
        c_.get();
        if (c_.peek() == ' ') c_.get();
        std::string n;
        while (!c_.at_eol()) n += c_.get();
        return n;
    }

    void op_line() {
        const int line = c_.line(), col = c_.col();
        ValueId result = kNoValue;
        if (c_.peek() == '%') {
            result = value_ref();
            uses_.pop_back();  // a definition, not a use
            expect('=', "'=' after the result");
        }
        Op op{op_kind()};
        op.loc = SrcLoc{line, col};  // where the op is in the text, for diagnostics of passes run on it
        operands(op);
        attrs(op);
        op.result = result;
        if (result == kNoValue) {
            c_.skip_blanks();
            if (c_.peek() == ':') c_.error("an op without a result has no type");
        } else {
            expect(':', "':' and the result's type");
            Type t = type();
            define(result, ValueInfo{std::move(t), static_cast<int>(f_.ops.size()), value_name()}, line, col);
        }
        end_of_line();
        f_.ops.push_back(std::move(op));
    }

    // ---- assembly -------------------------------------------------------------------------------

    Function finish() {
        for (const Use &u : uses_)
            if (static_cast<size_t>(u.v) >= defined_.size() || defined_[u.v].def_op < 0)
                Cursor::error_at(u.line, u.col, "value %" + std::to_string(u.v) + " is never defined");
        for (size_t v = 0; v < defined_.size(); ++v)
            if (defined_[v].def_op < 0)
                Cursor::error_at(close_line_, close_col_,
                                 "value %" + std::to_string(v) + " is never defined (values are numbered from %0 up)");
        f_.values = std::move(defined_);
        for (const ParsedParam &p : params_) add_param(p);
        return std::move(f_);
    }

    void add_param(const ParsedParam &p) {
        Param param = p.param;
        param.value = p.value == kNoValue ? static_cast<ValueId>(f_.params.size()) : p.value;
        if (static_cast<size_t>(param.value) >= f_.values.size())
            Cursor::error_at(
                p.line, p.col,
                "parameter '" + param.name + "' is value %" + std::to_string(param.value) + ", which is never defined");
        if (!(f_.values[param.value].type == p.type))
            Cursor::error_at(p.line, p.col,
                             "parameter '" + param.name + "' has type " + text::type(p.type) + " but %" +
                                 std::to_string(param.value) + " is " + text::type(f_.values[param.value].type));
        f_.params.push_back(std::move(param));
    }
};

}  // namespace

Function parse(const std::string &text) { return Parser(text).run(); }

}  // namespace tad::ir
