#include "passes/adds_to_stores.h"

#include <algorithm>
#include <set>

#include "passes/access.h"
#include "passes/transpose.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The proof for the one add to `param`, or why there is none.
std::optional<StoredAdd> prove(const ir::Function &f, Affine &a, const MemoryParams &mem,
                               const std::vector<ir::Loop> &loops, const std::string &param, int *op,
                               std::string *why) {
    std::vector<const Access *> writes;
    for (const Access &x : mem.accesses)
        if (x.param == param) writes.push_back(&x);
    if (mem.loaded.count(param)) return *why = "the kernel also reads it", std::nullopt;
    if (writes.size() != 1 || writes[0]->kind != OpKind::AtomicAdd)
        return *why = "it is written more than once", std::nullopt;
    const Access &w = *writes[0];
    if (w.loop >= 0 && loops[w.loop].parent != -1) return *why = "its add is in a nested loop", std::nullopt;
    const ir::Op &add = f.ops[w.op];
    const ValueId mask = add.has_mask ? add.operands[2] : ir::kNoValue;
    StoredAdd s{param, {}, std::nullopt, ""};
    std::string because;
    if (!writes_distinct(f, a, {add.operands[0]}, mask, program_axes(f), w.loop, &s.alternatives, &because))
        return *why = because, std::nullopt;
    if (std::any_of(s.alternatives.begin(), s.alternatives.end(), [](const auto &alt) { return alt.empty(); }))
        s.alternatives = {{}};  // one order needs no guard
    s.cover = write_coverage(f, a, {add.operands[0]}, mask, &s.uncovered);
    *op = w.op;
    return s;
}

}  // namespace

StoredAdds adds_to_stores(const ir::Function &f, const std::set<std::string> &candidates) {
    StoredAdds out;
    const MemoryParams mem = memory_params(f);
    const std::vector<ir::Loop> loops = ir::loops(f);
    Affine a(f, true);
    std::set<int> rewrite;
    for (const std::string &p : candidates) {
        if (!mem.accumulated.count(p)) continue;
        std::string why;
        int op = -1;
        std::optional<StoredAdd> s = prove(f, a, mem, loops, p, &op, &why);
        if (!s) {
            out.kept += p + ": adds kept: " + why + "\n";
            continue;
        }
        out.report += p + ": adds stored" + guards_text(s->alternatives) +
                      (s->cover ? "" : " (not covering: " + s->uncovered + ")") + "\n";
        out.stored.push_back(*s);
        rewrite.insert(op);
    }
    out.fn = adds_as_stores(f, rewrite);
    return out;
}

ir::Function adds_as_stores(const ir::Function &f, const std::set<int> &adds, const std::set<int> &dropped) {
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    bool barrier = false;  // the last op kept is a barrier
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (dropped.count(static_cast<int>(i)) || (barrier && op.kind == OpKind::Barrier)) continue;
        barrier = op.kind == OpKind::Barrier;
        if (op.kind == OpKind::Param) {
            map[op.result] = b.param_like(f.params.at(static_cast<size_t>(op.ival)), f.type(op.result));
        } else if (adds.count(static_cast<int>(i))) {
            b.loc = op.loc;
            b.store(map[op.operands[0]], map[op.operands[1]], op.has_mask ? map[op.operands[2]] : ir::kNoValue);
        } else {
            copy_op(b, f, op, map);
        }
    }
    return out;
}

}  // namespace tad::passes
