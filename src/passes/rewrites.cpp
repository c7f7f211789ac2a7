#include "passes/rewrites.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "passes/access.h"
#include "passes/passes.h"
#include "passes/remap_programs.h"
#include "support/error.h"

namespace tad::passes {

namespace {

ir::ValueId store_mask(const ir::Op &store) { return store.has_mask ? store.operands[2] : ir::kNoValue; }

// Whether `g` can hold: not where it is false at the kernel's constexprs (`STEP >= BLOCK` with both
// known), nor where every term of lhs - rhs is negative (`C >= 2*C`, `1 >= K + 1`: false for any
// positive sizes). Dropping an alternative only ever leaves the buffer to the zeroing backward.
bool may_hold(const ir::Function &f, const Inequality &g) {
    const Poly d = g.lhs - g.rhs;
    int64_t value = 0;
    const bool known = d.eval(
        [&](const std::string &name, int64_t *out) {
            for (const ir::Constexpr &c : f.constexprs)
                if (c.name == name) {
                    char *end = nullptr;
                    *out = std::strtoll(c.literal.c_str(), &end, 10);
                    return end != c.literal.c_str() && *end == '\0';
                }
            return false;
        },
        &value);
    if (known) return value >= 0;
    return std::any_of(d.terms().begin(), d.terms().end(), [](const auto &term) { return term.second > 0; });
}

// The alternatives every condition of which may hold.
std::vector<std::vector<Inequality>> possible(const ir::Function &f,
                                              std::vector<std::vector<Inequality>> alternatives) {
    alternatives.erase(std::remove_if(alternatives.begin(), alternatives.end(),
                                      [&](const std::vector<Inequality> &gs) {
                                          return std::any_of(gs.begin(), gs.end(),
                                                             [&](const Inequality &g) { return !may_hold(f, g); });
                                      }),
                       alternatives.end());
    return alternatives;
}

// One parameter's verdict from its stores (op indices, in op order).
Rewrite verdict(const ir::Function &f, Affine &a, const std::string &param, const std::vector<int> &stores) {
    Rewrite r{param, {}, "", stores.front()};
    const ir::Op &first = f.ops[static_cast<size_t>(stores.front())];
    const std::vector<int> loops = a.loops_around(stores.front());
    std::vector<ir::ValueId> ptrs;
    for (int s : stores) {
        const ir::Op &op = f.ops[static_cast<size_t>(s)];
        if (a.loops_around(s) != loops || store_mask(op) != store_mask(first)) {
            r.why = "its stores at " + where(f.source_path, first.loc.line, first.loc.col) + " and " +
                    where(f.source_path, op.loc.line, op.loc.col) + " are in different loops or masked differently";
            return r;
        }
        if (std::find(ptrs.begin(), ptrs.end(), op.operands[0]) != ptrs.end()) {
            r.why = "its stores at " + where(f.source_path, first.loc.line, first.loc.col) + " and " +
                    where(f.source_path, op.loc.line, op.loc.col) + " write through one pointer";
            return r;
        }
        ptrs.push_back(op.operands[0]);
    }
    if (loops.empty() && ptrs.size() == 1) return r.why = "", r;
    std::vector<std::vector<Inequality>> alternatives;
    // Every order's conditions: those of the other orders hold in layouts with a dimension of one
    // (a single row whose stride torch leaves arbitrary), which are no reason to refuse.
    if (!writes_once_per_program(f, a, ptrs, store_mask(first), loops, &alternatives, &r.why)) return r;
    r.why.clear();
    if (alternatives.empty()) return r;  // no condition needed
    r.unless = possible(f, alternatives);
    if (r.unless.empty())
        r.why = "its writes are distinct only where " + alternatives.front().front().str() + ", which cannot hold";
    return r;
}

}  // namespace

std::vector<Rewrite> rewrites(const ir::Function &f) {
    std::map<std::string, std::vector<int>> stores;
    for (size_t i = 0; i < f.ops.size(); ++i)
        if (f.ops[i].kind == ir::OpKind::Store)
            stores[pointer_base(f, f.ops[i].operands[0])].push_back(static_cast<int>(i));
    Affine a(f, true);
    std::vector<Rewrite> out;
    for (const ir::Param &p : f.params) {
        auto it = stores.find(p.name);
        if (it == stores.end()) continue;
        Rewrite r = verdict(f, a, p.name, it->second);
        if (!r.why.empty() || !r.unless.empty()) out.push_back(std::move(r));
    }
    return out;
}

bool store_once_per_program(const ir::Function &f, int store) {
    Affine a(f, true);
    const ir::Op &op = f.ops[static_cast<size_t>(store)];
    std::vector<std::vector<Inequality>> alternatives;
    std::string why;
    return writes_once_per_program(f, a, {op.operands[0]}, store_mask(op), a.loops_around(store), &alternatives, &why);
}

int store_with_repeated_lanes(const ir::Function &f, const std::vector<std::string> &params) {
    Affine a(f, true);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind != ir::OpKind::Store ||
            std::find(params.begin(), params.end(), pointer_base(f, op.operands[0])) == params.end())
            continue;
        const Form &addr = a.of(op.operands[0]);
        const bool divides =
            std::any_of(addr.terms.begin(), addr.terms.end(), [](const auto &term) { return term.first.divides(); });
        if (!addr.affine || divides) continue;
        const ir::Type &t = f.type(op.operands[0]);
        for (size_t d = 0; d < t.rank(); ++d)
            if (t.shape[d].value > 1 && !addr.terms.count({IndexVar::Lane, static_cast<int>(d)}))
                return static_cast<int>(i);
    }
    return -1;
}

int once_on_tiles(const ir::Function &f, const std::string &param, std::vector<std::vector<Inequality>> *unless) {
    std::string why;
    const std::vector<Remapped> forms = remap_programs(f, &why);
    for (size_t i = 0; i < forms.size(); ++i) {
        const ir::Function &g = forms[i].fn;
        const std::vector<bool> outside = top_level(g);
        std::vector<ir::ValueId> ptrs;
        ir::ValueId mask = ir::kNoValue;
        bool ok = true;
        for (size_t k = 0; k < g.ops.size(); ++k) {
            const ir::Op &op = g.ops[k];
            if (op.kind != ir::OpKind::Store || pointer_base(g, op.operands[0]) != param) continue;
            ok = ok && outside[k] && (ptrs.empty() || store_mask(op) == mask);
            mask = store_mask(op);
            ptrs.push_back(op.operands[0]);
        }
        Affine a(g, true);
        std::vector<std::vector<Inequality>> alternatives;
        if (!ok || ptrs.empty() || !writes_distinct(g, a, ptrs, mask, program_axes(g), -1, &alternatives, &why))
            continue;
        const bool grid = std::any_of(alternatives.begin(), alternatives.end(), [](const auto &gs) {
            return std::any_of(gs.begin(), gs.end(),
                               [](const Inequality &q) { return q.str().find("num_programs(") != std::string::npos; });
        });
        if (grid) continue;
        const bool free =
            std::any_of(alternatives.begin(), alternatives.end(), [](const auto &gs) { return gs.empty(); });
        *unless = free ? std::vector<std::vector<Inequality>>{} : alternatives;
        return static_cast<int>(i);
    }
    return -1;
}

}  // namespace tad::passes
