// Poly::parse: a spelled expression of names and integers (a tile dim `2 * BLOCK`, a named constant
// `BLOCK * 2 + 1`) as the polynomial it denotes, so that proofs compare it with other sizes and every
// executor evaluates it from the launch's scalars (affine.h). A quotient is not parsed: Python floors
// a constexpr's `//` where the executors' quotient symbols truncate, and a constexpr may be negative.
#include <cctype>

#include "passes/affine.h"

namespace tad::passes {

namespace {

// expr := term (('+' | '-') term)*; term := unary ('*' unary)*; unary := '-' unary | atom;
// atom := integer | name | '(' expr ')'. Anything else (`//`, `/`, `%`, `**`, a call) fails.
class Parser {
public:
    explicit Parser(const std::string &s) : s_(s) {}

    bool whole(Poly *out) {
        if (!expr(out)) return false;
        skip();
        return at_ == s_.size();
    }

private:
    const std::string &s_;
    size_t at_ = 0;

    void skip() {
        while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
    }

    bool eat(char c) {
        skip();
        if (at_ >= s_.size() || s_[at_] != c) return false;
        if (c == '*' && at_ + 1 < s_.size() && s_[at_ + 1] == '*') return false;  // a power
        ++at_;
        return true;
    }

    bool expr(Poly *out) {
        if (!term(out)) return false;
        for (;;) {
            const bool plus = eat('+');
            if (!plus && !eat('-')) return true;
            Poly rhs;
            if (!term(&rhs)) return false;
            *out = plus ? *out + rhs : *out - rhs;
        }
    }

    bool term(Poly *out) {
        if (!unary(out)) return false;
        while (eat('*')) {
            Poly rhs;
            if (!unary(&rhs)) return false;
            *out = *out * rhs;
        }
        return true;
    }

    bool unary(Poly *out) {
        if (!eat('-')) return atom(out);
        if (!unary(out)) return false;
        *out = Poly() - *out;
        return true;
    }

    bool atom(Poly *out) {
        if (eat('(')) return expr(out) && eat(')');
        skip();
        const size_t start = at_;
        auto word = [&](size_t i) {
            return i < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i])) || s_[i] == '_');
        };
        while (word(at_)) ++at_;
        if (at_ == start || (at_ < s_.size() && (s_[at_] == '(' || s_[at_] == '.'))) return false;  // a call, 1.5
        const std::string tok = s_.substr(start, at_ - start);
        if (!std::isdigit(static_cast<unsigned char>(tok[0]))) return *out = Poly::symbol(tok), true;
        // Decimal digits only (not 1e5, 0x10, 2_0), within int64.
        for (char c : tok)
            if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        if (tok.size() > 18) return false;
        *out = Poly::constant(std::stoll(tok));
        return true;
    }
};

}  // namespace

std::optional<Poly> Poly::parse(const std::string &spelling) {
    Poly p;
    if (!Parser(spelling).whole(&p)) return std::nullopt;
    return p;
}

}  // namespace tad::passes
