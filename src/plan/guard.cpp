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

bool launch_symbol(const std::string &name, const std::array<int64_t, 3> &grid,
                   const std::function<bool(const std::string &, int64_t *)> &named, int64_t *out) {
    const size_t div = name.find("//");  // num_programs(a)//d: full groups of d programs
    if (div != std::string::npos) {
        int64_t n = 0, d = 0;
        return launch_symbol(name.substr(0, div), grid, named, &n) &&
               launch_symbol(name.substr(div + 2), grid, named, &d) && d > 0 && (*out = n / d, true);
    }
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return *out = std::stoll(name), true;
    const std::string programs = "num_programs(";
    if (name.compare(0, programs.size(), programs) == 0) {
        const size_t axis = std::stoul(name.substr(programs.size()));
        return axis < grid.size() && (*out = grid[axis], true);
    }
    return named(name, out);
}

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
