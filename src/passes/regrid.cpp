#include "passes/regrid.h"

#include <algorithm>
#include <set>

#include "passes/access.h"
#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The grid axes whose program ids or program counts the kernel reads.
std::set<int> grid_axes(const ir::Function &f) {
    std::set<int> axes;
    for (const ir::Op &op : f.ops)
        if (op.kind == OpKind::ProgramId || op.kind == OpKind::NumPrograms) axes.insert(op.axis);
    return axes;
}

// Values every program along the axes `axes` computes alike: outside loops, built from parameters,
// constants and the program ids of other axes by pure ops and by loads of buffers the kernel never
// writes (LayerNorm's weight). They move before the loop. A load moves only from before the
// kernel's first write: should its buffer alias a written one, it reads what it read before, or
// what another program (now an earlier iteration) wrote, which the forward grid left unordered
// anyway.
std::vector<bool> hoistable(const ir::Function &f, const std::vector<int> &axes) {
    const std::vector<bool> top = top_level(f);
    const MemoryParams m = memory_params(f);
    int first_write = static_cast<int>(f.ops.size());
    for (const Access &a : m.accesses)
        if (a.kind != OpKind::Load) first_write = std::min(first_write, a.op);
    std::vector<bool> h(f.values.size(), false);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.result == ir::kNoValue || !top[i]) continue;
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        const bool read_only = op.kind == OpKind::Load && static_cast<int>(i) < first_write &&
                               !m.stored.count(pointer_base(f, op.operands[0]));
        const bool reduced_id =
            op.kind == OpKind::ProgramId && std::find(axes.begin(), axes.end(), op.axis) != axes.end();
        bool ok = (cls != ir::OpClass::Memory || read_only) && cls != ir::OpClass::Loop &&
                  cls != ir::OpClass::Barrier && !reduced_id;
        for (ValueId v : op.operands) ok = ok && h[v];
        h[op.result] = ok;
    }
    return h;
}

struct Candidate {
    int op = -1;
    std::string param;
    // Run-time conditions, one alternative of which makes the flush's lanes distinct (none: proved).
    std::vector<std::vector<Inequality>> when;
    std::optional<Coverage> cover;  // what the flush reaches of its row (a plain-store flush)
};

ir::ValueId mask_of(const ir::Op &add) { return add.has_mask ? add.operands[2] : ir::kNoValue; }

// Whether the flushes of the atomic adds `adds` (to one buffer) write distinct elements over their
// lanes where their mask holds and the program ids of `others`: statically, or (`when`) under
// run-time conditions. Several adds flush one row: they need one mask, and their addresses one
// index map at constant distances (writes_distinct).
bool flush_distinct(const ir::Function &f, Affine &affine, const std::vector<int> &adds, const std::vector<int> &others,
                    std::vector<std::vector<Inequality>> *when, std::string *why) {
    const ir::Op &first = f.ops[adds[0]];
    std::vector<ir::ValueId> ptrs;
    for (int a : adds) {
        if (mask_of(f.ops[a]) != mask_of(first)) return *why = "its adds are masked differently", false;
        ptrs.push_back(f.ops[a].operands[0]);
    }
    if (adds.size() == 1 && writes_distinct(f, affine, ptrs[0], others, why)) return true;
    std::string masked;
    if (!writes_distinct(f, affine, ptrs, mask_of(first), others, -1, when, adds.size() == 1 ? &masked : why))
        return false;
    if (std::any_of(when->begin(), when->end(), [](const auto &alt) { return alt.empty(); })) when->clear();
    return true;
}

// Why the accesses to `param` cannot all become register accumulators ("" when they can: atomic
// adds only, each at top level with address and mask hoistable); its adds in `adds`.
std::string refusal(const ir::Function &f, const MemoryParams &m, const std::vector<bool> &top,
                    const std::vector<bool> &h, const std::string &param, std::vector<int> *adds) {
    for (const Access &a : m.accesses) {
        if (a.param != param) continue;
        const ir::Op &op = f.ops[a.op];
        if (a.kind != OpKind::AtomicAdd) return "the kernel also loads or stores that buffer";
        if (!top[a.op]) return "inside a loop";
        if (!h[op.operands[0]] || (op.has_mask && !h[op.operands[2]]))
            return "its address or mask varies with the program";
        adds->push_back(a.op);
    }
    return "";
}

// The atomic adds that become register accumulators, by buffer: every access to it an atomic add
// refusal() lets through, and (for a plain-store flush) their lanes at different addresses. The
// adds of one buffer share its proof and coverage, and are consecutive in the result (buffer by
// buffer, in op order within one): candidate k is accumulator k whatever order the ops run in.
std::vector<Candidate> candidates(const ir::Function &f, const std::vector<bool> &h, const std::vector<int> &others,
                                  bool atomic_flush, std::string *why) {
    const MemoryParams m = memory_params(f);
    const std::vector<bool> top = top_level(f);
    Affine affine(f);
    std::vector<std::string> added;
    for (const Access &a : m.accesses)
        if (a.kind == OpKind::AtomicAdd && std::find(added.begin(), added.end(), a.param) == added.end())
            added.push_back(a.param);
    std::vector<Candidate> out;
    for (const std::string &param : added) {
        const std::string at = "atomic add to " + param + ": ";
        std::vector<int> adds;
        std::string refused = refusal(f, m, top, h, param, &adds);
        std::vector<std::vector<Inequality>> when;
        std::string alias;
        if (refused.empty() && !atomic_flush && !flush_distinct(f, affine, adds, others, &when, &alias))
            refused = alias;
        if (!refused.empty()) {
            *why += at + refused + "; ";
            continue;
        }
        std::optional<Coverage> cover;
        std::vector<ir::ValueId> ptrs;
        for (int a : adds) ptrs.push_back(f.ops[a].operands[0]);
        std::string uncovered;
        if (!atomic_flush) cover = write_coverage(f, affine, ptrs, mask_of(f.ops[adds[0]]), &uncovered);
        for (int a : adds) out.push_back({a, param, when, cover});
    }
    return out;
}

class Rewriter {
public:
    Rewriter(const ir::Function &f, std::vector<int> axes, bool atomic_flush, std::vector<Candidate> cands, Regrid &r)
        : f_(f),
          axes_(std::move(axes)),
          atomic_(atomic_flush),
          cands_(std::move(cands)),
          r_(r),
          b_(r.fn),
          map_(f.values.size(), ir::kNoValue) {}

    void run() {
        ir::Function &out = r_.fn;
        out = empty_like(f_);
        params();
        const std::vector<bool> h = hoistable(f_, axes_);
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (f_.ops[i].kind != OpKind::Param && f_.ops[i].result != ir::kNoValue && h[f_.ops[i].result]) copy(i);
        loop(h);
    }

private:
    const ir::Function &f_;
    std::vector<int> axes_;
    bool atomic_;
    std::vector<Candidate> cands_;
    Regrid &r_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::vector<ValueId> grids_;  // per axis of axes_, its G
    std::vector<ValueId> slabs_, zeros_, accs_, next_;

    void params() {
        for (const ir::Param &p : f_.params) map_[p.value] = b_.param_like(p, f_.type(p.value));
        const ir::Type i32{ir::DType::I32, false, {}};
        r_.axes = axes_;
        for (int a : axes_) {
            r_.grid_params.push_back(fresh_name(f_, axes_.size() == 1 ? "G" : "G" + std::to_string(a)));
            grids_.push_back(b_.param(r_.grid_params.back(), ir::ParamKind::Int, i32));
        }
        // The adds of one buffer (consecutive in cands_) flush into one partial row: one slab parameter.
        for (size_t k = 0; k < cands_.size(); ++k) {
            const Candidate &c = cands_[k];
            if (k > 0 && cands_[k - 1].param == c.param) {
                if (!atomic_) slabs_.push_back(slabs_.back());
                continue;
            }
            r_.accumulated.push_back(c.param);
            if (!c.when.empty() && std::find(r_.when.begin(), r_.when.end(), c.when) == r_.when.end())
                r_.when.push_back(c.when);
            if (atomic_) continue;
            r_.partial.emplace_back(c.param, fresh_name(f_, c.param + "_slab"));
            r_.covers.push_back(c.cover);
            slabs_.push_back(b_.param(r_.partial.back().second, ir::ParamKind::Int, i32));
        }
    }

    void copy(size_t i) {
        const ir::Op &op = f_.ops[i];
        b_.loc = op.loc;
        const int k = reduced(op);
        if (op.kind == OpKind::NumPrograms && k >= 0) {
            map_[op.result] = grids_[static_cast<size_t>(k)];
            return;
        }
        copy_op(b_, f_, op, map_);
    }

    // The index in axes_ of the axis a program id or count reads, or -1.
    int reduced(const ir::Op &op) const {
        auto it = std::find(axes_.begin(), axes_.end(), op.axis);
        return it == axes_.end() ? -1 : static_cast<int>(it - axes_.begin());
    }

    // The loop's range: the product of the axes' G.
    ValueId total() {
        ValueId t = grids_[0];
        for (size_t k = 1; k < grids_.size(); ++k) t = b_.binary(OpKind::Mul, t, grids_[k]);
        return t;
    }

    // Iteration r's program id along each axis, the first varying fastest.
    std::vector<ValueId> ids(ValueId r) {
        std::vector<ValueId> out;
        ValueId q = r;
        for (size_t k = 0; k + 1 < grids_.size(); ++k) {
            out.push_back(b_.binary(OpKind::Mod, q, grids_[k]));
            q = b_.binary(OpKind::Div, q, grids_[k]);
        }
        out.push_back(q);
        return out;
    }

    int candidate(size_t i) const {
        for (size_t k = 0; k < cands_.size(); ++k)
            if (cands_[k].op == static_cast<int>(i)) return static_cast<int>(k);
        return -1;
    }

    void loop(const std::vector<bool> &h) {
        for (const Candidate &c : cands_) {
            const ir::Type &t = f_.type(f_.ops[c.op].operands[1]);
            ValueId z = b_.constant(0.0, t.elem);
            zeros_.push_back(t.scalar() ? z : b_.broadcast(z, t.shape));
        }
        const ValueId p = b_.program_id(axes_[0]), programs = b_.num_programs(axes_[0]);
        const ValueId r = b_.for_begin(p, total(), programs, "range");
        r_.fn.values[r].name = "r";
        for (size_t k = 0; k < cands_.size(); ++k) accs_.push_back(b_.loop_arg(zeros_[k], static_cast<int>(k)));
        next_.assign(cands_.size(), ir::kNoValue);
        const std::vector<ValueId> id = ids(r);
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::Param || (op.result != ir::kNoValue && h[op.result])) continue;
            if (op.kind == OpKind::ProgramId && reduced(op) >= 0) {
                map_[op.result] = id[static_cast<size_t>(reduced(op))];
                continue;
            }
            const int k = candidate(i);
            if (k < 0) {
                copy(i);
                continue;
            }
            b_.loc = op.loc;
            ValueId v = map_.at(op.operands[1]);
            if (op.has_mask) v = b_.where(map_.at(op.operands[2]), v, zeros_[k]);
            next_[static_cast<size_t>(k)] = b_.binary(OpKind::Add, accs_[k], v);
        }
        b_.for_end(next_);
        std::vector<ValueId> sums;
        for (size_t k = 0; k < cands_.size(); ++k)
            sums.push_back(b_.loop_result(static_cast<int>(k), r_.fn.type(accs_[k])));
        for (size_t k = 0; k < cands_.size(); ++k) flush(k, p, sums[k]);
    }

    void flush(size_t k, ValueId p, ValueId sum) {
        const ir::Op &op = f_.ops[cands_[k].op];
        b_.loc = op.loc;
        ValueId ptr = map_.at(op.operands[0]);
        const ValueId mask = op.has_mask ? map_.at(op.operands[2]) : ir::kNoValue;
        if (atomic_) {
            b_.atomic_add(ptr, sum, mask, "relaxed");
            return;
        }
        // In int64: P rows of a large gradient's storage can pass 2**31 elements.
        ValueId row = b_.binary(OpKind::Mul, b_.cast(p, ir::DType::I64), b_.cast(slabs_[k], ir::DType::I64));
        const ir::Type &t = r_.fn.type(ptr);
        ptr = b_.add_ptr(ptr, t.scalar() ? row : b_.broadcast(row, t.shape));
        b_.store(ptr, sum, mask);
    }
};

// Every non-empty set of `axes`, larger sets first, then in axis order.
std::vector<std::vector<int>> axis_sets(const std::set<int> &axes) {
    const std::vector<int> all(axes.begin(), axes.end());
    std::vector<std::vector<int>> sets;
    for (unsigned m = 1; m < (1u << all.size()); ++m) {
        std::vector<int> s;
        for (size_t i = 0; i < all.size(); ++i)
            if (m & (1u << i)) s.push_back(all[i]);
        sets.push_back(s);
    }
    std::stable_sort(sets.begin(), sets.end(),
                     [](const auto &x, const auto &y) { return x.size() != y.size() ? x.size() > y.size() : x < y; });
    return sets;
}

std::string axes_text(const std::vector<int> &axes) {
    std::string s = axes.size() == 1 ? "axis " : "axes ";
    for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
    return s;
}

}  // namespace

Regrid regrid(const ir::Function &f, bool atomic_flush) {
    Regrid r;
    r.fn = f;
    const std::set<int> axes = grid_axes(f);
    if (axes.empty()) {
        r.why = "the kernel reads no program id";
        return r;
    }
    // The set that accumulates the most gradients; the other axes keep their programs. A refusal
    // names each single axis and, for a grid of several, all of them together.
    std::string singles, all;
    std::vector<Candidate> cands;
    for (const std::vector<int> &set : axis_sets(axes)) {
        std::vector<int> others;
        for (int a : axes)
            if (std::find(set.begin(), set.end(), a) == set.end()) others.push_back(a);
        std::string not_here;
        std::vector<Candidate> here = candidates(f, hoistable(f, set), others, atomic_flush, &not_here);
        if (here.size() > cands.size()) {
            cands = std::move(here);
            r.axes = set;
        }
        const std::string at = axes.size() > 1 ? "along " + axes_text(set) + ": " : "";
        if (set.size() == 1 && !not_here.empty()) singles += at + not_here;
        if (set.size() > 1 && set.size() == axes.size() && !not_here.empty()) all = at + not_here;
    }
    const std::string why = singles + all;
    if (cands.empty()) {
        r.why = why.empty() ? "no atomic add to re-grid" : why.substr(0, why.size() - 2);
        return r;
    }
    Rewriter(f, r.axes, atomic_flush, std::move(cands), r).run();
    r.fn = dce(cse(r.fn));  // the accumulators' zero tiles; program ids of the axes the body does not read
    r.fired = true;
    return r;
}

std::string print(const Regrid &r) {
    if (!r.fired) return "not re-gridded: " + r.why + "\n";
    std::string s = "regrid " + axes_text(r.axes) + " over ";
    for (size_t i = 0; i < r.grid_params.size(); ++i) s += (i ? ", " : "") + r.grid_params[i];
    s += ":";
    for (const std::string &g : r.accumulated) {
        auto it = std::find_if(r.partial.begin(), r.partial.end(), [&](const auto &p) { return p.first == g; });
        const bool covered = it != r.partial.end() && r.covers.at(static_cast<size_t>(it - r.partial.begin()));
        s += " " + g +
             (it == r.partial.end() ? " (atomic flush)"
                                    : " (partial, " + it->second + (covered ? ", rows covered" : "") + ")");
    }
    for (size_t i = 0; i < r.when.size(); ++i) {
        s += i ? " and " : " where ";
        for (size_t k = 0; k < r.when[i].size(); ++k) {
            std::string all;
            for (const Inequality &q : r.when[i][k]) all += (all.empty() ? "" : " and ") + q.str();
            s += (k ? " or " : "") + (r.when[i].size() > 1 ? "(" + all + ")" : all);
        }
    }
    return s + "\n";
}

}  // namespace tad::passes
