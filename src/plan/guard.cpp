#include <algorithm>

#include "plan/plan.h"

namespace tad::plan {

std::string Guard::str(const std::function<std::string(const std::string &)> &name) const {
    if (op != Any) return lhs.str(name) + (op == Equal ? " == " : " >= ") + rhs.str(name);
    std::string s;
    for (size_t i = 0; i < any.size(); ++i) {
        std::string all;
        for (size_t g = 0; g < any[i].size(); ++g) all += (g ? " and " : "") + any[i][g].str(name);
        s += (i ? " or " : "") + ("(" + (all.empty() ? "True" : all) + ")");
    }
    return s.empty() ? "False" : "(" + s + ")";  // whole, within an `and` of guards
}

std::string Guard::str() const {
    return str([](const std::string &n) { return n; });
}

bool Guard::eval(const std::function<bool(const std::string &, int64_t *)> &value, bool *holds) const {
    if (op != Any) {
        int64_t l = 0, r = 0;
        if (!lhs.eval(value, &l) || !rhs.eval(value, &r)) return false;
        *holds = op == Equal ? l == r : l >= r;
        return true;
    }
    *holds = false;
    for (const std::vector<Guard> &all : any) {
        bool every = true;
        for (const Guard &g : all) {
            bool h = false;
            if (!g.eval(value, &h)) return false;
            every = every && h;
        }
        *holds = *holds || every;
    }
    return true;
}

namespace {

// (coefficient, size) pairs sorted, each run where a coefficient is the previous one's times its
// size merged into one digit: one set of sums of coefficient · index, one spelling.
std::vector<std::pair<int64_t, int64_t>> merged(std::vector<std::pair<int64_t, int64_t>> digits) {
    std::sort(digits.begin(), digits.end());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto &[c, n] : digits)
        if (!out.empty() && out.back().first * out.back().second == c)
            out.back().second *= n;
        else
            out.emplace_back(c, n);
    return out;
}

}  // namespace

bool covers(const passes::Coverage &c, const std::function<bool(const std::string &, int64_t *)> &value,
            const std::vector<int64_t> &shape, const std::vector<int64_t> &stride) {
    for (const passes::Inequality &g : c.guards) {
        int64_t l = 0, r = 0;
        if (!g.lhs.eval(value, &l) || !g.rhs.eval(value, &r) || l < r) return false;
    }
    std::vector<std::pair<int64_t, int64_t>> digits, dims;
    for (const auto &[coeff, size] : c.digits) {
        int64_t k = 0, n = 0;
        if (!coeff.eval(value, &k) || !size.eval(value, &n)) return false;
        if (n != 1) digits.emplace_back(k, n);
    }
    for (size_t d = 0; d < shape.size() && d < stride.size(); ++d)
        if (shape[d] != 1) dims.emplace_back(stride[d], shape[d]);
    return merged(digits) == merged(dims);
}

}  // namespace tad::plan
