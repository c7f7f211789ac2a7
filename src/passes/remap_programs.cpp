#include "passes/remap_programs.h"

#include <algorithm>
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
    const Slice s = slice_of(f);
    *why = slice_problem(f, s);
    if (!why->empty()) return {};
    std::vector<Remapped> out;
    for (bool split_sums : {false, true}) {
        std::string problem;
        std::optional<Remapped> r = remap_on(f, s, split_sums, &problem);
        if (!r && out.empty()) *why = problem;
        if (r && (out.empty() || !(out.front().map == r->map))) out.push_back(std::move(*r));
    }
    if (!out.empty()) why->clear();
    return out;
}

std::optional<std::vector<int64_t>> ProgramMap::box(
    const std::vector<int64_t> &grid, const std::function<bool(const std::string &, int64_t *)> &lookup) const {
    int64_t g[3] = {1, 1, 1};
    for (size_t a = 0; a < 3 && a < grid.size(); ++a) g[a] = grid[a];
    const int64_t total = g[0] * g[1] * g[2];
    if (coords.empty() || total <= 0 || total > kMaxMappedPrograms) return std::nullopt;
    const size_t d = coords.size();
    std::vector<int64_t> points, n(d, 0);
    points.reserve(static_cast<size_t>(total) * d);
    int64_t pid[3] = {0, 0, 0};
    const std::string names[3] = {"program_id(0)", "program_id(1)", "program_id(2)"};
    auto look = [&](const std::string &name, int64_t *out) {
        for (int a = 0; a < 3; ++a)
            if (name == names[a]) return *out = pid[a], true;
        return lookup(name, out);
    };
    for (pid[2] = 0; pid[2] < g[2]; ++pid[2])
        for (pid[1] = 0; pid[1] < g[1]; ++pid[1])
            for (pid[0] = 0; pid[0] < g[0]; ++pid[0])
                for (size_t i = 0; i < d; ++i) {
                    int64_t t = 0;
                    if (!coords[i].eval(look, &t) || t < 0) return std::nullopt;
                    points.push_back(t);
                    n[i] = std::max(n[i], t + 1);
                }
    int64_t size = 1;
    for (int64_t x : n) size *= x;
    if (size != total) return std::nullopt;  // not onto a box of as many programs
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
    if (e.op == HostExpr::Name && e.name.rfind("program_id(", 0) != 0) out.insert(e.name);
    for (const HostExpr &a : e.args) names_of(a, out);
}

}  // namespace

std::vector<std::string> ProgramMap::names() const {
    std::set<std::string> out;
    for (const HostExpr &c : coords) names_of(c, out);
    return {out.begin(), out.end()};
}

std::string ProgramMap::str() const {
    std::string s = "(";
    for (size_t i = 0; i < coords.size(); ++i) s += (i ? ", " : "") + coords[i].str();
    return s + ")";
}

bool ProgramMap::operator==(const ProgramMap &o) const { return str() == o.str(); }

}  // namespace tad::passes
