#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "interp/elementwise.h"
#include "interp/interp.h"
#include "interp/tile.h"
#include "support/error.h"

namespace tad::interp {

using ir::DType;
using ir::OpKind;
using ir::ValueId;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// tl.rand's lanes: a counter-based hash of (seed, offset) to [0, 1), deterministic like Triton's
// Philox stream (checks compare a kernel with itself, so the stream need not be Philox).
double uniform(uint64_t seed, uint64_t offset) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + offset;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 40) / static_cast<double>(1ull << 24);
}

// tl.randn's lanes: Box-Muller of two uniforms, the first kept off 0 as Triton keeps it (>= 1e-7).
double normal(uint64_t seed, uint64_t offset) {
    const double u1 = std::max(1e-7, uniform(seed, offset)), u2 = uniform(~seed, offset);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

[[noreturn]] void bad_ir(const ir::Function &fn, size_t op, const std::string &what) {
    throw Error(TAD_ERR_INTERNAL, "interp: '" + fn.name + "' op " + std::to_string(op) + " (" +
                                      ir::op_name(fn.ops[op].kind) + "): " + what);
}

// Pointer lanes are only moved, selected, offset and dereferenced; everything else computes on
// numbers, so a Tile holds either kind of lanes, never both.
bool pointer_operand_ok(const ir::Function &fn, const ir::Op &op, size_t k) {
    const bool ptr = fn.type(op.operands[k]).is_ptr;
    switch (op.kind) {
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Join:
    case OpKind::Split:
    case OpKind::LoopArg: return ptr == fn.type(op.result).is_ptr;
    case OpKind::ForEnd: return true;  // yields: the verifier matched them to the carried types
    case OpKind::Where: return k == 0 ? !ptr : ptr == fn.type(op.result).is_ptr;
    case OpKind::AddPtr:
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicAdd: return ptr == (k == 0);
    default: return !ptr;
    }
}

// What run() derives once from the function, so that the per-program loop does no shape work and,
// after the first program, no allocation.
struct Plan {
    std::vector<Shape> shape;  // per value
    std::vector<std::vector<ValueId>> dead_after;  // per op: the values it uses (or defines) last
    std::vector<std::vector<ValueId>> dead_per_iteration;  // per for_end: body values it uses last
    std::vector<std::vector<int64_t>> strides;  // per op: a Broadcast's source strides
    std::vector<ir::Loop> loops;
    std::vector<int> loop_at;  // per op: the loop it begins, or -1
};

std::vector<Shape> value_shapes(const ir::Function &fn) {
    std::vector<Shape> shapes;
    for (const ir::ValueInfo &v : fn.values) {
        Shape s;
        for (const ir::Dim &d : v.type.shape) s.push_back(d.value);
        shapes.push_back(std::move(s));
    }
    return shapes;
}

// What the interpreter relies on beyond ir::verify; a Broadcast's source strides go to the plan.
void check_op(const ir::Function &fn, size_t i, Plan &p) {
    const ir::Op &op = fn.ops[i];
    for (size_t k = 0; k < op.operands.size(); ++k)
        if (!pointer_operand_ok(fn, op, k))
            bad_ir(fn, i, "operand " + std::to_string(k) + " has the wrong kind (pointer / number)");
    switch (op.kind) {
    case OpKind::Param:
        if (op.ival < 0 || op.ival >= static_cast<int64_t>(fn.params.size())) bad_ir(fn, i, "no such parameter");
        break;
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
        if (op.axis < 0 || op.axis > 2) bad_ir(fn, i, "axis out of range");
        break;
    case OpKind::Arange:
        if (op.ival2 - op.ival != numel(p.shape[op.result])) bad_ir(fn, i, "range length differs from its type");
        break;
    case OpKind::Broadcast:
        if (!broadcast_strides(p.shape[op.operands[0]], p.shape[op.result], &p.strides[i]))
            bad_ir(fn, i, "shapes do not broadcast");
        break;
    case OpKind::ExpandDims:
        if (numel(p.shape[op.operands[0]]) != numel(p.shape[op.result])) bad_ir(fn, i, "changes the element count");
        break;
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
        if (op.axis < -1 || op.axis >= static_cast<int>(p.shape[op.operands[0]].size()))
            bad_ir(fn, i, "axis out of range");
        break;
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicAdd:
        for (size_t k = 1; k < op.operands.size(); ++k)
            if (p.shape[op.operands[k]] != p.shape[op.operands[0]])
                bad_ir(fn, i, "operand shapes differ from the address");
        break;
    default: break;
    }
}

// Per value, the op index after which it is dead (-1: never used). A value used inside a loop that it
// is defined outside of lives until that loop ends.
std::vector<int> last_uses(const ir::Function &fn, const std::vector<ir::Loop> &loops) {
    std::vector<int> last(fn.values.size(), -1);
    for (size_t i = 0; i < fn.ops.size(); ++i)
        for (ValueId v : fn.ops[i].operands) {
            const int def = fn.values[v].def_op, use = static_cast<int>(i);
            int at = use;
            for (const ir::Loop &l : loops)
                if (l.begin < use && use < l.end && !(l.begin < def && def < l.end)) at = std::max(at, l.end);
            last[v] = std::max(last[v], at);
        }
    return last;
}

// Each value is released after its last use, or at its definition when unused; a body value whose
// last use is its loop's for_end is released at the end of every iteration.
void plan_releases(const ir::Function &fn, Plan &p) {
    const std::vector<int> last = last_uses(fn, p.loops);
    p.dead_after.resize(fn.ops.size());
    p.dead_per_iteration.resize(fn.ops.size());
    for (size_t v = 0; v < fn.values.size(); ++v) {
        const int at = last[v] >= 0 ? last[v] : fn.values[v].def_op;
        if (at < 0) continue;
        const int def = fn.values[v].def_op;
        bool body_value_at_end = false;
        for (const ir::Loop &l : p.loops)
            body_value_at_end = body_value_at_end || (at == l.end && l.begin < def && def < l.end);
        (body_value_at_end ? p.dead_per_iteration : p.dead_after)[at].push_back(static_cast<ValueId>(v));
    }
}

// A tile of more lanes than Triton allows (TRITON_MAX_TENSOR_NUMEL) would only exhaust memory here:
// refused before any program runs, at the op that makes it.
void check_tile_sizes(const ir::Function &fn, const std::vector<Shape> &shapes) {
    for (size_t v = 0; v < shapes.size(); ++v) {
        int64_t n = 1;
        std::string dims;
        for (int64_t d : shapes[v]) {
            n = d > 0 && n > kMaxTileElements / d ? kMaxTileElements + 1 : n * d;
            dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        }
        if (n <= kMaxTileElements) continue;
        const int def = fn.values[v].def_op;
        const ir::SrcLoc loc = def >= 0 ? fn.ops[static_cast<size_t>(def)].loc : ir::SrcLoc{};
        throw Error(TAD_ERR_INVALID_ARGUMENT, where(fn.source_path, loc.line, loc.col) + ": a tile of shape [" + dims +
                                                  "] in '" + fn.name + "' has more than " +
                                                  std::to_string(kMaxTileElements) +
                                                  " elements, the interpreter's limit (and Triton's); use smaller "
                                                  "block sizes");
    }
}

Plan make_plan(const ir::Function &fn) {
    const std::string problem = ir::verify(fn);
    if (!problem.empty()) throw Error(TAD_ERR_INTERNAL, "interp: '" + fn.name + "' is not valid IR: " + problem);
    Plan p;
    p.shape = value_shapes(fn);
    check_tile_sizes(fn, p.shape);
    p.loops = ir::loops(fn);
    p.loop_at.assign(fn.ops.size(), -1);
    for (size_t l = 0; l < p.loops.size(); ++l) p.loop_at[p.loops[l].begin] = static_cast<int>(l);
    p.strides.resize(fn.ops.size());
    for (size_t i = 0; i < fn.ops.size(); ++i) check_op(fn, i, p);
    plan_releases(fn, p);
    return p;
}

// Join's lanes: a's at even positions, b's at odd ones (the new last dim is the fastest).
template <class T> void interleave(const std::vector<T> &a, const std::vector<T> &b, std::vector<T> &out) {
    out.resize(2 * a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        out[2 * i] = a[i];
        out[2 * i + 1] = b[i];
    }
}

// Split's lanes: every other lane of x, from lane `half`.
template <class T> void every_other(const std::vector<T> &x, size_t half, std::vector<T> &out) {
    out.resize(x.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = x[2 * i + half];
}

double typed_const(double v, DType t) {
    if (t == DType::I1) return v != 0;
    return ir::dtype_is_float(t) ? v : std::trunc(v);
}

// Runs programs one at a time. Tiles of dead values go to a pool and are reused, so with the same
// program body every time the pool settles after the first program and no further allocation happens.
class Machine {
public:
    Machine(const ir::Function &fn, const std::vector<ArgValue> &args, const std::array<int64_t, 3> &grid, Memory &mem)
        : fn_(fn), args_(args), grid_(grid), mem_(mem), plan_(make_plan(fn)), vals_(fn.values.size()) {}

    void program(const std::array<int64_t, 3> &pid) {
        pid_ = pid;
        at_ = 0;
        try {
            run_ops(0, fn_.ops.size());
        } catch (const Error &e) {
            const ir::SrcLoc &loc = fn_.ops[at_].loc;
            throw Error(e.status(), where(fn_.source_path, loc.line, loc.col) + ": " + e.what() + " in program (" +
                                        std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " +
                                        std::to_string(pid[2]) + ")");
        }
    }

private:
    void run_ops(size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) {
            at_ = i;
            if (plan_.loop_at[i] >= 0) {
                i = run_loop(plan_.loops[plan_.loop_at[i]]);
                continue;
            }
            exec(i);
            for (ValueId v : plan_.dead_after[i]) release(v);
        }
    }

    int64_t scalar_int(ValueId v) const { return static_cast<int64_t>(in(v).num.at(0)); }

    // Runs a loop; returns the index of its last structural op.
    size_t run_loop(const ir::Loop &l) {
        const ir::Op &begin = fn_.ops[l.begin];
        const int64_t lo = scalar_int(begin.operands[0]), hi = scalar_int(begin.operands[1]),
                      step = scalar_int(begin.operands[2]);
        if (step <= 0) throw Error(TAD_ERR_INVALID_ARGUMENT, "loop step " + std::to_string(step) + " is not positive");
        const ir::Op &end = fn_.ops[l.end];
        std::vector<Tile> carried(l.args.size());
        for (size_t k = 0; k < l.args.size(); ++k) carried[k] = in(fn_.ops[l.args[k]].operands[0]);
        const size_t body = static_cast<size_t>(l.args.empty() ? l.begin : l.args.back()) + 1;
        bool iv_unused = false;
        for (ValueId v : plan_.dead_after[l.begin]) {
            if (v == begin.result)
                iv_unused = true;
            else
                release(v);  // bounds last used by for_begin
        }
        for (int64_t iv = lo; iv < hi; iv += step) {
            at_ = static_cast<size_t>(l.begin);
            def(begin.result).num.assign(1, static_cast<double>(iv));
            if (iv_unused) release(begin.result);
            for (size_t k = 0; k < l.args.size(); ++k) {
                def(fn_.ops[l.args[k]].result) = carried[k];
                for (ValueId v : plan_.dead_after[l.args[k]]) release(v);
            }
            run_ops(body, static_cast<size_t>(l.end));
            for (size_t k = 0; k < l.args.size(); ++k) carried[k] = in(end.operands[k]);
            for (ValueId v : plan_.dead_per_iteration[l.end]) release(v);
        }
        for (ValueId v : plan_.dead_after[l.end]) release(v);
        for (size_t k = 0; k < l.results.size(); ++k) {
            def(fn_.ops[l.results[k]].result) = std::move(carried[k]);
            for (ValueId v : plan_.dead_after[l.results[k]]) release(v);
        }
        return static_cast<size_t>(l.last());
    }

    const ir::Type &type(ValueId v) const { return fn_.type(v); }
    const Tile &in(ValueId v) const { return vals_[v]; }

    Tile &def(ValueId v) {
        if (!pool_.empty()) {
            std::swap(vals_[v], pool_.back());
            pool_.pop_back();
        }
        return vals_[v];
    }

    void release(ValueId v) {
        pool_.emplace_back();
        std::swap(pool_.back(), vals_[v]);
    }

    void exec(size_t i) {
        const ir::Op &op = fn_.ops[i];
        const std::vector<ValueId> &a = op.operands;
        switch (op.kind) {
        case OpKind::Param: return param(op);
        case OpKind::Const: return def(op.result).num.assign(1, typed_const(op.fval, type(op.result).elem));
        case OpKind::ProgramId: return def(op.result).num.assign(1, static_cast<double>(pid_[op.axis]));
        case OpKind::NumPrograms: return def(op.result).num.assign(1, static_cast<double>(grid_[op.axis]));
        case OpKind::Arange: {
            std::vector<double> &t = def(op.result).num;
            t.resize(static_cast<size_t>(op.ival2 - op.ival));
            for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(op.ival + static_cast<int64_t>(i));
            return;
        }
        case OpKind::Broadcast: return broadcast(op, plan_.strides[i]);
        case OpKind::Rand:
        case OpKind::Randn: {
            const uint64_t seed = static_cast<uint64_t>(static_cast<int64_t>(in(a[0]).num.at(0)));
            const std::vector<double> &off = in(a[1]).num;
            std::vector<double> &t = def(op.result).num;
            t.resize(off.size());
            for (size_t k = 0; k < off.size(); ++k) {
                const uint64_t o = static_cast<uint64_t>(static_cast<int64_t>(off[k]));
                t[k] = op.kind == OpKind::Rand ? uniform(seed, o) : normal(seed, o);
            }
            return;
        }
        case OpKind::Trans: {
            const Shape &s = plan_.shape[a[0]];
            const std::vector<double> &x = in(a[0]).num;
            std::vector<double> &t = def(op.result).num;
            t.resize(x.size());
            for (int64_t r = 0; r < s[0]; ++r)
                for (int64_t c = 0; c < s[1]; ++c) t[c * s[0] + r] = x[r * s[1] + c];
            return;
        }
        case OpKind::Dot: {
            const Shape &sa = plan_.shape[a[0]], &sb = plan_.shape[a[1]];
            const std::vector<double> &x = in(a[0]).num, &y = in(a[1]).num;
            std::vector<double> &t = def(op.result).num;
            t.assign(static_cast<size_t>(sa[0] * sb[1]), 0.0);
            for (int64_t m = 0; m < sa[0]; ++m)
                for (int64_t k = 0; k < sa[1]; ++k) {
                    const double xv = x[m * sa[1] + k];
                    for (int64_t n = 0; n < sb[1]; ++n) t[m * sb[1] + n] += xv * y[k * sb[1] + n];
                }
            return;
        }
        case OpKind::ExpandDims:
        case OpKind::Reshape:  // row-major lanes do not move
        case OpKind::StopGradient:
        case OpKind::GradVia:
        case OpKind::ReplayAs: {  // operand 0's value
            Tile &t = def(op.result);
            t.num = in(a[0]).num;
            t.buf = in(a[0]).buf;
            t.off = in(a[0]).off;
            return;
        }
        case OpKind::Join: return join(op);
        case OpKind::Split: return split(op);
        case OpKind::Where: return select(op);
        case OpKind::Cast: return cast(type(a[0]).elem, type(op.result).elem, in(a[0]).num, def(op.result).num);
        case OpKind::AddPtr: return add_ptr(op);
        case OpKind::ReduceSum:
        case OpKind::ReduceMax:
        case OpKind::ReduceMin: return reduce(op.kind, in(a[0]).num, plan_.shape[a[0]], op.axis, def(op.result).num);
        case OpKind::Argmax:
        case OpKind::Argmin: return arg_extremum(op.kind, in(a[0]).num, plan_.shape[a[0]], op.axis, def(op.result).num);
        case OpKind::CumSum: return cumsum(in(a[0]).num, plan_.shape[a[0]], op.axis, op.ival != 0, def(op.result).num);
        case OpKind::Load:
        case OpKind::Store:
        case OpKind::AtomicAdd: return access(op);
        case OpKind::Barrier: return;  // programs run one lane at a time, in op order
        default:  // the elementwise numeric ops
            if (a.size() == 1) return unary(op.kind, type(a[0]).elem, in(a[0]).num, def(op.result).num);
            return binary(op.kind, type(a[0]).elem, in(a[0]).num, in(a[1]).num, def(op.result).num);
        }
    }

    void param(const ir::Op &op) {
        const ArgValue &arg = args_[op.ival];
        Tile &t = def(op.result);
        if (arg.kind == ArgValue::Pointer) {
            t.buf.assign(1, arg.buffer);
            t.off.assign(1, arg.offset);
        } else {
            t.num.assign(1, arg.kind == ArgValue::Int ? static_cast<double>(arg.ival) : arg.fval);
        }
    }

    void broadcast(const ir::Op &op, const std::vector<int64_t> &strides) {
        const Tile &s = in(op.operands[0]);
        Tile &t = def(op.result);
        const Shape &to = plan_.shape[op.result];
        if (type(op.result).is_ptr) {
            gather(s.buf, to, strides, t.buf);
            gather(s.off, to, strides, t.off);
        } else {
            gather(s.num, to, strides, t.num);
        }
    }

    void join(const ir::Op &op) {
        const Tile &a = in(op.operands[0]), &b = in(op.operands[1]);
        Tile &t = def(op.result);
        if (type(op.result).is_ptr) {
            interleave(a.buf, b.buf, t.buf);
            interleave(a.off, b.off, t.off);
        } else {
            interleave(a.num, b.num, t.num);
        }
    }

    void split(const ir::Op &op) {
        const Tile &x = in(op.operands[0]);
        const size_t half = static_cast<size_t>(op.ival);
        Tile &t = def(op.result);
        if (type(op.result).is_ptr) {
            every_other(x.buf, half, t.buf);
            every_other(x.off, half, t.off);
        } else {
            every_other(x.num, half, t.num);
        }
    }

    // An undefined condition lane gives an undefined result lane.
    void select(const ir::Op &op) {
        const std::vector<double> &c = in(op.operands[0]).num;
        const Tile &x = in(op.operands[1]), &y = in(op.operands[2]);
        Tile &t = def(op.result);
        if (type(op.result).is_ptr) {
            t.buf.resize(c.size());
            t.off.resize(c.size());
            for (size_t i = 0; i < c.size(); ++i) {
                const Tile &pick = c[i] != 0 ? x : y;
                t.buf[i] = pick.buf[i];
                t.off[i] = c[i] != c[i] ? kUndefinedOffset : pick.off[i];
            }
        } else {
            t.num.resize(c.size());
            for (size_t i = 0; i < c.size(); ++i) t.num[i] = c[i] != c[i] ? kNaN : c[i] != 0 ? x.num[i] : y.num[i];
        }
    }

    void add_ptr(const ir::Op &op) {
        const Tile &p = in(op.operands[0]);
        const std::vector<double> &d = in(op.operands[1]).num;
        Tile &t = def(op.result);
        t.buf = p.buf;
        t.off.resize(d.size());
        for (size_t i = 0; i < d.size(); ++i) {
            int64_t k;
            t.off[i] = p.off[i] != kUndefinedOffset && int_lane(d[i], &k) ? wrap_add(p.off[i], k) : kUndefinedOffset;
        }
    }

    // Load, Store and AtomicAdd, lane by lane in order.
    void access(const ir::Op &op) {
        const bool load = op.kind == OpKind::Load;
        Tile *res = load ? &def(op.result) : nullptr;
        const Tile &p = in(op.operands[0]);
        const Tile *val = load ? nullptr : &in(op.operands[1]);
        const Tile *mask = op.has_mask ? &in(op.operands[load ? 1 : 2]) : nullptr;
        const Tile *other = op.has_other ? &in(op.operands[2]) : nullptr;
        const bool bool_elem = type(op.operands[0]).elem == DType::I1;
        auto fault = [&](const std::string &what) { throw Error(TAD_ERR_INVALID_ARGUMENT, what); };
        const std::string kind = ir::op_name(op.kind);  // fits the small-string buffer: no allocation
        const size_t n = p.off.size();
        if (res) res->num.resize(n);
        for (size_t i = 0; i < n; ++i) {
            if (mask) {
                const double m = mask->num[i];
                if (m != m) fault(kind + " with an undefined mask lane");
                if (m == 0) {
                    if (res) res->num[i] = other ? other->num[i] : undefined_lane(op.loc);
                    continue;
                }
            }
            Buffer &b = mem_.buffers[p.buf[i]];
            const int64_t at = p.off[i];
            if (at == kUndefinedOffset) fault(kind + " of '" + b.name + "' at an undefined element");
            if (at < 0 || at >= static_cast<int64_t>(b.data.size()))
                fault("out-of-bounds " + kind + " of '" + b.name + "' at element " + std::to_string(at) + " (size " +
                      std::to_string(b.data.size()) + ")");
            double &cell = b.data[at];
            if (load)
                res->num[i] = bool_elem && cell == cell ? double(cell != 0) : cell;
            else if (op.kind == OpKind::Store)
                cell = val->num[i];
            else
                cell += val->num[i];
        }
    }

    const ir::Function &fn_;
    const std::vector<ArgValue> &args_;
    const std::array<int64_t, 3> grid_;
    Memory &mem_;
    const Plan plan_;
    std::vector<Tile> vals_;  // per value; valid from its definition to its last use
    std::vector<Tile> pool_;
    std::array<int64_t, 3> pid_{};
    size_t at_ = 0;  // the op running, for diagnostics
};

void check_args(const ir::Function &fn, const std::vector<ArgValue> &args, Memory &mem) {
    if (args.size() != fn.params.size())
        throw Error(TAD_ERR_INVALID_ARGUMENT, "interp: '" + fn.name + "' takes " + std::to_string(fn.params.size()) +
                                                  " arguments, got " + std::to_string(args.size()));
    static const char *const kind_name[] = {"a pointer", "an integer", "a float"};
    for (size_t i = 0; i < args.size(); ++i) {
        const ir::Param &p = fn.params[i];
        const ArgValue::Kind want = p.kind == ir::ParamKind::Pointer ? ArgValue::Pointer
                                    : p.kind == ir::ParamKind::Int   ? ArgValue::Int
                                                                     : ArgValue::Float;
        if (args[i].kind != want)
            throw Error(TAD_ERR_INVALID_ARGUMENT, "interp: argument " + std::to_string(i) + " ('" + p.name + "') of '" +
                                                      fn.name + "' must be " + kind_name[want] + ", got " +
                                                      kind_name[args[i].kind]);
        if (want == ArgValue::Pointer) mem.at(args[i].buffer);  // throws for an unknown buffer
    }
}

}  // namespace

void run(const ir::Function &fn, const std::vector<ArgValue> &args, const std::array<int64_t, 3> &grid, Memory &mem) {
    for (int64_t g : grid)
        if (g < 0) throw Error(TAD_ERR_INVALID_ARGUMENT, "interp: negative grid dim " + std::to_string(g));
    check_args(fn, args, mem);
    Machine m(fn, args, grid, mem);
    for (int64_t z = 0; z < grid[2]; ++z)
        for (int64_t y = 0; y < grid[1]; ++y)
            for (int64_t x = 0; x < grid[0]; ++x) m.program({x, y, z});
}

}  // namespace tad::interp
