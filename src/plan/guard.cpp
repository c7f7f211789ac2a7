#include "plan/derivation.h"

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

}  // namespace tad::plan
