// Where an online softmax's carried values start (online_softmax_internal.h: match_start): at zero,
// zeroed by the first alpha, or continuing an earlier online softmax (a chain of loops).
#include <algorithm>
#include <cmath>

#include "passes/online_softmax_internal.h"
#include "passes/passes.h"

namespace tad::passes::detail {

using ir::OpKind;
using ir::ValueId;

std::optional<double> literal_value(const ir::Function &f, ValueId v) {
    const ir::Op &op = f.def(v);
    if (op.kind == OpKind::Const) return op.name.empty() ? std::optional<double>(op.fval) : std::nullopt;
    if (op.kind == OpKind::Broadcast) return literal_value(f, op.operands[0]);
    if (op.kind == OpKind::Neg) {
        const std::optional<double> a = literal_value(f, op.operands[0]);
        return a ? std::optional<double>(-*a) : std::nullopt;
    }
    if (op.kind != OpKind::Add && op.kind != OpKind::Sub && op.kind != OpKind::Mul) return std::nullopt;
    const std::optional<double> a = literal_value(f, op.operands[0]), b = literal_value(f, op.operands[1]);
    if (!a || !b) return std::nullopt;
    if (op.kind == OpKind::Add) return *a + *b;
    return op.kind == OpKind::Sub ? *a - *b : *a * *b;
}

namespace {

ValueId init(const ir::Function &f, const ir::Loop &l, size_t k) { return f.ops[l.args[k]].operands[0]; }

bool is_rescaled(const OnlineSoftmax &s, size_t k) {
    return std::any_of(s.rescaled.begin(), s.rescaled.end(),
                       [&](const OnlineSoftmax::Rescaled &r) { return r.k == k; });
}

std::optional<int> rescaled_axis(const OnlineSoftmax &s, size_t k) {
    for (const OnlineSoftmax::Rescaled &r : s.rescaled)
        if (r.k == k) return r.axis;
    return std::nullopt;
}

bool is_sum(const OnlineSoftmax &s, size_t k) { return std::count(s.sums.begin(), s.sums.end(), k) > 0; }

// The top-level loop whose result v is, or null.
const ir::Loop *result_of(const std::vector<ir::Loop> &loops, const ir::Function &f, ValueId v) {
    const int d = f.values[v].def_op;
    for (const ir::Loop &l : loops)
        if (l.parent < 0 && std::count(l.results.begin(), l.results.end(), d)) return &l;
    return nullptr;
}

std::string name(const ir::Function &f, ValueId v) {
    return f.values[v].name.empty() ? "%" + std::to_string(v) : "'" + f.values[v].name + "'";
}

// Without a loop before it: rescaled values start at zero, or are killed by m starting at -inf.
std::string match_first(const ir::Function &f, OnlineSoftmax *s) {
    const ir::Loop &l = s->loop;
    const std::optional<double> m0 = literal_value(f, init(f, l, s->m));
    for (const OnlineSoftmax::Rescaled &r : s->rescaled) {
        const ValueId c0 = init(f, l, r.k);
        if (zero_constant(f, c0)) continue;
        const std::optional<double> v = literal_value(f, c0);
        if (!m0 || !(std::isinf(*m0) && *m0 < 0) || !v || !std::isfinite(*v))
            return "carried value " + name(f, f.ops[l.args[r.k]].result) +
                   " starts neither at zero, nor at a finite literal with the maximum at -inf, nor where an "
                   "earlier online softmax ends";
        s->killed.insert(r.k);
    }
    return "";
}

// Where each carried float of s starts from a result of p: the same role, and nothing else reads
// p's floats. "" or why not.
std::string match_link(const ir::Function &f, const OnlineSoftmax &p, const OnlineSoftmax &s) {
    const ir::Loop &l = s.loop, &pl = p.loop;
    auto from = [&](size_t k) -> int {
        const int d = f.values[init(f, l, k)].def_op;
        auto it = std::find(pl.results.begin(), pl.results.end(), d);
        return it == pl.results.end() ? -1 : static_cast<int>(it - pl.results.begin());
    };
    if (p.exp != s.exp) return "it continues an online softmax of another base";
    if (from(s.m) != static_cast<int>(p.m)) return "its maximum does not start where the earlier loop's ends";
    for (size_t k = 0; k < l.args.size(); ++k) {
        if (k == s.m || !f.type(f.ops[l.args[k]].result).is_float()) continue;
        const int j = from(k);
        const std::string what = "carried value " + name(f, f.ops[l.args[k]].result);
        if (j < 0) {
            if (zero_constant(f, init(f, l, k)) || is_sum(s, k)) continue;
            return what + " starts neither at zero nor where the earlier loop ends";
        }
        const size_t pk = static_cast<size_t>(j);
        if (is_rescaled(s, k) && rescaled_axis(p, pk) != rescaled_axis(s, k))
            return what + " starts from a value the earlier loop does not rescale alike";
        if (is_sum(s, k) && !is_sum(p, pk)) return what + " starts from a value the earlier loop does not sum";
    }
    const std::vector<std::vector<int>> users = ir::users(f);
    for (size_t k = 0; k < pl.results.size(); ++k) {
        const ValueId r = f.ops[pl.results[k]].result;
        if (!f.type(r).is_float()) continue;
        for (int u : users[r])
            if (std::find(l.args.begin(), l.args.end(), u) == l.args.end())
                return "the earlier loop's " + name(f, r) + " is read at " + op_at(f, u);
    }
    return "";
}

}  // namespace

std::string match_start(const ir::Function &f, OnlineSoftmax *s) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    const ir::Loop *prev = result_of(loops, f, init(f, s->loop, s->m));
    if (!prev) return match_first(f, s);
    OnlineSoftmax p;
    std::string why;
    if (!match_online_softmax(f, *prev, &p, &why)) return match_first(f, s);
    if (why.empty()) why = match_link(f, p, *s);
    if (why.empty()) why = match_start(f, &p);
    // Not a chain, but a loop whose sums all start at zero needs none (whatever m starts at).
    if (!why.empty() && match_first(f, s).empty()) return "";
    if (!why.empty()) return "it continues the " + op_at(f, prev->begin) + ", but " + why;
    s->before = std::move(p.before);
    p.before.clear();
    s->before.push_back(std::move(p));
    return "";
}

}  // namespace tad::passes::detail
