#include "passes/updates_to_stores.h"

#include <algorithm>
#include <map>

#include "passes/access.h"
#include "passes/adds_to_stores.h"
#include "passes/passes.h"
#include "passes/transpose.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

ValueId mask_of(const ir::Op &op, size_t at) { return op.has_mask ? op.operands[at] : ir::kNoValue; }

// One address value's accesses.
struct Group {
    std::vector<int> loads;
    int zero = -1, add = -1;
};

class Prover {
public:
    Prover(const ir::Function &f, const MemoryParams &mem) : f_(f), mem_(mem), loops_(ir::loops(f)), affine_(f, true) {}

    // The zero stores and adds of `param` to rewrite, or why not.
    bool prove(const std::string &param, UpdatedParam *u, std::vector<int> *zeros, std::vector<int> *adds,
               std::string *why) {
        std::map<ValueId, Group> groups;
        int loop = -2;
        for (const Access &x : mem_.accesses) {
            if (x.param != param) continue;
            const ir::Op &op = f_.ops[x.op];
            Group &g = groups[op.operands[0]];
            if (x.kind == OpKind::Load) {
                g.loads.push_back(x.op);
                continue;
            }
            if (loop != -2 && loop != x.loop) return no("its writes are in different loops", why);
            loop = x.loop;
            if (x.kind == OpKind::Store && zero_constant(f_, op.operands[1]) && g.zero < 0 && g.add < 0)
                g.zero = x.op;
            else if (x.kind == OpKind::AtomicAdd && g.zero >= 0 && g.add < 0)
                g.add = x.op;
            else
                return no("a write is not a zero store followed by one add at its address", why);
        }
        if (loop >= 0 && loops_[static_cast<size_t>(loop)].parent != -1)
            return no("its writes are in a nested loop", why);
        ValueId mask = ir::kNoValue;
        std::vector<ValueId> ptrs;
        for (const auto &[ptr, g] : groups) {
            if (g.zero < 0 || g.add < 0) return no("an address is read but not updated", why);
            for (int l : g.loads)
                if (l > g.zero && l < g.add) return no("an address is read between its zero and its add", why);
            // A load off the writes' mask could reach what another group's lanes write.
            for (int l : g.loads)
                if (mask_of(f_.ops[l], 1) != mask_of(f_.ops[g.zero], 2))
                    return no("a load is masked otherwise than the writes", why);
            const ValueId m = mask_of(f_.ops[g.zero], 2), n = mask_of(f_.ops[g.add], 2);
            if (m != n || (!ptrs.empty() && m != mask)) return no("its writes are masked differently", why);
            mask = m;
            ptrs.push_back(ptr);
            zeros->push_back(g.zero);
            adds->push_back(g.add);
        }
        if (ptrs.empty()) return no("it is not written", why);
        u->param = param;
        std::string because;
        if (!writes_distinct(f_, affine_, ptrs, mask, program_axes(f_), loop < 0 ? -1 : loop, &u->alternatives,
                             &because))
            return no(because, why);
        if (std::any_of(u->alternatives.begin(), u->alternatives.end(), [](const auto &alt) { return alt.empty(); }))
            u->alternatives = {{}};
        return true;
    }

private:
    const ir::Function &f_;
    const MemoryParams &mem_;
    std::vector<ir::Loop> loops_;
    Affine affine_;

    static bool no(const std::string &w, std::string *why) {
        *why = w;
        return false;
    }
};

}  // namespace

UpdatesToStores updates_to_stores(const ir::Function &f, const std::set<std::string> &candidates) {
    UpdatesToStores out;
    const MemoryParams mem = memory_params(f);
    Prover prover(f, mem);
    std::set<int> dropped, stored;
    for (const std::string &p : candidates) {
        if (!mem.accumulated.count(p) || !mem.loaded.count(p)) continue;
        UpdatedParam u;
        std::vector<int> zeros, adds;
        std::string why;
        if (!prover.prove(p, &u, &zeros, &adds, &why)) {
            out.report += p + ": updates kept as adds: " + why + "\n";
            continue;
        }
        out.report += p + ": updates stored" + guards_text(u.alternatives) + "\n";
        out.updated.push_back(u);
        dropped.insert(zeros.begin(), zeros.end());
        stored.insert(adds.begin(), adds.end());
    }
    out.fn = adds_as_stores(f, stored, dropped);
    return out;
}

}  // namespace tad::passes
