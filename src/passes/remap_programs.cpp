#include "passes/remap_programs.h"

#include <algorithm>
#include <functional>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

bool int_scalar(const ir::Function &f, ValueId v) {
    const ir::Type &t = f.type(v);
    return t.scalar() && !t.is_ptr && !ir::dtype_is_float(t.elem);
}

// Whether an op with an integer scalar result may belong to the program ids' slice.
bool slice_kind(const ir::Function &f, const ir::Op &op) {
    switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Mod:
    case OpKind::Minimum:
    case OpKind::Maximum: return true;
    case OpKind::Cast:  // a widening cast between integers keeps every value
        return int_scalar(f, op.operands[0]) &&
               ir::dtype_rank(f.type(op.result).elem) >= ir::dtype_rank(f.type(op.operands[0]).elem);
    default: return false;
    }
}

// The values that depend on a program id, and the ops of the program ids' scalar integer slice.
// Loop-carried values count as dependent: what a loop computes is not followed.
struct Slice {
    std::vector<bool> dep, in;
};

Slice slice_of(const ir::Function &f) {
    Slice s{std::vector<bool>(f.values.size(), false), std::vector<bool>(f.ops.size(), false)};
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.result == ir::kNoValue) continue;
        bool d = op.kind == OpKind::ProgramId || op.kind == OpKind::LoopArg || op.kind == OpKind::LoopResult;
        for (ValueId v : op.operands) d = d || s.dep[v];
        s.dep[op.result] = d;
        s.in[i] = d && int_scalar(f, op.result) && slice_kind(f, op);
    }
    return s;
}

bool in_slice(const ir::Function &f, const Slice &s, ValueId v) { return s.in[f.values[v].def_op]; }

// The slice's values that other ops read, in value order.
std::vector<ValueId> exits(const ir::Function &f, const Slice &s) {
    std::set<ValueId> out;
    for (size_t i = 0; i < f.ops.size(); ++i)
        if (!s.in[i])
            for (ValueId v : f.ops[i].operands)
                if (in_slice(f, s, v)) out.insert(v);
    return {out.begin(), out.end()};
}

// The coordinates an exit is made of: the exit with outer adds, multiplications and subtractions of
// independent values (and widening casts) peeled off; with `split_sums`, sums and differences of
// two dependent values are split into the coordinates of each (a base offset z * stride_z + h *
// stride_h is made of z and h; a grouped tile row first_m + r stays one coordinate without).
void coordinates(const ir::Function &f, const Slice &s, ValueId v, bool split_sums, std::set<ValueId> &out) {
    const ir::Op &op = f.def(v);
    if (!in_slice(f, s, v) || op.kind == OpKind::ProgramId) {
        out.insert(v);
        return;
    }
    const bool commutes = op.kind == OpKind::Add || op.kind == OpKind::Mul;
    const bool a = s.dep[op.operands[0]], b = op.operands.size() > 1 && s.dep[op.operands[1]];
    if ((commutes || op.kind == OpKind::Sub) && a && !b)
        coordinates(f, s, op.operands[0], split_sums, out);
    else if (commutes && b && !a)
        coordinates(f, s, op.operands[1], split_sums, out);
    else if (op.kind == OpKind::Cast)
        coordinates(f, s, op.operands[0], split_sums, out);
    else if (split_sums && (op.kind == OpKind::Add || op.kind == OpKind::Sub) && a && b) {
        coordinates(f, s, op.operands[0], split_sums, out);
        coordinates(f, s, op.operands[1], split_sums, out);
    } else {
        out.insert(v);
    }
}

// Why the program ids cannot be remapped from what the slice is ("" when they can).
std::string slice_problem(const ir::Function &f, const Slice &s) {
    const std::vector<bool> top = top_level(f);
    bool affine = true;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind == OpKind::NumPrograms)
            return "the kernel reads num_programs (" + op_at(f, static_cast<int>(i)) + ")";
        if ((s.in[i] || op.kind == OpKind::ProgramId) && !top[i])
            return "a program id's arithmetic inside a loop (" + op_at(f, static_cast<int>(i)) + ")";
        if (!s.in[i]) continue;
        const bool scaled = op.kind == OpKind::Mul && s.dep[op.operands[0]] && s.dep[op.operands[1]];
        affine = affine && !scaled && op.kind != OpKind::Div && op.kind != OpKind::Mod && op.kind != OpKind::Minimum &&
                 op.kind != OpKind::Maximum;
    }
    return affine ? "its program ids are used affinely already" : "";
}

// `f` with program_id(i) for coordinate i, the slice that computed them gone.
ir::Function rewrite(const ir::Function &f, const std::vector<ValueId> &coords) {
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    for (const ir::Op &op : f.ops) {
        const auto at = op.result == ir::kNoValue ? coords.end() : std::find(coords.begin(), coords.end(), op.result);
        if (at == coords.end()) {
            copy_op(b, f, op, map);
            continue;
        }
        b.loc = op.loc;
        const ValueId v = b.program_id(static_cast<int>(at - coords.begin()));
        out.values[v].name = f.values[op.result].name;
        map[op.result] = v;
    }
    return dce(with_params(std::move(out), f, map, {}));
}

// Whether an op of `f` outside loop `l` writes memory.
bool writes_outside(const ir::Function &f, const ir::Loop &l) {
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const bool inside = static_cast<int>(i) >= l.begin && static_cast<int>(i) <= l.last();
        if (!inside && (f.ops[i].kind == OpKind::Store || f.ops[i].kind == OpKind::AtomicAdd)) return true;
    }
    return false;
}

bool mentions_program_id(const HostExpr &e) {
    if (e.op == HostExpr::Name && e.name.rfind("program_id(", 0) == 0) return true;
    return std::any_of(e.args.begin(), e.args.end(), mentions_program_id);
}

// How a persistent loop's carried value follows its variable t: t itself (started at the loop's
// start, advanced by its step), or t - step (started one step before: the counter a tile loop
// advances at the top of its body, as Triton's persistent matmul does with its epilogue's tile).
enum class Induction { None, Same, StepBehind };

// Loop arg k of `l` as an induction of its variable: its yield adds the loop's step to it, and its
// initial value is the loop's start or the start minus the step.
Induction induction(const ir::Function &f, const ir::Loop &l, size_t k) {
    const ir::Op &begin = f.ops[l.begin], &arg = f.ops[l.args[k]];
    const ValueId lo = begin.operands[0], step = begin.operands[2], init = arg.operands[0];
    const ir::Op &next = f.def(f.ops[l.end].operands[k]);
    const bool adds_step = next.kind == OpKind::Add && ((next.operands[0] == arg.result && next.operands[1] == step) ||
                                                        (next.operands[1] == arg.result && next.operands[0] == step));
    if (!adds_step) return Induction::None;
    if (init == lo) return Induction::Same;
    const ir::Op &start = f.def(init);
    const bool behind = start.kind == OpKind::Sub && start.operands[0] == lo && start.operands[1] == step;
    return behind ? Induction::StepBehind : Induction::None;
}

// `f` with loop `l`'s iterations as programs: its variable is program_id(axis), each carried value
// the induction `kinds` says.
ir::Function without_loop(const ir::Function &f, const ir::Loop &l, int axis, const std::vector<Induction> &kinds) {
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    // A counter one step behind, advanced in the body, is the loop's variable once advanced.
    std::set<ValueId> advanced;
    for (size_t k = 0; k < l.args.size(); ++k)
        if (kinds[k] == Induction::StepBehind) advanced.insert(f.ops[l.end].operands[k]);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        const auto arg = std::find(l.args.begin(), l.args.end(), static_cast<int>(i));
        if (static_cast<int>(i) == l.end ||
            std::find(l.results.begin(), l.results.end(), static_cast<int>(i)) != l.results.end())
            continue;
        if (op.result != ir::kNoValue && advanced.count(op.result)) {
            map[op.result] = map[f.ops[l.begin].result];
            continue;
        }
        b.loc = op.loc;
        if (arg != l.args.end()) {
            const ValueId t = map[f.ops[l.begin].result];
            map[op.result] = kinds[static_cast<size_t>(arg - l.args.begin())] == Induction::Same
                                 ? t
                                 : b.binary(OpKind::Sub, t, map[f.ops[l.begin].operands[2]]);
            continue;
        }
        if (static_cast<int>(i) != l.begin) {
            copy_op(b, f, op, map);
            continue;
        }
        const ValueId v = b.program_id(axis);
        out.values[v].name = f.values[op.result].name;
        map[op.result] = v;
    }
    // cse: the advanced counter's tile arithmetic is now the variable's, computed twice.
    return dce(cse(with_params(std::move(out), f, map, {})));
}

// The inductions of `l`'s carried values; nullopt where one is not, or where a loop result is read
// after the loop.
std::optional<std::vector<Induction>> inductions(const ir::Function &f, const ir::Loop &l,
                                                 const std::vector<std::vector<int>> &uses) {
    std::vector<Induction> kinds;
    for (size_t k = 0; k < l.args.size(); ++k) {
        if (!uses[f.ops[l.results[k]].result].empty()) return std::nullopt;
        kinds.push_back(induction(f, l, k));
        if (kinds.back() == Induction::None) return std::nullopt;
    }
    return kinds;
}

// Whether the program id a persistent loop starts at is read only by the loop: its start, its
// inductions' initial values, and the `start - step` of those that start one step behind.
bool start_only(const ir::Function &f, const ir::Loop &l, const std::vector<std::vector<int>> &uses) {
    const ValueId pid = f.ops[l.begin].operands[0];
    auto inits = [&](ValueId v) {
        return std::any_of(l.args.begin(), l.args.end(),
                           [&](int a) { return f.ops[static_cast<size_t>(a)].operands[0] == v; });
    };
    for (int user : uses[pid]) {
        const ir::Op &op = f.ops[static_cast<size_t>(user)];
        const bool arg = std::find(l.args.begin(), l.args.end(), user) != l.args.end();
        const bool behind = op.kind == OpKind::Sub && op.operands[1] == f.ops[l.begin].operands[2] && inits(op.result);
        if (user != l.begin && !arg && !behind) return false;
    }
    return true;
}

// A persistent kernel's loop over its tiles (remap_programs.h): the top-level loop that starts at a
// program id read nowhere else, carries only inductions of its variable and leaves no write
// outside it, as programs of their own (`out`); nullopt where there is none.
std::optional<PersistentTiles> persistent_tiles(const ir::Function &f, ir::Function *out) {
    std::string problem;
    const std::vector<ir::Loop> ls = ir::loops(f, &problem);
    const std::vector<std::vector<int>> uses = ir::users(f);
    for (const ir::Loop &l : ls) {
        const ir::Op &begin = f.ops[l.begin];
        const ir::Op &start = f.def(begin.operands[0]);
        if (l.parent != -1 || start.kind != OpKind::ProgramId || writes_outside(f, l)) continue;
        const std::optional<std::vector<Induction>> kinds = inductions(f, l, uses);
        if (!kinds || !start_only(f, l, uses)) continue;
        std::string why;
        std::optional<HostExpr> hi = host_expr(f, begin.operands[1], &why, true);
        std::optional<HostExpr> step = host_expr(f, begin.operands[2], &why, true);
        if (!hi || !step || mentions_program_id(*hi) || mentions_program_id(*step)) continue;
        HostExpr lo;
        lo.op = HostExpr::Name;
        lo.name = "program_id(" + std::to_string(start.axis) + ")";
        *out = without_loop(f, l, start.axis, *kinds);
        return PersistentTiles{start.axis, lo, *hi, *step};
    }
    return std::nullopt;
}

// The map of a kernel whose program ids are affine already: each program id its own coordinate.
Remapped identity(ir::Function g) {
    Remapped r{std::move(g), {}};
    const std::vector<int> axes = program_axes(r.fn);
    for (int a = 0; a <= axes.back(); ++a) {
        HostExpr e;
        e.op = HostExpr::Name;
        e.name = "program_id(" + std::to_string(a) + ")";
        r.map.coords.push_back(e);
    }
    return r;
}

// The rewrite on the coordinates the exits are made of, or nullopt with `why`.
std::optional<Remapped> remap_on(const ir::Function &f, const Slice &s, bool split_sums, std::string *why) {
    std::set<ValueId> found;
    for (ValueId e : exits(f, s)) coordinates(f, s, e, split_sums, found);
    const std::vector<ValueId> coords(found.begin(), found.end());
    if (coords.size() > 3) {
        *why = std::to_string(coords.size()) + " tile coordinates, more than a grid's three axes";
        return std::nullopt;
    }
    Remapped r{rewrite(f, coords), {}};
    for (ValueId c : coords) {
        std::string problem;
        std::optional<HostExpr> e = host_expr(f, c, &problem, true);
        if (!e) {
            *why = "a tile coordinate the host cannot compute: " + problem;
            return std::nullopt;
        }
        r.map.coords.push_back(std::move(*e));
    }
    return r;
}

}  // namespace

std::vector<Remapped> remap_programs(const ir::Function &f, std::string *why) {
    if (program_axes(f).empty()) {
        *why = "no program id";
        return {};
    }
    ir::Function g = f;
    const std::optional<PersistentTiles> tiles = persistent_tiles(f, &g);
    const Slice s = slice_of(g);
    *why = slice_problem(g, s);
    if (tiles && *why == "its program ids are used affinely already") {
        why->clear();
        Remapped r = identity(std::move(g));
        r.map.tiles = tiles;
        return {std::move(r)};
    }
    if (!why->empty()) return {};
    std::vector<Remapped> out;
    for (bool split_sums : {false, true}) {
        std::string problem;
        std::optional<Remapped> r = remap_on(g, s, split_sums, &problem);
        if (!r && out.empty()) *why = problem;
        if (!r) continue;
        r->map.tiles = tiles;
        if (out.empty() || !(out.front().map == r->map)) out.push_back(std::move(*r));
    }
    if (!out.empty()) why->clear();
    return out;
}

namespace {

// The programs a map enumerates: the launch's, or with persistent tiles each program's iterations,
// passed to `each` as three program ids; false (stopped) where a bound cannot be computed, a step
// is not positive, or there are more than kMaxMappedPrograms.
bool each_program(const ProgramMap &m, const int64_t (&g)[3],
                  const std::function<bool(const std::string &, int64_t *)> &lookup,
                  const std::function<bool(const int64_t (&)[3])> &each) {
    int64_t pid[3] = {0, 0, 0}, count = 0;
    const std::string names[3] = {"program_id(0)", "program_id(1)", "program_id(2)"};
    auto look = [&](const std::string &name, int64_t *out) {
        for (int a = 0; a < 3; ++a)
            if (name == names[a]) return *out = pid[a], true;
        return lookup(name, out);
    };
    for (pid[2] = 0; pid[2] < g[2]; ++pid[2])
        for (pid[1] = 0; pid[1] < g[1]; ++pid[1])
            for (pid[0] = 0; pid[0] < g[0]; ++pid[0]) {
                if (!m.tiles) {
                    if (++count > kMaxMappedPrograms || !each(pid)) return false;
                    continue;
                }
                int64_t lo = 0, hi = 0, step = 0, tile[3] = {pid[0], pid[1], pid[2]};
                if (!m.tiles->lo.eval(look, &lo) || !m.tiles->hi.eval(look, &hi) || !m.tiles->step.eval(look, &step) ||
                    step <= 0)
                    return false;
                for (int64_t t = lo; t < hi; t += step) {
                    tile[m.tiles->axis] = t;
                    if (++count > kMaxMappedPrograms || !each(tile)) return false;
                }
            }
    return true;
}

}  // namespace

std::optional<std::vector<int64_t>> ProgramMap::box(
    const std::vector<int64_t> &grid, const std::function<bool(const std::string &, int64_t *)> &lookup) const {
    int64_t g[3] = {1, 1, 1};
    for (size_t a = 0; a < 3 && a < grid.size(); ++a) g[a] = grid[a];
    if (coords.empty() || g[0] * g[1] * g[2] <= 0) return std::nullopt;
    const std::string sizes[3] = {"num_programs(0)", "num_programs(1)", "num_programs(2)"};
    auto names = [&](const std::string &name, int64_t *out) {
        for (int a = 0; a < 3; ++a)
            if (name == sizes[a]) return *out = g[a], true;
        return lookup(name, out);
    };
    const size_t d = coords.size();
    std::vector<int64_t> points, n(d, 0);
    const int64_t *at = nullptr;
    auto look = [&](const std::string &name, int64_t *out) {
        const std::string ids[3] = {"program_id(0)", "program_id(1)", "program_id(2)"};
        for (int a = 0; a < 3; ++a)
            if (name == ids[a]) return *out = at[a], true;
        return names(name, out);
    };
    const bool all = each_program(*this, g, names, [&](const int64_t(&p)[3]) {
        at = p;
        for (size_t i = 0; i < d; ++i) {
            int64_t t = 0;
            if (!coords[i].eval(look, &t) || t < 0) return false;
            points.push_back(t);
            n[i] = std::max(n[i], t + 1);
        }
        return true;
    });
    if (!all) return std::nullopt;
    const int64_t total = static_cast<int64_t>(points.size() / d);
    int64_t size = 1;
    for (int64_t x : n) size *= x;
    if (total == 0 || size != total) return std::nullopt;  // not onto a box of as many programs
    std::vector<bool> seen(static_cast<size_t>(total), false);
    for (size_t p = 0; p < points.size(); p += d) {
        int64_t index = 0;
        for (size_t i = d; i-- > 0;) index = index * n[i] + points[p + i];
        if (seen[static_cast<size_t>(index)]) return std::nullopt;  // two programs, one tile
        seen[static_cast<size_t>(index)] = true;
    }
    return n;
}

namespace {

void names_of(const HostExpr &e, std::set<std::string> &out) {
    if (e.op == HostExpr::Name && e.name.rfind("program_id(", 0) != 0 && e.name.rfind("num_programs(", 0) != 0)
        out.insert(e.name);
    for (const HostExpr &a : e.args) names_of(a, out);
}

}  // namespace

std::vector<std::string> ProgramMap::names() const {
    std::set<std::string> out;
    for (const HostExpr &c : coords) names_of(c, out);
    if (tiles)
        for (const HostExpr *e : {&tiles->lo, &tiles->hi, &tiles->step}) names_of(*e, out);
    return {out.begin(), out.end()};
}

std::string ProgramMap::str() const {
    std::string s = tiles ? "programs t in range(" + tiles->lo.str() + ", " + tiles->hi.str() + ", " +
                                tiles->step.str() + ") along axis " + std::to_string(tiles->axis) + ", coordinates ("
                          : "(";
    for (size_t i = 0; i < coords.size(); ++i) s += (i ? ", " : "") + coords[i].str();
    return s + ")";
}

bool ProgramMap::operator==(const ProgramMap &o) const { return str() == o.str(); }

}  // namespace tad::passes
