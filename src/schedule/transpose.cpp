#include "schedule/transpose.h"

#include <algorithm>

#include "passes/access.h"
#include "passes/affine.h"
#include "passes/passes.h"
#include "passes/transpose.h"
#include "schedule/schedule.h"
#include "support/error.h"
#include "support/text.h"

namespace tad::schedule {

namespace {

// Where the transposed kernel is worth it: its loop over the G programs along the shared axis runs
// serially in each program, so the programs of the other axes must not be few beside G
// (8 · Π num_programs(kept) >= G). A LayerNorm over column tiles of 16 with 4096 rows, or a GEMV,
// would loop over thousands of rows in a few hundred programs: slower than the atomics.
plan::Guard worth_it(const passes::Transposed &k) {
    passes::Poly parallel = passes::Poly::constant(8);
    for (int a : k.kept) parallel = parallel * passes::Poly::symbol("num_programs(" + std::to_string(a) + ")");
    return {plan::Guard::AtLeast, parallel, passes::Poly::symbol("num_programs(" + std::to_string(k.axis) + ")"), {}};
}

// What the kernel's one store to `param` reaches, in its own terms (its grid, its parameters and
// constexprs: plan::Alloc::run), when that can be every element of the tensor: a top-level store
// (every program runs it once; the IR has no branches). nullopt otherwise: the buffer is zeroed.
std::optional<passes::Coverage> store_cover(const ir::Function &f, const std::string &param) {
    const std::vector<bool> top = passes::top_level(f);
    std::optional<passes::Access> store;
    for (const passes::Access &a : passes::memory_params(f).accesses) {
        if (a.param != param) continue;
        if (a.kind != ir::OpKind::Store || store || !top[static_cast<size_t>(a.op)]) return std::nullopt;
        store = a;
    }
    if (!store) return std::nullopt;
    const ir::Op &op = f.ops[static_cast<size_t>(store->op)];
    passes::Affine affine(f);
    std::string why;
    return passes::write_coverage(f, affine, {store->ptr}, op.has_mask ? op.operands[2] : ir::kNoValue, &why);
}

bool writes_anything(const ir::Function &f) {
    const passes::MemoryParams m = passes::memory_params(f);
    return !m.stored.empty() || !m.accumulated.empty();
}

}  // namespace

int transposing(const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "on") return 8;
    if (v == "off") return 0;
    if (v.size() == 1 && v[0] >= '1' && v[0] <= '8') return v[0] - '0';
    fail(TAD_ERR_INVALID_ARGUMENT, "TAD_TRANSPOSE='" + v + "': expected on, off or 1..8 (iterations per program)");
}

int recomputing(const char *env) {
    const std::string v = env ? env : "";
    if (v.empty() || v == "0") return 0;
    if (v == "1") return 1;
    fail(TAD_ERR_INVALID_ARGUMENT, "TAD_TRANSPOSE_RECOMPUTE='" + v + "': expected 0 or 1");
}

bool stashing(const char *env) { return switched_on("TAD_STASH", env); }

std::optional<Transposition> transpose(ad::Backward &b, const std::set<std::string> &keep, int max_copies,
                                       int recompute, bool stash, const ad::Cleanup &cleanup, std::string *report) {
    if (b.tape || max_copies < 1) return std::nullopt;
    // `keep` names forward parameters; the pass sees their shadows.
    std::set<std::string> shadows;
    for (size_t i = 0; i < b.origins.size(); ++i)
        if (b.origins[i].kind == ad::ParamOrigin::Shadow && keep.count(b.origins[i].primal))
            shadows.insert(b.fn.params[i].name);
    passes::Transposition t = passes::transpose_loops(b.fn, shadows, max_copies, true, recompute, stash);
    *report = t.report;
    if (t.kernels.empty()) return std::nullopt;
    Transposition out;
    for (passes::Transposed &k : t.kernels) {
        plan::Transposed p;
        k.fn.name = b.fn.name + "_" + join(k.params, "_");
        p.bwd.fn = cleanup(k.fn);
        p.bwd.origins = origins_by_name(p.bwd.fn, b, t.stashes);
        // writes are keyed by the forward's parameter, the one the shadow parameter shadows.
        for (const std::string &param : k.params) {
            const std::string primal = b.origins.at(b.fn.param_index(param)).primal;
            p.bwd.writes[primal] =
                passes::GradWrite{passes::GradWrite::Store, "", {}, false, store_cover(p.bwd.fn, param)};
            b.writes.erase(primal);
        }
        p.axis = k.axis;
        p.grid_param = k.grid_param;
        p.trips = k.trips;
        p.widening = k.widening;
        p.tiles = k.tiles;
        plan::Guards gs;
        for (const auto &alternatives : k.guards) {
            const plan::Guards one = guards_of(alternatives);
            gs.insert(gs.end(), one.begin(), one.end());
        }
        gs.push_back(worth_it(k));
        for (const plan::Guard &g : gs)
            if (std::find(out.guards.begin(), out.guards.end(), g) == out.guards.end()) out.guards.push_back(g);
        out.kernels.push_back(std::move(p));
    }
    // A stash typed like a parameter is typed like the forward tensor it reads (a shadow's type is
    // the executor's choice: no type then).
    for (passes::Stash &s : t.stashes) {
        const int i = s.like.empty() ? -1 : b.fn.param_index(s.like);
        s.like = i >= 0 && b.origins[i].kind == ad::ParamOrigin::Primal ? b.origins[i].primal : "";
    }
    ir::Function rest = cleanup(t.rest);
    b.origins = origins_by_name(rest, b, t.stashes);
    b.fn = std::move(rest);
    out.rest = writes_anything(b.fn);
    out.stashes = t.stashes;
    return out;
}

}  // namespace tad::schedule
