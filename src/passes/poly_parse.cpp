// Poly::parse: a spelled expression of names and integers (a tile dim `2 * BLOCK`, a named constant
// `BLOCK // 2`) as the polynomial it denotes, so that proofs compare it with other sizes and every
// executor evaluates it from the launch's scalars (affine.h).
#include <cctype>

#include "passes/affine.h"

namespace tad::passes {

namespace {

// expr := term (('+' | '-') term)*; term := unary ('*' unary | '//' plain)*; unary := '-' unary |
// atom; atom := integer | name | '(' expr ')'. A quotient's operands are a name or an integer
// each (the symbol "n//d", as Affine::quotient makes it); anything else fails the parse.
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
    bool eat(const char *tok) {
        skip();
        const std::string t(tok);
        if (s_.compare(at_, t.size(), t) != 0) return false;
        if (t == "*" && s_.compare(at_, 2, "**") == 0) return false;  // a power: not parsed
        at_ += t.size();
        return true;
    }

    bool expr(Poly *out) {
        if (!term(out)) return false;
        for (;;) {
            Poly rhs;
            if (eat("+")) {
                if (!term(&rhs)) return false;
                *out = *out + rhs;
            } else if (eat("-")) {
                if (!term(&rhs)) return false;
                *out = *out - rhs;
            } else {
                return true;
            }
        }
    }

    bool term(Poly *out) {
        if (!unary(out)) return false;
        for (;;) {
            if (eat("//")) {
                std::string n, d;
                if (!plain(*out, &n) || !token(&d)) return false;
                int64_t a = 0, b = 0;
                const bool numbers = out->constant_value(&a) && number(d).constant_value(&b);
                if (numbers && b == 0) return false;
                *out = numbers ? Poly::constant(a / b) : Poly::symbol(n + "//" + d);
            } else if (eat("*")) {
                Poly rhs;
                if (!unary(&rhs)) return false;
                *out = *out * rhs;
            } else {
                return true;
            }
        }
    }

    bool unary(Poly *out) {
        if (eat("-")) {
            if (!unary(out)) return false;
            *out = Poly() - *out;
            return true;
        }
        return atom(out);
    }

    bool atom(Poly *out) {
        if (eat("(")) return expr(out) && eat(")");
        std::string tok;
        if (!token(&tok)) return false;
        *out = number(tok);
        return true;
    }

    // p as a quotient's dividend: one name or a non-negative integer.
    static bool plain(const Poly &p, std::string *tok) {
        int64_t c = 0;
        if (p.constant_value(&c)) return c >= 0 && (*tok = std::to_string(c), true);
        const std::set<std::string> names = p.symbols();
        if (names.size() != 1 || p != Poly::symbol(*names.begin())) return false;
        *tok = *names.begin();
        return tok->find("//") == std::string::npos;
    }

    // An integer (decimal digits only) or an identifier.
    bool token(std::string *tok) {
        skip();
        const size_t start = at_;
        if (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
            while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) ++at_;
            if (at_ < s_.size() &&
                (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_' || s_[at_] == '.'))
                return false;  // 1e5, 0x10, 1.5
        } else {
            while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) ++at_;
            if (at_ < s_.size() && (s_[at_] == '(' || s_[at_] == '.')) return false;  // a call, an attribute
        }
        if (at_ == start || at_ - start > 18) return false;  // nothing, or past int64's digits
        *tok = s_.substr(start, at_ - start);
        return true;
    }

    // A token's value: an integer's, or a name as a symbol.
    static Poly number(const std::string &tok) {
        return std::isdigit(static_cast<unsigned char>(tok[0])) ? Poly::constant(std::stoll(tok)) : Poly::symbol(tok);
    }
};

}  // namespace

std::optional<Poly> Poly::parse(const std::string &spelling) {
    Poly p;
    if (!Parser(spelling).whole(&p)) return std::nullopt;
    return p;
}

}  // namespace tad::passes
