#include "passes/segment_atomics.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "passes/affine.h"
#include "passes/lane_ends.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The most addresses a tile adds to by segments (each a reduction over the tile); beyond, its lanes
// add on their own.
constexpr int kMaxSegments = 16;

// Adds rewritten together, and their run state in the rewrite (carried values, next values, results).
struct Group {
    std::vector<int> ops;  // atomic add op indices, in order
    std::vector<ValueId> bases;  // their scalar pointers (values of the input)
    ValueId offset = ir::kNoValue, mask = ir::kNoValue;
    int loop = -1;  // innermost loop holding them (ir::loops index), -1: none
    bool runs = false;
    std::vector<ValueId> carried, next, results;  // at, live, then one run per add
};

// `(kMaxSegments - 1) * D >= n` for the add's innermost divisor D and tile size n (segment_atomics.h),
// or nullopt where either is not a value the host has.
std::optional<Inequality> few_addresses(const ir::Function &f, Affine &a, const LaneEnds &lanes, const ir::Op &add) {
    const ValueId d = lanes.innermost_divisor(add);
    if (d == ir::kNoValue) return std::nullopt;
    const Form &divisor = a.of(d);
    if (!divisor.invariant() || divisor.data >= 0) return std::nullopt;
    const ir::Dim &n = f.type(add.operands[0]).shape.at(0);
    std::optional<Poly> size;
    if (n.expr == std::to_string(n.value)) size = Poly::constant(n.value);
    for (const ir::Constexpr &c : f.constexprs)
        if (c.name == n.expr) size = Poly::symbol(c.name);  // its value in other specializations too
    if (!size) return std::nullopt;
    return Inequality{Poly::constant(kMaxSegments - 1) * divisor.offset, *size};
}

class Segmenter {
public:
    // `lanes`: past kMaxSegments addresses a tile's lanes add on their own; otherwise its segments
    // loop runs over every address.
    Segmenter(const ir::Function &f, bool lanes)
        : f_(f), lanes_(lanes), loops_(ir::loops(f)), b_(out_.fn), map_(f.values.size(), ir::kNoValue) {
        out_.fn = empty_like(f);
    }

    SegmentedAtomics run() {
        find_groups();
        if (groups_.empty()) return {f_, {}, 0, std::nullopt, {}};
        for (size_t i = 0; i < f_.ops.size(); ++i) step(static_cast<int>(i));
        for (const Group *g : last_flushes_) flush(*g, g->results[1], g->results, true);
        return std::move(out_);
    }

private:
    const ir::Function &f_;
    const bool lanes_;
    std::vector<ir::Loop> loops_;
    SegmentedAtomics out_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::vector<Group> groups_;
    std::map<int, int> group_of_;  // atomic add op -> groups_ index

    int innermost(int i) const {
        int best = -1;
        for (size_t l = 0; l < loops_.size(); ++l)
            if (loops_[l].begin < i && i < loops_[l].end) best = static_cast<int>(l);
        return best;  // loops_ lists outer loops first, so the last holding i is the innermost
    }

    bool float_values(const Group &g) const {
        for (int i : g.ops) {
            const ir::DType e = f_.type(f_.ops[i].operands[1]).elem;
            if (e != ir::DType::F32 && e != ir::DType::F64) return false;
        }
        return true;
    }

    void find_groups() {
        Affine a(f_);
        std::set<std::string> loaded;
        for (const ir::Op &op : f_.ops)
            if (op.kind == OpKind::Load) loaded.insert(pointer_base(f_, op.operands[0]));
        std::vector<ValueId> none;
        ir::Builder unused(out_.fn);
        LaneEnds check(f_, unused, none);
        std::map<std::tuple<ValueId, ValueId, int, std::string>, int> by_key;
        bool guarded = true;
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            ValueId base = ir::kNoValue, offset = ir::kNoValue;
            if (op.kind != OpKind::AtomicAdd || !shared_lanes(f_, a, op.operands[0], &base, &offset) ||
                !check.repeating_unit_steps(op))
                continue;
            const std::optional<Inequality> few = few_addresses(f_, a, check, op);
            guarded = guarded && few.has_value();
            if (few && std::find(out_.few_when.begin(), out_.few_when.end(), *few) == out_.few_when.end())
                out_.few_when.push_back(*few);
            const ValueId mask = op.has_mask ? op.operands[2] : ir::kNoValue;
            const int loop = innermost(static_cast<int>(i));
            const auto key = std::make_tuple(offset, mask, loop, op.name);
            auto [it, fresh] = by_key.emplace(key, static_cast<int>(groups_.size()));
            if (fresh) {
                Group g;
                g.offset = offset;
                g.mask = mask;
                g.loop = loop;
                groups_.push_back(std::move(g));
            }
            groups_[it->second].ops.push_back(static_cast<int>(i));
            groups_[it->second].bases.push_back(base);
            group_of_[static_cast<int>(i)] = it->second;
            const std::string p = pointer_base(f_, op.operands[0]);
            if (std::find(out_.params.begin(), out_.params.end(), p) == out_.params.end()) out_.params.push_back(p);
        }
        if (!guarded) out_.few_when.clear();
        for (Group &g : groups_) {
            g.runs = g.loop >= 0 && float_values(g);
            for (int i : g.ops) g.runs = g.runs && !loaded.count(pointer_base(f_, f_.ops[i].operands[0]));
            // A run carried across iterations is flushed at its base in a later iteration or after the
            // loop: the base must be the same in every iteration (a base that moves with the loop would
            // take one iteration's sums to another's address).
            for (ValueId base : g.bases) g.runs = g.runs && invariant_in(base, loops_[static_cast<size_t>(g.loop)]);
            out_.runs += g.runs;
        }
    }

    // Whether v has one value in every iteration of loop l: computed outside it, or inside it by pure
    // ops from such values (no iterator, carried value, load or nested loop's result of l's body).
    bool invariant_in(ValueId v, const ir::Loop &l) const {
        const int d = f_.values[v].def_op;
        if (d < l.begin || d > l.last()) return true;
        const ir::Op &op = f_.ops[static_cast<size_t>(d)];
        const ir::OpClass c = ir::op_info(op.kind).cls;
        if (c == ir::OpClass::Memory || c == ir::OpClass::Loop || c == ir::OpClass::Random || op.kind == OpKind::Param)
            return false;
        return std::all_of(op.operands.begin(), op.operands.end(), [&](ValueId o) { return invariant_in(o, l); });
    }

    // Value v (invariant_in loop l) where the loop has ended: what its body computed is computed again
    // from the values before the loop. `after` maps the values found so far (one per flush).
    ValueId after_loop(ValueId v, const ir::Loop &l, std::vector<ValueId> &after) {
        if (after[v] != ir::kNoValue) return after[v];
        const int d = f_.values[v].def_op;
        if (d < l.begin || d > l.last()) return after[v] = map_.at(v);
        const ir::Op &op = f_.ops[static_cast<size_t>(d)];
        for (ValueId o : op.operands) after_loop(o, l, after);
        copy_op(b_, f_, op, after);
        return after[v];
    }

    std::vector<Group *> runs_of(int loop) {
        std::vector<Group *> out;
        for (Group &g : groups_)
            if (g.runs && g.loop == loop) out.push_back(&g);
        return out;
    }

    int loop_beginning(int i) const {
        for (size_t l = 0; l < loops_.size(); ++l)
            if (loops_[l].begin == i) return static_cast<int>(l);
        return -1;
    }

    int loop_ending(int i) const {
        for (size_t l = 0; l < loops_.size(); ++l)
            if (loops_[l].end == i) return static_cast<int>(l);
        return -1;
    }

    int loop_of_result(int i) const {
        for (size_t l = 0; l < loops_.size(); ++l)
            if (!loops_[l].results.empty() && loops_[l].results.back() == i) return static_cast<int>(l);
        return -1;
    }

    void step(int i) {
        const ir::Op &op = f_.ops[i];
        b_.loc = op.loc;
        if (op.kind == OpKind::AtomicAdd && group_of_.count(i)) {
            Group &g = groups_[group_of_[i]];
            if (i == g.ops.back()) rewrite(g);
            return;
        }
        if (op.kind == OpKind::ForEnd && !runs_of(loop_ending(i)).empty()) {
            const int l = loop_ending(i);
            std::vector<ValueId> yields;
            for (ValueId v : op.operands) yields.push_back(map_.at(v));
            for (Group *g : runs_of(l)) yields.insert(yields.end(), g->next.begin(), g->next.end());
            b_.for_end(yields);
            if (loops_[l].results.empty()) close(l);
            return;
        }
        const int begun = op.kind == OpKind::ForBegin ? loop_beginning(i) : -1;
        if (begun >= 0) open(begun);
        copy(op);
        if (begun >= 0 && loops_[begun].args.empty()) carry(begun);
        const int l = innermost(i);
        if (op.kind == OpKind::LoopArg && i == loops_[l].args.back()) carry(l);
        if (op.kind == OpKind::LoopResult && loop_of_result(i) >= 0) close(loop_of_result(i));
    }

    void copy(const ir::Op &op) {
        if (op.kind == OpKind::Param) {
            map_[op.result] = b_.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            return;
        }
        copy_op(b_, f_, op, map_);
    }

    ValueId zeros(ir::Type t) {  // by value: building the constant may grow the values a reference points into
        const ValueId z = b_.constant(0, t.elem);
        return t.scalar() ? z : b_.broadcast(z, t.shape);
    }

    void name(ValueId v, const std::string &n) { out_.fn.values.at(v).name = n; }
    std::string param_of(int op) const { return pointer_base(f_, f_.ops[op].operands[0]); }

    // The initial run states, before the loop.
    void open(int loop) {
        for (Group *g : runs_of(loop)) {
            g->carried = {b_.constant(0, f_.type(g->offset).elem), b_.constant(0, ir::DType::I1)};
            for (int i : g->ops) g->carried.push_back(zeros(f_.type(f_.ops[i].operands[1])));
        }
    }

    // The run states carried, after the loop's own carried values.
    void carry(int loop) {
        int index = static_cast<int>(loops_[loop].args.size());
        for (Group *g : runs_of(loop))
            for (size_t k = 0; k < g->carried.size(); ++k) {
                g->carried[k] = b_.loop_arg(g->carried[k], index++);
                name(g->carried[k], k == 0 ? "run_at" : k == 1 ? "run_live" : param_of(g->ops[k - 2]) + "_run");
            }
    }

    // The loop's results for the run states, then the last runs' adds: right there in a loop that
    // runs again (its runs start over), at the kernel's end after a top-level one (so that nothing
    // writing memory separates it from a sibling loop fuse_loops.h could fuse it with).
    void close(int loop) {
        int index = static_cast<int>(loops_[loop].results.size());
        for (Group *g : runs_of(loop)) {
            g->results.clear();
            for (ValueId v : g->carried) g->results.push_back(b_.loop_result(index++, out_.fn.type(v)));
            if (loops_[loop].parent >= 0)
                flush(*g, g->results[1], g->results, true);
            else
                last_flushes_.push_back(g);
        }
    }

    // Ops appended by `body` run only where scalar `cond` holds: a loop of 0 or 1 trips.
    template <class Body> void guarded(ValueId cond, const std::string &iv, Body body) {
        const ValueId one = b_.constant(1, ir::DType::I32);
        const ValueId it = b_.for_begin(b_.constant(0, ir::DType::I32), b_.cast(cond, ir::DType::I32), one, "range");
        name(it, iv);
        body();
        b_.for_end({});
    }

    // The runs' sums added at their address, where `when` holds; `after`, past the end of the loop
    // holding the adds (their bases computed again there).
    void flush(const Group &g, ValueId when, const std::vector<ValueId> &state, bool after) {
        std::vector<ValueId> past(after ? f_.values.size() : 0, ir::kNoValue), bases;
        for (ValueId base : g.bases)
            bases.push_back(after ? after_loop(base, loops_[static_cast<size_t>(g.loop)], past) : map_.at(base));
        guarded(when, "flush", [&] {
            for (size_t k = 0; k < g.ops.size(); ++k)
                b_.atomic_add(b_.add_ptr(bases[k], state[0]), b_.reduce(OpKind::ReduceSum, state[k + 2], -1, false),
                              ir::kNoValue, f_.ops[g.ops[k]].name);
        });
    }

    // Lanes `x` of the group's active ones (all lanes when its adds have no mask).
    ValueId active(const Group &g, ValueId x) {
        return g.mask == ir::kNoValue ? x : b_.binary(OpKind::And, map_.at(g.mask), x);
    }

    void rewrite(Group &g) {
        const ir::Op &first = f_.ops[g.ops.front()];
        ValueId lo = ir::kNoValue, hi = ir::kNoValue, any = ir::kNoValue;
        LaneEnds(f_, b_, map_).ends(first, &lo, &hi, &any);
        const ir::Type t = f_.type(g.offset);
        ValueId split = any;
        if (g.runs) {
            const ValueId one = b_.binary(OpKind::And, any, b_.binary(OpKind::Eq, lo, hi));
            const ValueId at = g.carried[0], live = g.carried[1];
            const ValueId same = b_.binary(OpKind::And, live, b_.binary(OpKind::Eq, lo, at));
            const ValueId reset = b_.binary(OpKind::And, one, b_.unary(OpKind::Not, same));
            flush(g, b_.binary(OpKind::And, live, reset), g.carried, false);
            g.next = {b_.where(one, lo, at), b_.binary(OpKind::Or, live, one)};
            const ValueId adding = active(g, b_.broadcast(one, t.shape));
            for (size_t k = 0; k < g.ops.size(); ++k) {
                const ValueId v = map_.at(f_.ops[g.ops[k]].operands[1]), run = g.carried[k + 2];
                const ValueId z = zeros(out_.fn.type(v));
                const ValueId kept = b_.where(b_.broadcast(reset, t.shape), z, run);
                g.next.push_back(b_.binary(OpKind::Add, kept, b_.where(adding, v, z)));
            }
            split = b_.binary(OpKind::And, any, b_.unary(OpKind::Not, one));
        }
        segments(g, lo, hi, split);
    }

    // A loop over the addresses lo..hi (where `split` holds), each getting the sum of its lanes; with
    // lanes_, past kMaxSegments addresses (a division by a small value: group norm with HW = 1), the
    // lanes' own adds instead, in a loop of 0 or 1 trips (as an if / else, Triton gave group norm's
    // loop body a layout without vector loads; as two loops it did not: bench/results, session 7).
    void segments(const Group &g, ValueId lo, ValueId hi, ValueId split) {
        const ir::Type t = f_.type(g.offset);
        const ValueId width =
            b_.cast(b_.binary(OpKind::Add, b_.binary(OpKind::Sub, hi, lo), b_.constant(1, t.elem)), ir::DType::I32);
        const ValueId few =
            lanes_ ? b_.binary(OpKind::Le, width, b_.constant(kMaxSegments, ir::DType::I32)) : ir::kNoValue;
        const ValueId when = lanes_ ? b_.binary(OpKind::And, split, few) : split;
        const ValueId trips = b_.where(when, width, b_.constant(0, ir::DType::I32));
        const ValueId k = b_.for_begin(b_.constant(0, ir::DType::I32), trips, b_.constant(1, ir::DType::I32), "range");
        name(k, "segment");
        const ValueId at = b_.binary(OpKind::Add, lo, b_.cast(k, t.elem));
        const ValueId lanes = active(g, b_.binary(OpKind::Eq, map_.at(g.offset), b_.broadcast(at, t.shape)));
        for (size_t j = 0; j < g.ops.size(); ++j) {
            const ValueId v = map_.at(f_.ops[g.ops[j]].operands[1]);
            const ValueId sum = b_.reduce(OpKind::ReduceSum, b_.where(lanes, v, zeros(out_.fn.type(v))), -1, false);
            b_.atomic_add(b_.add_ptr(map_.at(g.bases[j]), at), sum, ir::kNoValue, f_.ops[g.ops[j]].name);
        }
        b_.for_end({});
        if (!lanes_) return;
        guarded(b_.binary(OpKind::And, split, b_.unary(OpKind::Not, few)), "lanes", [&] {
            for (int i : g.ops) {
                const ir::Op &op = f_.ops[i];
                b_.atomic_add(map_.at(op.operands[0]), map_.at(op.operands[1]),
                              op.has_mask ? map_.at(op.operands[2]) : ir::kNoValue, op.name);
            }
        });
    }

    std::vector<const Group *> last_flushes_;
};

}  // namespace

SegmentedAtomics segment_atomics(const ir::Function &f) {
    SegmentedAtomics out = Segmenter(f, true).run();
    if (!out.few_when.empty()) out.few = Segmenter(f, false).run().fn;
    return out;
}

}  // namespace tad::passes
