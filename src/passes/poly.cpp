// Poly and the printing of affine forms (affine.h).
#include <algorithm>

#include "passes/affine.h"

namespace tad::passes {

Poly Poly::constant(int64_t c) {
    Poly p;
    if (c) p.terms_[{}] = c;
    return p;
}

Poly Poly::symbol(const std::string &name) {
    Poly p;
    p.terms_[{name}] = 1;
    return p;
}

Poly Poly::operator+(const Poly &o) const {
    Poly p = *this;
    for (const auto &[names, c] : o.terms_)
        if ((p.terms_[names] += c) == 0) p.terms_.erase(names);
    return p;
}

Poly Poly::operator-(const Poly &o) const { return *this + o * constant(-1); }

Poly Poly::operator*(const Poly &o) const {
    Poly p;
    for (const auto &[a, x] : terms_)
        for (const auto &[b, y] : o.terms_) {
            std::vector<std::string> names = a;
            names.insert(names.end(), b.begin(), b.end());
            std::sort(names.begin(), names.end());
            if ((p.terms_[names] += x * y) == 0) p.terms_.erase(names);
        }
    return p;
}

bool Poly::constant_value(int64_t *value) const {
    if (terms_.empty()) return *value = 0, true;
    if (terms_.size() != 1 || !terms_.begin()->first.empty()) return false;
    *value = terms_.begin()->second;
    return true;
}

bool Poly::divide(const Poly &d, Poly *out) const {
    if (d.terms_.size() != 1) return false;
    const auto &[dnames, dc] = *d.terms_.begin();
    Poly q;
    for (const auto &[names, c] : terms_) {
        std::vector<std::string> rest = names;
        for (const std::string &n : dnames) {
            auto it = std::find(rest.begin(), rest.end(), n);
            if (it == rest.end()) return false;
            rest.erase(it);
        }
        if (c % dc) return false;
        q.terms_[rest] = c / dc;
    }
    *out = q;
    return true;
}

bool Poly::negative() const {
    if (terms_.empty()) return false;
    for (const auto &term : terms_)
        if (term.second > 0) return false;
    return true;
}

std::string Poly::str() const {
    return str([](const std::string &n) { return n; });
}

bool Poly::mentions(const std::string &name) const {
    // A quotient symbol "n//d" mentions n and d: a proof that a value ignores `name` must see them.
    auto in = [&](const std::string &symbol) {
        const size_t div = symbol.find("//");
        return symbol == name ||
               (div != std::string::npos && (symbol.substr(0, div) == name || symbol.substr(div + 2) == name));
    };
    for (const auto &[names, c] : terms_)
        if (std::any_of(names.begin(), names.end(), in)) return true;
    return false;
}

std::set<std::string> Poly::symbols() const {
    std::set<std::string> out;
    for (const auto &[names, c] : terms_) out.insert(names.begin(), names.end());
    return out;
}

bool Poly::eval(const std::function<bool(const std::string &, int64_t *)> &value, int64_t *out) const {
    int64_t sum = 0;
    for (const auto &[names, c] : terms_) {
        int64_t term = c;
        for (const std::string &n : names) {
            int64_t v = 0;
            if (!value(n, &v)) return false;
            term *= v;
        }
        sum += term;
    }
    *out = sum;
    return true;
}

std::string Poly::str(const std::function<std::string(const std::string &)> &name) const {
    if (terms_.empty()) return "0";
    std::string s;
    // Highest degree first, the number last: "2*N + stride + 1".
    std::vector<std::pair<std::vector<std::string>, int64_t>> order(terms_.begin(), terms_.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
    for (const auto &[names, c] : order) {
        int64_t mag = c < 0 ? -c : c;
        s += s.empty() ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
        std::string factors;
        const bool product = names.size() > 1 || mag != 1 || c < 0;
        for (const std::string &n : names) {
            // A quotient spelled n//d reads as a floor of the whole product unless parenthesized.
            const std::string spelled = name(n);
            const bool quotient = product && spelled.find("//") != std::string::npos;
            factors += (factors.empty() ? "" : "*") + (quotient ? "(" + spelled + ")" : spelled);
        }
        if (factors.empty())
            s += std::to_string(mag);
        else
            s += (mag == 1 ? "" : std::to_string(mag) + "*") + factors;
    }
    return s;
}

std::string IndexVar::str() const {
    static const char *names[] = {"pid", "lane", "iter", "quot", "rem", "div", "mod"};
    return names[kind] + std::to_string(n);
}

std::string Form::str() const {
    if (!affine) return "non-affine";
    std::string s = offset.zero() && !terms.empty() ? "" : offset.str();
    for (const auto &[v, c] : terms) {
        std::string coeff = c.str();
        if (coeff.find(' ') != std::string::npos) coeff = "(" + coeff + ")";
        s += (s.empty() ? "" : " + ") + coeff + "*" + v.str();
    }
    return s;
}

}  // namespace tad::passes
