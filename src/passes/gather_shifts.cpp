#include "passes/gather_shifts.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The most tiles a term's copy may load. Measured on the H200 (bench/results/2026-12-04-h200-session13.md):
// token shift's copy loads 3 (the three output gradients), a causal convolution's 1 (dY) per tap,
// and both run faster gathered (1.2-1.4x); with a SiLU the convolution's copies load 5 (x at four
// taps, to recompute the activation's input, and dY) and run 1.7-2.8x slower than the adds.
constexpr int kMostCopiedLoads = 3;

constexpr const char *kNoLaterLane = " adds at an address no later lane of the others' reaches";

// An add other than the reference, as a term of it: its ops copied with `range` read as range +
// shift (no range: the same address, no copy).
struct Term {
    int add = -1;
    ValueId range = ir::kNoValue;
    int64_t shift = 0;
    int dim = 0;  // the range's dim in the add's tile
    ValueId ptr = ir::kNoValue, mask = ir::kNoValue;  // the copy's, in the rewritten kernel
};

struct Gather {
    std::string param;
    int ref = -1, at = -1;  // the reference add; the last add, where the sum is added
    std::vector<Term> terms;
    int axis = -1;  // the grid axis the shifted range tiles (-1: none; -2 while planning, until a term fixes it)
    int64_t block = 0;  // the shifted range's size
    Poly size;  // the same, as the forms spell it: a constexpr's name, or the number
};

// The values of the constexprs f is specialized on (it serves those values only), which the affine
// forms carry as symbols. A constexpr f is not specialized on (a size one backward serves for every
// value) has no value here: a proof that needs one fails.
std::map<std::string, int64_t> specialized_values(const ir::Function &f) {
    std::map<std::string, int64_t> out;
    for (const ir::Constexpr &c : f.constexprs) {
        char *end = nullptr;
        const int64_t v = std::strtoll(c.literal.c_str(), &end, 10);
        if (!c.literal.empty() && *end == '\0' &&
            std::find(f.specialized.begin(), f.specialized.end(), c.name) != f.specialized.end())
            out[c.name] = v;
    }
    return out;
}

// p's value where it only reads named constants (runtime symbols that cancel are gone already).
bool known(const std::map<std::string, int64_t> &names, const Poly &p, int64_t *v) {
    return p.eval(
        [&](const std::string &n, int64_t *out) {
            auto it = names.find(n);
            return it != names.end() && (*out = it->second, true);
        },
        v);
}

// Whether pid == size · lane, size a tile's length as the forms spell it (BLOCK_T, or a number).
bool times_block(const std::map<std::string, int64_t> &names, const Poly &pid, const Poly &lane, const Poly &size) {
    Poly q;
    int64_t v = 1;
    return !lane.zero() && pid.divide(lane, &q) && known(names, q - size, &v) && v == 0;
}

bool loop_op(OpKind k) {
    return k == OpKind::ForBegin || k == OpKind::LoopArg || k == OpKind::ForEnd || k == OpKind::LoopResult;
}

// Integer address arithmetic, whose operands the term check reads only through its consumers.
bool index_op(const ir::Function &f, const ir::Op &op) {
    switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::AddPtr:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Const:
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
    case OpKind::Arange:
    case OpKind::Param: return !f.type(op.result).is_float() && f.type(op.result).elem != ir::DType::I1;
    case OpKind::Cast:
        return f.type(op.result).is_ptr || !(f.type(op.result).is_float() || f.type(op.result).elem == ir::DType::I1);
    default: return false;
    }
}

bool is_index(const ir::Type &t) { return t.is_ptr || (!t.is_float() && t.elem != ir::DType::I1); }

// Per value, the dims of its tile along which it varies with the aranges in `ranges`, and whether it
// depends on them through an op that moves lanes (a reduction over such a dim, a transpose, ...).
struct Dims {
    std::vector<std::set<int>> of;
    std::vector<bool> blocked;
};

// Every dim of v's tile.
std::set<int> all_dims(const ir::Function &f, ValueId v) {
    std::set<int> out;
    for (size_t x = 0; x < f.type(v).rank(); ++x) out.insert(static_cast<int>(x));
    return out;
}

// The dims op's result varies along with the sources, from its operands' (`blocked` set where the
// op moves such lanes; with `others`, such a result varies along every dim instead).
std::set<int> dims_after(const ir::Function &f, const ir::Op &op, const Dims &d, bool others, bool *blocked) {
    std::set<int> out;
    const std::set<int> &in = d.of[op.operands[0]];
    const bool moves =
        ir::op_info(op.kind).cls == ir::OpClass::Shape && op.kind != OpKind::Broadcast && op.kind != OpKind::ExpandDims;
    const ir::OpClass cls = ir::op_info(op.kind).cls;
    if (others && (moves || cls == ir::OpClass::Scan || cls == ir::OpClass::Contraction || cls == ir::OpClass::Loop))
        return all_dims(f, op.result);
    if (cls == ir::OpClass::Reduction && (op.axis < 0 || op.axis >= static_cast<int>(f.type(op.operands[0]).rank()))) {
        *blocked = *blocked || (!others && !in.empty());  // a reduction over every dim
        return out;
    }
    switch (cls) {
    case ir::OpClass::Shape:
        if (op.kind == OpKind::Broadcast) {
            const int by = static_cast<int>(f.type(op.result).rank() - f.type(op.operands[0]).rank());
            for (int x : in) out.insert(x + by);
        } else if (op.kind == OpKind::ExpandDims) {
            for (int x : in) out.insert(x >= op.axis ? x + 1 : x);
        } else {
            *blocked = true;
        }
        break;
    case ir::OpClass::Reduction:
        *blocked = *blocked || in.count(op.axis);
        for (int x : in)
            if (x != op.axis) out.insert(x > op.axis && !op.keep_dims ? x - 1 : x);
        break;
    case ir::OpClass::Scan:
    case ir::OpClass::Contraction:
    case ir::OpClass::Loop: *blocked = true; break;
    default:
        for (ValueId v : op.operands) out.insert(d.of[v].begin(), d.of[v].end());
    }
    return out;
}

// `ranges` as the sources; with `others`, also every op that makes a uniform tile vary (a cumsum,
// a join), and a value that an op moving lanes made from a varying one varies along every dim: what
// may vary along a dim other than through the shifted range.
Dims dims_of(const ir::Function &f, const std::set<ValueId> &ranges, bool others = false) {
    Dims d{std::vector<std::set<int>>(f.values.size()), std::vector<bool>(f.values.size(), false)};
    for (const ir::Op &op : f.ops) {
        if (op.result == ir::kNoValue) continue;
        if (ranges.count(op.result)) {
            d.of[op.result] = {0};
            continue;
        }
        if (others && (op.kind == OpKind::CumSum || op.kind == OpKind::Join)) {
            d.of[op.result] = all_dims(f, op.result);
            continue;
        }
        bool any = false, blocked = false;
        for (ValueId v : op.operands) {
            any = any || !d.of[v].empty() || d.blocked[v];
            blocked = blocked || d.blocked[v];
        }
        if (any) d.of[op.result] = dims_after(f, op, d, others, &blocked);
        d.blocked[op.result] = blocked;
    }
    return d;
}

class Gatherer {
public:
    explicit Gatherer(const ir::Function &f) : f_(f), mem_(memory_params(f)), aff_(f), names_(specialized_values(f)) {}

    GatheredShifts run() {
        std::map<std::string, std::vector<int>> adds;
        std::set<std::string> other;  // read, stored to, or added to inside a loop
        for (const Access &a : mem_.accesses) {
            if (a.kind == OpKind::AtomicAdd && a.loop < 0)
                adds[a.param].push_back(a.op);
            else
                other.insert(a.param);
        }
        std::vector<Gather> gathers;
        for (const auto &[param, ops] : adds) {
            if (ops.size() < 2 || other.count(param)) continue;
            std::string why;
            std::optional<Gather> g = plan(param, ops, &why);
            if (g)
                gathers.push_back(*g);
            else if (!why.empty())
                out_.report += param + ": shifted adds not gathered: " + why + "\n";
        }
        // A gather the rewritten kernel does not prove is dropped, and the rest rebuilt without it.
        for (;;) {
            out_.fn = rebuild(gathers);
            Affine after(out_.fn);
            bool dropped = false;
            for (size_t i = 0; i < gathers.size() && !dropped; ++i) {
                const std::string why = verify(after, gathers[i]);
                if (why.empty()) continue;
                out_.report += gathers[i].param + ": shifted adds not gathered: " + why + "\n";
                gathers.erase(gathers.begin() + static_cast<long>(i));
                dropped = true;
            }
            if (!dropped) break;
        }
        for (const Gather &g : gathers) {
            std::string from;
            for (const Term &t : g.terms)
                from += (from.empty() ? "" : ", ") + op_at(f_, t.add) +
                        (t.range == ir::kNoValue ? "" : " at lanes " + std::to_string(t.shift) + " on");
            out_.report += g.param + ": shifted adds gathered into the " + op_at(f_, g.ref) + " (from " + from + ")\n";
            out_.params.push_back(g.param);
        }
        return std::move(out_);
    }

private:
    const ir::Function &f_;
    MemoryParams mem_;
    Affine aff_;
    std::map<std::string, int64_t> names_;
    GatheredShifts out_;
    // f's values in the rewritten kernel (rebuild()).
    std::vector<ValueId> map_;

    // A range's length as the forms spell it: the constexpr its type names, or the number where it
    // is one for every launch (a literal, an expression of specialized constexprs); nullopt for an
    // expression of a constexpr the backward serves several values of ("2 * BLOCK").
    std::optional<Poly> range_size(ValueId range) const {
        const ir::Dim &d = f_.type(range).shape.at(0);
        for (const ir::Constexpr &c : f_.constexprs)
            if (c.name == d.expr) return Poly::symbol(d.expr);
        const bool digits = !d.expr.empty() && std::all_of(d.expr.begin(), d.expr.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
        if (digits || specialized_expression(f_, d.expr)) return Poly::constant(d.value);
        return std::nullopt;
    }

    // The ops the add's address, value and mask are computed from, in op order.
    std::set<int> cone(int add) const {
        std::set<int> ops;
        std::vector<ValueId> todo = f_.ops[add].operands;
        while (!todo.empty()) {
            const ValueId v = todo.back();
            todo.pop_back();
            const int i = f_.values[v].def_op;
            if (!ops.insert(i).second) continue;
            for (ValueId o : f_.ops[i].operands) todo.push_back(o);
        }
        return ops;
    }

    // Why the ops of `add` cannot be copied with `range` shifted ("" when they can).
    std::string copyable(int add, ValueId range, int dim, int axis, const Poly &size) {
        std::set<ValueId> others;
        for (int i : cone(add))
            if (f_.ops[i].kind == OpKind::Arange && f_.ops[i].result != range) others.insert(f_.ops[i].result);
        const Dims dr = dims_of(f_, {range}), dx = dims_of(f_, others, true);
        for (ValueId v : f_.ops[add].operands) {
            for (int x : dr.of[v])
                if (x != dim)
                    return "the " + op_at(f_, add) + "'s value or mask varies with the shifted lanes along another dim";
            if (dx.of[v].count(dim))
                return "the " + op_at(f_, add) + " varies along the shifted dim otherwise than through the range";
        }
        std::set<int> ops = cone(add);
        ops.insert(add);
        for (int i : ops) {
            const std::string why = copyable_op(add, i, dr, dx, axis, size);
            if (!why.empty()) return why;
        }
        return "";
    }

    // Why op i of add's cone cannot be copied with the range shifted ("" when it can); `dr`: dims of
    // the range, `dx`: of the other aranges.
    std::string copyable_op(int add, int i, const Dims &dr, const Dims &dx, int axis, const Poly &size) {
        const ir::Op &op = f_.ops[i];
        if (loop_op(op.kind)) return "the " + op_at(f_, add) + " reads a loop";
        if (op.result != ir::kNoValue) {
            if (dr.blocked[op.result]) return "the " + op_at(f_, i) + " moves the shifted lanes";
            // Two dims of one tile varying with R: shifting R moves both, the address only one.
            if (dr.of[op.result].size() > 1) return "the " + op_at(f_, i) + " reads the shifted lanes along two dims";
            for (int x : dr.of[op.result])
                if (dx.of[op.result].count(x))
                    return "the " + op_at(f_, i) + " reads another tl.arange along the shifted dim";
        }
        if (op.kind == OpKind::Load && !dr.of[op.result].empty() && mem_.stored.count(pointer_base(f_, op.operands[0])))
            return "the " + op_at(f_, i) + " reads a buffer the kernel writes";
        if (op.result != ir::kNoValue && index_op(f_, op)) return "";
        for (ValueId v : op.operands) {
            if (!is_index(f_.type(v))) continue;
            const std::string why = tiled(v, dr.of[v], axis, size);
            if (!why.empty()) return "the " + op_at(f_, i) + " reads " + why;
        }
        return "";
    }

    // Why index value v is not a function of u = block · pid_axis + range and of what the shift
    // leaves alone ("" when it is); `dims`: the dims along which it varies with the range.
    std::string tiled(ValueId v, const std::set<int> &dims, int axis, const Poly &size) {
        const Form &form = aff_.of(v);
        for (const auto &[var, c] : form.terms)
            if ((var.kind == IndexVar::Quotient || var.kind == IndexVar::Remainder) && var.n == axis)
                return "a split of tl.program_id(" + std::to_string(axis) + ")";
        if (dims.empty())
            return axis >= 0 && form.axes.count(axis)
                       ? "tl.program_id(" + std::to_string(axis) + ") apart from the lanes it tiles"
                       : "";
        if (dims.size() > 1) return "the shifted lanes along two dims";
        if (!form.affine) return "a non-affine index of the shifted lanes";
        if (axis < 0) return "";
        const auto lane = form.terms.find(IndexVar{IndexVar::Lane, *dims.begin()});
        const auto pid = form.terms.find(IndexVar{IndexVar::Program, axis});
        const Poly lc = lane == form.terms.end() ? Poly() : lane->second;
        const Poly pc = pid == form.terms.end() ? Poly() : pid->second;
        if (!times_block(names_, pc, lc, size))
            return "tl.program_id(" + std::to_string(axis) + ") other than as " + size.str() +
                   " times the lanes' index";
        return "";
    }

    // The loads of add's cone that vary with the range of `d`: what its copy loads again.
    int copied_loads(int add, const Dims &d) const {
        int n = 0;
        for (int i : cone(add)) n += f_.ops[i].kind == OpKind::Load && !d.of[f_.ops[i].result].empty();
        return n;
    }

    // The term of `add` with its lanes along `dim` (address coefficient c) read k on, through a
    // tl.arange from 0 that the whole grid tiles alike (g's axis and size, where a term fixed them).
    std::optional<Term> shifted(int add, int dim, const Poly &c, int64_t k, const Form &ref, Gather &g,
                                std::string *why) {
        for (int i : cone(add)) {
            const ir::Op &r = f_.ops[i];
            if (r.kind != OpKind::Arange || r.ival != 0) continue;
            const Dims d = dims_of(f_, {r.result});
            if (d.of[f_.ops[add].operands[0]] != std::set<int>{dim}) continue;
            const int64_t b = r.ival2;
            std::optional<Poly> sized = range_size(r.result);
            if (!sized) {
                *why = "the " + op_at(f_, i) + "'s length '" + f_.type(r.result).shape.at(0).expr +
                       "' is an expression of constexprs the backward serves several values of";
                continue;
            }
            const Poly size = *sized;
            if (f_.type(f_.ops[add].operands[0]).shape[static_cast<size_t>(dim)].value != b) continue;
            int a = -1;
            for (const auto &[v, pc] : ref.terms)
                if (v.kind == IndexVar::Program && times_block(names_, pc, c, size)) a = v.n;
            if ((g.axis != -2 && a != g.axis) || (g.block && (b != g.block || size != g.size))) continue;
            const std::string cannot = copyable(add, r.result, dim, a, size);
            if (!cannot.empty()) {
                *why = cannot;
                continue;
            }
            const int loads = copied_loads(add, d);
            if (loads > kMostCopiedLoads) {
                *why = "the " + op_at(f_, add) + " at lanes " + std::to_string(k) + " on would load " +
                       std::to_string(loads) + " tiles again (at most " + std::to_string(kMostCopiedLoads) +
                       ": recomputing the forward there costs more than the adds)";
                continue;
            }
            g.axis = a;
            g.block = b;
            g.size = size;
            return Term{add, r.result, k, dim};
        }
        return std::nullopt;
    }

    // The term of `add` against the reference whose address form is `ref`, or why there is none.
    std::optional<Term> term(int add, const Form &ref, Gather &g, std::string *why) {
        const Form &form = aff_.of(f_.ops[add].operands[0]);
        if (!form.affine || form.terms != ref.terms)
            return *why = "the " + op_at(f_, add) + " adds at an address that is not a shift of the others'",
                   std::nullopt;
        const Poly delta = form.offset - ref.offset;
        int64_t same = 1;
        if (known(names_, delta, &same) && same == 0) return Term{add};
        for (const auto &[var, c] : ref.terms) {
            Poly q;
            int64_t k = 0;
            if (var.kind != IndexVar::Lane || !(Poly() - delta).divide(c, &q) || !known(names_, q, &k) || k <= 0)
                continue;
            if (std::optional<Term> t = shifted(add, var.n, c, k, ref, g, why)) return t;
        }
        if (why->empty()) *why = "the " + op_at(f_, add) + kNoLaterLane;
        return std::nullopt;
    }

    std::optional<Gather> plan(const std::string &param, const std::vector<int> &adds, std::string *why) {
        // Types compare dims by value; tiles spelled by different constexprs (BA, BB, both 16 where
        // traced) are different tiles at other launches, so the spellings must agree too.
        for (int a : adds)
            if (!(f_.type(f_.ops[a].operands[1]) == f_.type(f_.ops[adds[0]].operands[1])) ||
                f_.type(f_.ops[a].operands[1]).str() != f_.type(f_.ops[adds[0]].operands[1]).str() ||
                f_.ops[a].name != f_.ops[adds[0]].name)
                return *why = "its adds differ in type", std::nullopt;
        // Each add in turn as the reference, the last first; the reason kept is the first one's,
        // unless a later one found lanes to shift.
        std::string first;
        for (size_t r = adds.size(); r-- > 0;) {
            Gather g{param, adds[r], adds.back(), {}, -2, 0, Poly()};
            const Form &ref = aff_.of(f_.ops[g.ref].operands[0]);
            std::string no;
            if (!ref.affine) no = "the " + op_at(f_, g.ref) + " adds at a non-affine address";
            for (size_t j = 0; j < adds.size() && no.empty(); ++j) {
                if (j == r) continue;
                std::optional<Term> t = term(adds[j], ref, g, &no);
                if (t)
                    g.terms.push_back(*t);
                else if (no.empty())
                    no = "the " + op_at(f_, adds[j]) + " cannot be shifted";
            }
            if (no.empty()) {
                if (g.axis == -2) g.axis = -1;
                return g;
            }
            // A reference none of the others is a later lane of says least: another's reason wins.
            if (first.empty() ||
                (first.find(kNoLaterLane) != std::string::npos && no.find(kNoLaterLane) == std::string::npos))
                first = no;
        }
        return *why = first, std::nullopt;
    }

    // i1 tile `valid` ([block], along the range) placed along `dim` of a tile of type t.
    static ValueId along(ir::Builder &b, ValueId valid, const ir::Type &t, int dim) {
        ValueId v = valid;
        for (int d = 0; d < dim; ++d) v = b.expand_dims(v, 0);
        while (b.func().type(v).rank() < t.rank()) v = b.expand_dims(v, static_cast<int>(b.func().type(v).rank()));
        return b.broadcast(v, t.shape);
    }

    // Whether lane u + k is one the grid runs: B·pid + R + k < B·G, that is R + k < B·(G - pid). The
    // programs left are capped at (B + k) // B + 1, past which every lane of the range passes: no
    // product overflows, and the tile compares with a scalar bound as `offs < N` does (Triton keeps
    // such a mask's contiguity, so the loads it masks stay vectorized).
    ValueId lanes_run(ir::Builder &b, ValueId shifted, int64_t k, const Gather &g) const {
        const std::vector<ir::Dim> shape = b.func().type(shifted).shape;
        const std::set<std::string> named = g.size.symbols();
        const ValueId bc =
            b.constant(static_cast<double>(g.block), ir::DType::I32, named.empty() ? "" : *named.begin());
        if (g.axis < 0) return b.binary(OpKind::Lt, shifted, b.broadcast(bc, shape));
        const ValueId kc = b.constant(static_cast<double>(k), ir::DType::I32);
        const ValueId one = b.constant(1.0, ir::DType::I32);
        const ValueId most = b.binary(OpKind::Add, b.binary(OpKind::Div, b.binary(OpKind::Add, bc, kc), bc), one);
        const ValueId left = b.binary(OpKind::Sub, b.num_programs(g.axis), b.program_id(g.axis));
        const ValueId bound = b.binary(OpKind::Mul, bc, b.binary(OpKind::Minimum, left, most));
        return b.binary(OpKind::Lt, shifted, b.broadcast(bound, shape));
    }

    // The term's value at the reference's lanes, zero where its copied mask or E fails.
    ValueId copy_term(ir::Builder &b, Term &t, const Gather &g) {
        const ir::Op &add = f_.ops[t.add];
        const ir::Type &tile = f_.type(add.operands[1]);
        const ValueId zero = b.broadcast(b.constant(0.0, tile.elem), tile.shape);
        if (t.range == ir::kNoValue) {
            t.ptr = map_[add.operands[0]];
            t.mask = add.has_mask ? map_[add.operands[2]] : ir::kNoValue;
            return t.mask == ir::kNoValue ? map_[add.operands[1]] : b.where(t.mask, map_[add.operands[1]], zero);
        }
        const std::vector<ir::Dim> rshape = f_.type(t.range).shape;
        const ValueId k = b.broadcast(b.constant(static_cast<double>(t.shift), ir::DType::I32), rshape);
        std::vector<ValueId> local = map_;
        local[t.range] = b.binary(OpKind::Add, map_[t.range], k);
        const ValueId valid = lanes_run(b, local[t.range], t.shift, g);
        const Dims d = dims_of(f_, {t.range});
        for (int i : cone(t.add)) {
            const ir::Op &op = f_.ops[i];
            if (op.result == ir::kNoValue || op.result == t.range || d.of[op.result].empty()) continue;
            if (op.kind != OpKind::Load) {
                copy_op(b, f_, op, local);
                continue;
            }
            const ir::Type &lt = f_.type(op.operands[0]);
            ValueId m = along(b, valid, lt, *d.of[op.result].begin());
            if (op.has_mask) m = b.binary(OpKind::And, local[op.operands[1]], m);
            b.loc = op.loc;
            local[op.result] =
                b.load(local[op.operands[0]], m, op.has_other ? local[op.operands[op.has_mask ? 2 : 1]] : ir::kNoValue);
            b.func().values[local[op.result]].name = f_.values[op.result].name;
        }
        t.ptr = local[add.operands[0]];
        t.mask = add.has_mask ? local[add.operands[2]] : ir::kNoValue;
        ValueId keep = along(b, valid, tile, t.dim);
        if (t.mask != ir::kNoValue) keep = b.binary(OpKind::And, t.mask, keep);
        return b.where(keep, local[add.operands[1]], zero);
    }

    ir::Function rebuild(std::vector<Gather> &gathers) {
        ir::Function out = empty_like(f_);
        ir::Builder b(out);
        map_.assign(f_.values.size(), ir::kNoValue);
        std::map<int, Gather *> at;
        std::set<int> dropped;
        for (Gather &g : gathers) {
            at[g.at] = &g;
            dropped.insert(g.ref);
            for (const Term &t : g.terms) dropped.insert(t.add);
        }
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b.loc = op.loc;
            if (auto g = at.find(static_cast<int>(i)); g != at.end()) {
                const ir::Op &ref = f_.ops[g->second->ref];
                ValueId sum = map_[ref.operands[1]];
                for (Term &t : g->second->terms) {
                    const ValueId v = copy_term(b, t, *g->second);
                    b.loc = ref.loc;
                    sum = b.binary(OpKind::Add, sum, v);
                }
                b.atomic_add(map_[ref.operands[0]], sum, ref.has_mask ? map_[ref.operands[2]] : ir::kNoValue, ref.name);
            } else if (dropped.count(static_cast<int>(i))) {
                continue;
            } else if (op.kind == OpKind::Param) {
                map_[op.result] = b.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            } else {
                copy_op(b, f_, op, map_);
            }
        }
        return out;
    }

    // Why the rewritten kernel's copy of a term is not right (""): its address must be the
    // reference's, its mask must imply the reference's and, shifted, bound u from below by 0.
    std::string verify(Affine &after, const Gather &g) const {
        const ir::Op &ref = f_.ops[g.ref];
        const ValueId rptr = map_.at(ref.operands[0]);
        const ValueId rmask = ref.has_mask ? map_.at(ref.operands[2]) : ir::kNoValue;
        if (!after.only_bounds(rmask)) return "the " + op_at(f_, g.ref) + "'s mask is not a conjunction of bounds";
        const std::vector<Bound> need = after.bounds(rmask);
        for (const Term &t : g.terms) {
            const Form &a = after.of(t.ptr), &r = after.of(rptr);
            int64_t moved = 1;
            if (!a.affine || a.terms != r.terms || !known(names_, a.offset - r.offset, &moved) || moved != 0)
                return "the " + op_at(f_, t.add) + " shifted does not add at the reference's address";
            const std::vector<Bound> have = after.bounds(t.mask);
            for (const Bound &c : need)
                if (!implied(have, c.form.terms, c.bound - c.form.offset))
                    return "the " + op_at(f_, t.add) + "'s mask does not imply the " + op_at(f_, g.ref) + "'s";
            if (t.range != ir::kNoValue && !from_zero(have, g, t.dim))
                return "the " + op_at(f_, t.add) + "'s mask does not keep its lanes " + std::to_string(t.shift) +
                       " past the first";
        }
        return "";
    }

    // Whether one of `have` says terms < limit (a bound at most as large, by a constant).
    bool implied(const std::vector<Bound> &have, const std::map<IndexVar, Poly> &terms, const Poly &limit) const {
        for (const Bound &d : have) {
            int64_t slack = 0;
            if (d.form.terms == terms && known(names_, limit - (d.bound - d.form.offset), &slack) && slack >= 0)
                return true;
        }
        return false;
    }

    // Whether one of `have` says u >= 0 (u = block · pid_axis + lane `dim`): -c·u + off < bound
    // with c > 0 and off - bound + c >= 0.
    bool from_zero(const std::vector<Bound> &have, const Gather &g, int dim) const {
        for (const Bound &d : have) {
            const auto lane = d.form.terms.find(IndexVar{IndexVar::Lane, dim});
            int64_t c = 0, rest = 0;
            if (lane == d.form.terms.end() || !lane->second.constant_value(&c) || c >= 0) continue;
            const auto pid = d.form.terms.find(IndexVar{IndexVar::Program, g.axis});
            const bool tiled =
                g.axis < 0 || (pid != d.form.terms.end() && times_block(names_, pid->second, lane->second, g.size));
            if (tiled && d.form.terms.size() == (g.axis < 0 ? 1u : 2u) &&
                known(names_, d.form.offset - d.bound, &rest) && rest - c >= 0)
                return true;
        }
        return false;
    }
};

}  // namespace

GatheredShifts gather_shifted_adds(const ir::Function &f) { return Gatherer(f).run(); }

}  // namespace tad::passes
