#include "passes/transpose.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "passes/access.h"
#include "passes/passes.h"
#include "passes/rising_end.h"
#include "passes/same_in_loops.h"
#include "passes/stash.h"
#include "passes/widen.h"
#include "support/text.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The innermost loop holding op i (-1: none).
int innermost(const std::vector<ir::Loop> &loops, int i) {
    int in = -1;
    for (size_t l = 0; l < loops.size(); ++l)
        if (loops[l].begin < i && i < loops[l].end) in = static_cast<int>(l);
    return in;
}

// What an atomic add inside a loop needs, gathered from its operands back to the kernel's
// parameters: the ops of the loop's body and before the loop it reads, and how each loop-carried
// value it reads advances (init, per-iteration amount).
//
// With `from_loops` (stash.h: from_loops), a value computed outside the loop from another loop's
// results, or by a reduction before the loop, or a tile computed before it that costs more to
// compute than to load (costly_to_recompute), is not gathered but stashed: the transposed kernel
// loads it from what the rest stored. Without (TAD_STASH=off), nothing is stashed.
class Slice {
public:
    Slice(const ir::Function &f, const ir::Loop &loop, const std::set<std::string> &written,
          const std::vector<bool> *from_loops = nullptr)
        : f_(f), loop_(loop), written_(written), from_loops_(from_loops), in_(f.ops.size(), false) {
        if (from_loops_) costly_ = costly_to_recompute(f);
    }

    // "" when every value the op reads can be computed for any one iteration; else why not.
    std::string gather(int op) {
        std::vector<ValueId> work(f_.ops[op].operands.begin(), f_.ops[op].operands.end());
        while (!work.empty() && why_.empty()) {
            const ValueId v = work.back();
            work.pop_back();
            const int d = f_.values[v].def_op;
            if (in_[d]) continue;
            in_[d] = true;
            visit(d, work);
        }
        return why_;
    }

    bool in(int op) const { return in_[op]; }
    // A loop-carried value's init and per-iteration amount (kNoValue: carried unchanged).
    const std::map<int, std::pair<ValueId, ValueId>> &inductions() const { return inductions_; }
    // The values read from stashes, not computed.
    const std::set<ValueId> &stashed() const { return stashed_; }
    // The ops gathered, in order.
    std::vector<int> ops() const {
        std::vector<int> out;
        for (size_t i = 0; i < in_.size(); ++i)
            if (in_[i]) out.push_back(static_cast<int>(i));
        return out;
    }

private:
    const ir::Function &f_;
    const ir::Loop &loop_;
    const std::set<std::string> &written_;
    const std::vector<bool> *from_loops_;
    std::vector<bool> costly_;  // costly_to_recompute, where values may be stashed
    std::vector<bool> in_;
    std::set<ValueId> stashed_;
    std::map<int, std::pair<ValueId, ValueId>> inductions_;
    std::string why_;

    bool in_body(int d) const { return loop_.begin < d && d < loop_.end; }

    void visit(int d, std::vector<ValueId> &work) {
        const ir::Op &op = f_.ops[d];
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (d == loop_.begin) {  // the loop variable: lo + i·step
            work.push_back(op.operands[0]);
            work.push_back(op.operands[2]);
            return;
        }
        if (op.kind == OpKind::LoopArg && in_body(d)) return induction(d, work);
        if (from_loops_ && d < loop_.begin && op.result != ir::kNoValue && (*from_loops_)[op.result]) {
            why_ = stashable(f_, op.result);
            if (why_.empty()) stashed_.insert(op.result);
            return;
        }
        // A reduction before the loop (attention's Delta = rowsum(dO·O)) would be recomputed for
        // every (iteration, p_g): stashed where it can be, it is loaded instead.
        if (from_loops_ && d < loop_.begin && cls == ir::OpClass::Reduction && stashable(f_, op.result).empty()) {
            stashed_.insert(op.result);
            return;
        }
        // So would a tile that costs more to compute than to load (stash.h).
        if (from_loops_ && d < loop_.begin && op.result != ir::kNoValue && f_.type(op.result).rank() > 0 &&
            costly_[op.result] && stashable(f_, op.result).empty()) {
            stashed_.insert(op.result);
            return;
        }
        if (cls == ir::OpClass::Loop || (!in_body(d) && d > loop_.begin))
            return void(why_ = "it reads a value of another loop (" + op_at(f_, d) + ")");
        if (cls == ir::OpClass::Barrier || (cls == ir::OpClass::Memory && op.kind != OpKind::Load))
            return void(why_ = "it depends on a " + op_at(f_, d));
        if (op.kind == OpKind::Load && written_.count(pointer_base(f_, op.operands[0])))
            return void(why_ = "it reads a buffer the backward writes (" + op_at(f_, d) + ")");
        work.insert(work.end(), op.operands.begin(), op.operands.end());
    }

    // A loop-carried value the contribution reads must advance by a loop-invariant amount.
    void induction(int d, std::vector<ValueId> &work) {
        const int slot = static_cast<int>(std::find(loop_.args.begin(), loop_.args.end(), d) - loop_.args.begin());
        const ValueId self = f_.ops[d].result, next = f_.ops[loop_.end].operands.at(slot);
        if (next == self) {  // carried unchanged (a block pointer's offset along another dim)
            inductions_[d] = {f_.ops[d].operands[0], ir::kNoValue};
            work.push_back(f_.ops[d].operands[0]);
            return;
        }
        const ir::Op &y = f_.def(next);
        ValueId amount = ir::kNoValue;
        if (y.kind == OpKind::AddPtr && y.operands[0] == self) amount = y.operands[1];
        if (y.kind == OpKind::Add && (y.operands[0] == self || y.operands[1] == self))
            amount = y.operands[y.operands[0] == self ? 1 : 0];
        if (amount == ir::kNoValue || !invariant(amount)) {
            why_ = "loop-carried value '" + f_.values[self].name + "' does not advance by a loop-invariant amount (" +
                   op_at(f_, f_.values[next].def_op) + ")";
            return;
        }
        inductions_[d] = {f_.ops[d].operands[0], amount};
        work.push_back(f_.ops[d].operands[0]);
        work.push_back(amount);
    }

    bool invariant(ValueId v) const {
        const int d = f_.values[v].def_op;
        if (!in_body(d)) return d < loop_.begin;
        const ir::Op &op = f_.ops[d];
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (cls == ir::OpClass::Loop || cls == ir::OpClass::Memory || cls == ir::OpClass::Barrier) return false;
        return std::all_of(op.operands.begin(), op.operands.end(), [&](ValueId o) { return invariant(o); });
    }
};

// An atomic add's value with float casts peeled: the transposed kernel sums it in float32 (float64
// for float64).
ValueId peeled(const ir::Function &f, ValueId v) {
    while (f.def(v).kind == OpKind::Cast && f.type(f.def(v).operands[0]).is_float()) v = f.def(v).operands[0];
    return v;
}

// One loop of a transposed kernel that sums one buffer's adds from several loops (a chain's: the
// blocks below the diagonal, then the diagonal block): its slice, the adds in it, and how its bounds
// move with the program id along the shared axis.
struct Segment {
    const ir::Loop *loop = nullptr;
    const Slice *slice = nullptr;
    std::vector<int> atomics;
    bool rising_end = false, moving_start = false;
};

// Builds the transposed kernel of a group of atomic adds from their slice. With R copies, program t owns
// iterations t·R .. t·R + R-1: the slice is emitted once per copy, values that do not move with the
// iteration (the incoming gradient's tile, matmul's dC) once for all copies; a copy past the loop's
// end loads nothing and stores nothing.
//
// With several segments (run_segments), program t owns the loop variable's value x = lo(0) + t·step
// in every segment, and sums each segment's adds over the programs p whose loop has x: lo(p) <= x <
// hi(p), found by binary searches where a bound moves with p. What a segment computes once for all p
// loads nothing where no p has x (the grid spans every segment's values).
class Writer {
public:
    Writer(const ir::Function &f, const ir::Loop &loop, const Slice &slice, int axis, int copies, bool rising,
           const std::map<ValueId, Stash> &stashes, Transposed &out)
        : f_(f),
          loop_(&loop),
          slice_(&slice),
          stashes_(stashes),
          axis_(axis),
          copies_(copies),
          rising_(rising),
          out_(out),
          b_(out.fn),
          maps_(copies, std::vector<ValueId>(f.values.size(), ir::kNoValue)),
          offsets_(copies) {}

    void run(const std::vector<int> &atomics) {
        begin_kernel({slice_});
        iterations();
        // Values every program along the axis computes alike go before the loop over them.
        for (int c = 0; c < copies_; ++c) {
            for (size_t i = 0; i < f_.ops.size(); ++i) {
                const ValueId r = f_.ops[i].result;
                if (slice_->in(static_cast<int>(i)) && r != ir::kNoValue && !varies(r)) emit(r, c);
            }
            for (const auto &[d, induction] : slice_->inductions())
                if (induction.second != ir::kNoValue && !varies(induction.second)) offset(d, c);
        }
        sum_and_store(atomics);
    }

    // The kernel of several segments; `params`: each add's buffer (one accumulator per buffer);
    // `store_at`: per buffer, the add through whose address and mask the sum is stored (one in a
    // loop whose start is fixed: its address does not vary with p).
    void run_segments(const std::vector<Segment> &segments, const std::map<int, std::string> &params,
                      const std::map<std::string, int> &store_at) {
        std::vector<const Slice *> slices;
        for (const Segment &s : segments) slices.push_back(s.slice);
        begin_kernel(slices);
        iterations();
        std::vector<std::string> names;  // one accumulator per buffer, in the order of their first adds
        std::vector<ValueId> accs;
        for (const Segment &s : segments)
            for (int op : s.atomics)
                if (std::find(names.begin(), names.end(), params.at(op)) == names.end()) {
                    names.push_back(params.at(op));
                    accs.push_back(zero_like(op));
                }
        std::map<std::string, ValueId> covered;  // buffer -> whether some segment has this x
        for (const Segment &s : segments) {
            select(s);
            const ValueId has = segment_loop(s, params, names, accs);
            for (int op : s.atomics) {
                auto [c, fresh] = covered.emplace(params.at(op), has);
                if (!fresh && c->second != has) c->second = b_.binary(OpKind::Or, c->second, has);
            }
        }
        for (size_t k = 0; k < names.size(); ++k) {
            const ir::Op &atomic = f_.ops[store_at.at(names[k])];
            b_.loc = atomic.loc;
            ValueId mask = covered.at(names[k]);
            const ir::Type &like = f_.type(atomic.operands[0]);
            if (!like.scalar()) mask = b_.broadcast(mask, like.shape);
            if (atomic.has_mask) mask = b_.binary(OpKind::And, slot(atomic.operands[2], 0), mask);
            b_.store(slot(atomic.operands[0], 0), b_.cast(accs[k], f_.type(atomic.operands[1]).elem), mask);
        }
    }

    // Writes segment s's loop from now on.
    void select(const Segment &s) {
        loop_ = s.loop;
        slice_ = s.slice;
        rising_ = s.rising_end;
        moving_ = s.moving_start;
    }

    // Whether v differs between the programs along the shared axis (the loop over them).
    bool varies(ValueId v) {
        return depends(v, varies_, [&](int d) -> std::optional<bool> {
            const ir::Op &op = f_.ops[d];
            if (slice_->stashed().count(op.result)) return true;  // loaded at the program summed over
            if (op.kind == OpKind::ProgramId) return op.axis == axis_;
            if (d == loop_->begin) return false;
            if (!slice_->inductions().count(d)) return std::nullopt;
            const auto &[init, amount] = slice_->inductions().at(d);
            // Where the start moves, how far a carried value has advanced at x depends on p.
            return varies(init) || (amount != ir::kNoValue && (moving_ || varies(amount)));
        });
    }

private:
    const ir::Function &f_;
    const ir::Loop *loop_;  // the segment being written
    const Slice *slice_;
    const std::map<ValueId, Stash> &stashes_;
    int axis_, copies_;
    bool rising_;  // the loop's end rises with the axis' program id (one copy then)
    bool moving_ = false;  // the segment's start rises with it too: its variable is x, not lo + t·step
    ValueId has_x_ = ir::kNoValue;  // several segments: whether some program's loop has x
    ValueId moving_iteration_ = ir::kNoValue;  // inside a moving start's loop over p: its iteration at x
    Transposed &out_;
    ir::Builder b_;
    std::vector<std::vector<ValueId>> maps_;  // per copy; values that do not move live in copy 0's
    std::map<ValueId, bool> varies_, moves_;
    std::vector<std::map<int, ValueId>> offsets_;  // per copy: loop_arg op -> its advance
    std::vector<ValueId> iteration_, valid_;  // per copy: its iteration; whether the loop has it
    ValueId grid_ = ir::kNoValue, program_ = ir::kNoValue;
    std::map<ValueId, ValueId> stash_params_;  // stashed value -> its stash parameter

    // Whether v differs from one iteration of the loop to the next.
    bool moves(ValueId v) {
        return depends(v, moves_, [&](int d) -> std::optional<bool> {
            if (d == loop_->begin) return true;
            if (slice_->stashed().count(f_.ops[d].result)) return false;
            if (!slice_->inductions().count(d)) return std::nullopt;
            const auto &[init, amount] = slice_->inductions().at(d);
            return amount != ir::kNoValue || moves(init);
        });
    }

    // Whether v depends on what `leaf` decides for an op (nullopt: on the op's operands), memoized.
    bool depends(ValueId v, std::map<ValueId, bool> &memo, const std::function<std::optional<bool>(int)> &leaf) {
        auto it = memo.find(v);
        if (it != memo.end()) return it->second;
        const int d = f_.values[v].def_op;
        std::optional<bool> r = leaf(d);
        if (!r) {
            const std::vector<ValueId> &xs = f_.ops[d].operands;
            r = std::any_of(xs.begin(), xs.end(), [&](ValueId o) { return depends(o, memo, leaf); });
        }
        return memo[v] = *r;
    }

    ValueId &slot(ValueId v, int c) { return maps_[moves(v) ? c : 0][v]; }

    // The parameters, G, and a parameter per stash the slices load.
    void begin_kernel(const std::vector<const Slice *> &slices) {
        ir::Function &fn = out_.fn;
        fn = empty_like(f_);
        for (const ir::Param &p : f_.params) maps_[0][p.value] = b_.param_like(p, f_.type(p.value));
        out_.grid_param = fresh_name(f_, "G");
        grid_ = b_.param(out_.grid_param, ir::ParamKind::Int, ir::Type{ir::DType::I32, false, {}});
        for (const Slice *slice : slices)
            for (ValueId v : slice->stashed()) {
                if (stash_params_.count(v)) continue;
                const Stash &s = stashes_.at(v);
                stash_params_[v] = b_.param(s.param, ir::ParamKind::Pointer, ir::Type{f_.type(v).elem, true, {}});
                out_.stashes.push_back(s);
            }
    }

    // A float32 (float64) zero of the summed value's shape of atomic add `op`.
    ValueId zero_like(int op) {
        const ir::Type &t = f_.type(peeled(f_, f_.ops[op].operands[1]));
        b_.loc = f_.ops[op].loc;
        const ValueId zero = b_.constant(0.0, acc_type(t));
        return t.scalar() ? zero : b_.broadcast(zero, t.shape);
    }

    // Segment s's loop over the programs p that have x, adding into the accumulators of its buffers
    // (`accs`, updated to the loop's results); returns whether there is such a p. Its values that
    // do not vary with p come first, their loads masked by that.
    ValueId segment_loop(const Segment &s, const std::map<int, std::string> &params,
                         const std::vector<std::string> &names, std::vector<ValueId> &accs) {
        const ir::Op &begin = f_.ops[loop_->begin];
        b_.loc = begin.loc;
        const ValueId x = emit(begin.result, 0);
        const ValueId lo = s.rising_end ? first_above(begin.operands[1]) : below_or_none(x, begin.operands[1]);
        const ValueId past = s.moving_start ? first_above(begin.operands[0]) : grid_;
        has_x_ = b_.binary(OpKind::Lt, lo, past);
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ValueId r = f_.ops[i].result;
            if (slice_->in(static_cast<int>(i)) && r != ir::kNoValue && !varies(r)) emit(r, 0);
        }
        b_.loc = f_.ops[s.atomics.front()].loc;
        program_ = b_.for_begin(lo, past, b_.constant(1, ir::DType::I32), "range");
        name_program();
        std::vector<ValueId> args, next;
        for (size_t k = 0; k < accs.size(); ++k) args.push_back(b_.loop_arg(accs[k], static_cast<int>(k)));
        if (s.moving_start) {  // the iteration at x differs among the programs: (x - lo(p)) / step
            std::map<ValueId, ValueId> local;
            const ValueId start = at_program(begin.operands[0], program_, local);
            moving_iteration_ = b_.binary(OpKind::Div, b_.binary(OpKind::Sub, x, start), emit(begin.operands[2], 0));
        }
        next = args;
        for (int op : s.atomics) {
            const size_t k = static_cast<size_t>(std::find(names.begin(), names.end(), params.at(op)) - names.begin());
            const ValueId value = peeled(f_, f_.ops[op].operands[1]);
            const ValueId v = b_.cast(emit(value, 0), acc_type(f_.type(value)));
            b_.loc = f_.ops[op].loc;
            next[k] = b_.binary(OpKind::Add, next[k], v);
        }
        b_.for_end(next);
        for (size_t k = 0; k < accs.size(); ++k) accs[k] = b_.loop_result(static_cast<int>(k), out_.fn.type(args[k]));
        const ValueId has = has_x_;
        const int loop_start = out_.fn.values[program_].def_op;
        for (ValueId &v : maps_[0])  // computed inside this loop over p: the next segment computes its own
            if (v != ir::kNoValue && out_.fn.values[v].def_op >= loop_start) v = ir::kNoValue;
        for (auto it = offsets_[0].begin(); it != offsets_[0].end();)
            it = out_.fn.values[it->second].def_op >= loop_start ? offsets_[0].erase(it) : std::next(it);
        has_x_ = moving_iteration_ = ir::kNoValue;
        return has;
    }

    // 0 where x is below the loop's end `hi` (the same for every program), else G: no program has x.
    ValueId below_or_none(ValueId x, ValueId hi) {
        const ValueId end = emit(hi, 0);
        return b_.where(b_.binary(OpKind::Lt, x, end), b_.constant(0, ir::DType::I32), grid_);
    }

    // Copy c's iteration t·R + c, and (R > 1) whether the loop has it: lo + i·step < hi.
    void iterations() {
        const ValueId t = b_.program_id(axis_);
        out_.fn.values[t].name = f_.values[f_.ops[loop_->begin].result].name + "_tile";
        if (copies_ == 1) return void(iteration_.push_back(t));
        const ValueId r = b_.constant(copies_, ir::DType::I32);
        const ValueId first = b_.binary(OpKind::Mul, t, r);
        for (int c = 0; c < copies_; ++c)
            iteration_.push_back(c ? b_.binary(OpKind::Add, first, b_.constant(c, ir::DType::I32)) : first);
        const ValueId hi = emit(f_.ops[loop_->begin].operands[1], 0);
        for (int c = 0; c < copies_; ++c)
            valid_.push_back(b_.binary(OpKind::Lt, emit(f_.ops[loop_->begin].result, c), hi));
    }

    // i·amount in the amount's type, or in int64 for a pointer's offset (the repeated additions
    // of a 32-bit amount to a pointer do not wrap).
    ValueId times_iteration(ValueId amount, bool pointer, int c) {
        const ir::Type t = out_.fn.type(amount);  // a copy: the builder grows the value table
        const ir::DType dt = pointer ? ir::DType::I64 : t.elem;
        ValueId i = b_.cast(moving_iteration_ != ir::kNoValue ? moving_iteration_ : iteration_[c], dt);
        if (!t.scalar()) i = b_.broadcast(i, t.shape);
        return b_.binary(OpKind::Mul, i, b_.cast(amount, dt));
    }

    bool is_const(ValueId v, double c) const {
        const ir::Op &op = f_.def(v);
        return op.kind == OpKind::Const && op.name.empty() && op.fval == c;
    }

    // What loop-carried value `d` has advanced by at copy c's iteration.
    ValueId offset(int d, int c) {
        auto it = offsets_[c].find(d);
        if (it != offsets_[c].end()) return it->second;
        const ValueId amount = emit(slice_->inductions().at(d).second, c);
        return offsets_[c][d] = times_iteration(amount, f_.type(f_.ops[d].result).is_ptr, c);
    }

    // `mask` (kNoValue: none) and copy c's validity, as a mask of `shape`.
    ValueId and_valid(ValueId mask, const ir::Type &like, int c) {
        if (copies_ == 1 && has_x_ == ir::kNoValue) return mask;
        const ValueId valid = copies_ == 1 ? has_x_ : valid_[c];
        const ValueId ok = like.scalar() ? valid : b_.broadcast(valid, like.shape);
        return mask == ir::kNoValue ? ok : b_.binary(OpKind::And, mask, ok);
    }

    // A load that moves with the iteration reads nothing for a copy past the loop's end.
    ValueId load(const ir::Op &op, ValueId v, int c) {
        ir::Op o = op;
        for (ValueId &x : o.operands) x = emit(x, c);
        if (copies_ > 1 || has_x_ != ir::kNoValue) {
            const ValueId mask = and_valid(o.has_mask ? o.operands[1] : ir::kNoValue, f_.type(v), c);
            if (o.has_mask)
                o.operands[1] = mask;
            else
                o.operands.insert(o.operands.begin() + 1, mask);
            o.has_mask = true;
        }
        return b_.append(o, f_.type(v));
    }

    ValueId emit(ValueId v, int c) {
        ValueId &known = slot(v, c);
        if (known != ir::kNoValue) return known;
        const int d = f_.values[v].def_op;
        const ir::Op &op = f_.ops[d];
        b_.loc = op.loc;
        ValueId r = ir::kNoValue;
        if (slice_->stashed().count(v)) {
            r = stash_load(v);
        } else if (op.kind == OpKind::ProgramId && op.axis == axis_) {
            r = program_;
        } else if (op.kind == OpKind::NumPrograms && op.axis == axis_) {
            r = grid_;
        } else if (d == loop_->begin) {  // lo + i·step, without the + 0 and · 1 of a plain range
            const ValueId step = emit(op.operands[2], c);
            r = is_const(op.operands[2], 1) ? iteration_[c] : times_iteration(step, false, c);
            std::map<ValueId, ValueId> local;  // a moving start's value at program 0
            const ValueId zero = moving_ ? b_.constant(0, ir::DType::I32) : ir::kNoValue;
            if (!is_const(op.operands[0], 0))
                r = b_.binary(OpKind::Add, moving_ ? at_program(op.operands[0], zero, local) : emit(op.operands[0], c),
                              r);
        } else if (slice_->inductions().count(d) && slice_->inductions().at(d).second == ir::kNoValue) {
            r = emit(slice_->inductions().at(d).first, c);
        } else if (slice_->inductions().count(d)) {
            const ValueId base = emit(slice_->inductions().at(d).first, c), step = offset(d, c);
            r = f_.type(v).is_ptr ? b_.add_ptr(base, step) : b_.binary(OpKind::Add, base, step);
        } else if (op.kind == OpKind::Load && moves(v)) {
            r = load(op, v, c);
        } else {
            ir::Op o = op;
            for (ValueId &x : o.operands) x = emit(x, c);
            r = b_.append(o, f_.type(v));
        }
        if (out_.fn.values[r].name.empty()) out_.fn.values[r].name = f_.values[v].name;
        return slot(v, c) = r;
    }

    // Stashed value v as the rest stored it in the program summed over: that program's ids are
    // the loop's along the axis and this program's along the others.
    ValueId stash_load(ValueId v) {
        const ir::Type t = f_.type(v);
        const ValueId base = stash_params_.at(v);
        const std::vector<int> axes = program_axes(f_);
        std::array<ValueId, 3> ids{}, counts{};
        for (int axis : axes) {
            ids[axis] = axis == axis_ ? program_ : b_.program_id(axis);
            counts[axis] = axis == axis_ ? grid_ : b_.num_programs(axis);
        }
        return b_.load(stash_address(b_, base, t, ids, counts, axes), ir::kNoValue, ir::kNoValue);
    }

    void name_program() {
        out_.fn.values[program_].name = "p" + std::to_string(axis_);
        for (const ir::Op &op : f_.ops)
            if (op.kind == OpKind::ProgramId && op.axis == axis_ && !f_.values[op.result].name.empty())
                out_.fn.values[program_].name = f_.values[op.result].name;
    }

    // One float32 accumulator per (atomic add, copy), summed over the programs along the axis.
    void sum_and_store(const std::vector<int> &atomics) {
        std::vector<ValueId> zeros;
        for (int op : atomics) {
            const ir::Type &t = f_.type(peeled(f_, f_.ops[op].operands[1]));
            b_.loc = f_.ops[op].loc;
            ValueId zero = b_.constant(0.0, acc_type(t));
            zeros.push_back(t.scalar() ? zero : b_.broadcast(zero, t.shape));
        }
        b_.loc = f_.ops[atomics[0]].loc;
        const ValueId lo = rising_ ? first_program() : b_.constant(0, ir::DType::I32);
        const ValueId one = b_.constant(1, ir::DType::I32);
        program_ = b_.for_begin(lo, grid_, one, "range");
        name_program();
        const int n = static_cast<int>(atomics.size()) * copies_;
        std::vector<ValueId> accs, next;
        for (int k = 0; k < n; ++k) accs.push_back(b_.loop_arg(zeros[static_cast<size_t>(k / copies_)], k));
        for (int k = 0; k < n; ++k) {
            const ir::Op &atomic = f_.ops[atomics[static_cast<size_t>(k / copies_)]];
            const ValueId value = peeled(f_, atomic.operands[1]);
            const ValueId x = b_.cast(emit(value, k % copies_), acc_type(f_.type(value)));
            b_.loc = atomic.loc;
            next.push_back(b_.binary(OpKind::Add, accs[static_cast<size_t>(k)], x));
        }
        b_.for_end(next);
        std::vector<ValueId> sums;
        for (int k = 0; k < n; ++k) sums.push_back(b_.loop_result(k, out_.fn.type(accs[static_cast<size_t>(k)])));
        for (int k = 0; k < n; ++k) {
            const ir::Op &atomic = f_.ops[atomics[static_cast<size_t>(k / copies_)]];
            const int c = k % copies_;
            b_.loc = atomic.loc;
            const ValueId ptr = slot(atomic.operands[0], c);
            const ValueId mask = atomic.has_mask ? slot(atomic.operands[2], c) : ir::kNoValue;
            b_.store(ptr, b_.cast(sums[static_cast<size_t>(k)], f_.type(atomic.operands[1]).elem),
                     and_valid(mask, f_.type(atomic.operands[0]), c));
        }
    }

    static ir::DType acc_type(const ir::Type &t) { return t.elem == ir::DType::F64 ? ir::DType::F64 : ir::DType::F32; }

    // The first program along the axis whose loop has this program's iteration: the loop's end
    // rises with the program id (rising_end.h), so the programs that have it are that one .. G-1.
    ValueId first_program() { return first_above(f_.ops[loop_->begin].operands[1]); }

    // The first program p along the axis whose `end` (a loop bound that rises with p) exceeds this
    // program's loop variable, G if none: a binary search over [0, G], 32 halvings of the interval,
    // each computing the bound at its middle.
    ValueId first_above(ValueId end) {
        const ir::Type i32{ir::DType::I32, false, {}};
        ValueId start = emit(f_.ops[loop_->begin].result, 0);
        before(end);
        const ValueId zero = b_.constant(0, ir::DType::I32), one = b_.constant(1, ir::DType::I32);
        const ValueId halving = b_.for_begin(zero, b_.constant(32, ir::DType::I32), one, "range");
        out_.fn.values[halving].name = "halving";
        const ValueId first = b_.loop_arg(zero, 0), past = b_.loop_arg(grid_, 1);
        out_.fn.values[first].name = "first";
        out_.fn.values[past].name = "past";
        const ValueId mid = b_.binary(OpKind::Div, b_.binary(OpKind::Add, first, past), b_.constant(2, ir::DType::I32));
        std::map<ValueId, ValueId> local;
        ValueId at = at_program(end, mid, local);
        if (ir::dtype_rank(out_.fn.type(at).elem) > ir::dtype_rank(out_.fn.type(start).elem))
            start = b_.cast(start, out_.fn.type(at).elem);
        else
            at = b_.cast(at, out_.fn.type(start).elem);
        const ValueId open = b_.binary(OpKind::Lt, first, past);
        const ValueId has = b_.binary(OpKind::And, open, b_.binary(OpKind::Lt, start, at));
        const ValueId lacks = b_.binary(OpKind::And, open, b_.binary(OpKind::Ge, start, at));
        b_.for_end({b_.where(lacks, b_.binary(OpKind::Add, mid, one), first), b_.where(has, mid, past)});
        const ValueId found = b_.loop_result(0, i32);
        b_.loop_result(1, i32);
        out_.fn.values[found].name = "first";
        return found;
    }

    // Emits what v reads that no program id along the axis changes (before the search's loop).
    void before(ValueId v) {
        if (!varies(v)) return void(emit(v, 0));
        for (ValueId o : f_.def(v).operands) before(o);
    }

    // v at program p along the axis: the ops that read its program id computed again with p.
    ValueId at_program(ValueId v, ValueId p, std::map<ValueId, ValueId> &local) {
        if (!varies(v)) return emit(v, 0);
        auto it = local.find(v);
        if (it != local.end()) return it->second;
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::ProgramId) return local[v] = p;
        ir::Op o = op;
        for (ValueId &x : o.operands) x = at_program(x, p, local);
        return local[v] = b_.append(o, f_.type(v));
    }
};

// An atomic add inside a loop that may transpose, with what qualify() found.
struct Member {
    int op = -1;
    std::string param;
    int loop = -1;  // index into ir::loops(f)
    int axis = 0;  // the one grid axis its address ignores
    std::vector<int> others;  // the grid axes its address reads
    TripCount trips;
    std::vector<std::vector<Inequality>> guards;  // alternatives
    bool rising = false;  // the loop's end rises with the shared axis' program id (rising_end.h)
    // The loop's start rises with it too (a causal attention's diagonal block, `range(p * BLOCK_M,
    // (p + 1) * BLOCK_M, BLOCK_N)`): the add transposes only beside an add to the same buffer, at the
    // same address as a function of the loop variable, in a loop whose start is the same for every
    // program (its proof serves both), and `conditions` hold what makes both bounds rise and the
    // start move by whole steps.
    bool moving_start = false;
    std::vector<Inequality> conditions;
};

// The atomic adds of one loop shared along one grid axis, transposed into one kernel.
using Group = std::vector<const Member *>;

// How many iterations each program takes: enough copies for about 128x128 accumulated elements
// (matmul's 128x32 tiles of dA: 4), at most `max_copies`; one where the loop's step is not a positive
// constant (a copy past the loop's end is told by lo + i·step < hi), and one where the slice computes
// a contraction besides the sums (attention's scores): each iteration is work enough, and the copies'
// tiles, sized at the traced block sizes, would not fit in registers at others.
int copies(const ir::Function &f, const Group &g, const Slice &slice, const ir::Loop &loop, int max_copies) {
    const ir::Op &step = f.def(f.ops[loop.begin].operands[2]);
    if (step.kind != OpKind::Const || step.fval <= 0) return 1;
    int64_t elems = 0;
    std::set<int> sums;
    for (const Member *m : g) {
        elems += f.type(f.ops[m->op].operands[1]).numel();
        sums.insert(f.values[peeled(f, f.ops[m->op].operands[1])].def_op);
    }
    for (int i = loop.begin + 1; i < loop.end; ++i)
        if (slice.in(i) && f.ops[i].kind == OpKind::Dot && !sums.count(i)) return 1;
    int n = 1;
    while (n * 2 <= max_copies && n * 2 * std::max<int64_t>(1, elems) <= 128 * 128) n *= 2;
    return n;
}

// The transposed kernel of group `g` with `copies` iterations per program, into `out.fn`; why not,
// or "".
std::string write(const ir::Function &f, const ir::Loop &loop, const Slice &slice, const Group &g, int copies,
                  const std::map<ValueId, Stash> &stashes, Transposed &out) {
    Writer w(f, loop, slice, out.axis, out.trips.per = copies, g.front()->rising, stashes, out);
    std::vector<int> ops;
    for (const Member *m : g) {
        const ir::Op &atomic = f.ops[m->op];
        const ValueId mask = atomic.has_mask ? atomic.operands[2] : ir::kNoValue;
        if (w.varies(atomic.operands[0]) || (mask != ir::kNoValue && w.varies(mask)))
            return "its address or mask is computed from tl.program_id(" + std::to_string(out.axis) + ")";
        ops.push_back(m->op);
    }
    w.run(ops);
    const std::string problem = ir::verify(out.fn);
    if (!problem.empty()) return "internal: the transposed kernel is not valid IR: " + problem;
    return "";
}

// The constexpr C that sizes the written tile along the loop: a dim of the tile spelled C whose lane
// moves the address 1/C as far as an iteration does (matmul's dA tile along BLOCK_K); "" if none.
std::string tile_constexpr(const ir::Function &f, Affine &a, const ir::Op &atomic, int loop) {
    const Form &addr = a.of(atomic.operands[0]);
    const ir::Type &t = f.type(atomic.operands[0]);
    auto iter = addr.terms.find(IndexVar{IndexVar::Iteration, loop});
    if (iter == addr.terms.end()) return "";
    for (size_t d = 0; d < t.shape.size(); ++d) {
        const std::string &name = t.shape[d].expr;
        auto lane = addr.terms.find(IndexVar{IndexVar::Lane, static_cast<int>(d)});
        const bool constexpr_dim = std::any_of(f.constexprs.begin(), f.constexprs.end(),
                                               [&](const ir::Constexpr &c) { return c.name == name; });
        if (constexpr_dim && lane != addr.terms.end() && iter->second == Poly::symbol(name) * lane->second) return name;
    }
    return "";
}

bool is_name(const HostExpr &e, const std::string &n) { return e.op == HostExpr::Name && e.name == n; }

// `(x + (c - 1)) // c` (tl.cdiv), truncating or flooring: x.
const HostExpr *cdiv_of(const HostExpr &e, const std::string &c) {
    if ((e.op != HostExpr::Div && e.op != HostExpr::FloorDiv) || e.args.size() != 2 || !is_name(e.args[1], c))
        return nullptr;
    const HostExpr &num = e.args[0];
    if (num.op != HostExpr::Add || num.args.size() != 2) return nullptr;
    const HostExpr &m1 = num.args[1];
    const bool c_minus_1 = m1.op == HostExpr::Sub && m1.args.size() == 2 && is_name(m1.args[0], c) &&
                           m1.args[1].op == HostExpr::Const && m1.args[1].value == 1;
    return c_minus_1 ? &num.args[0] : nullptr;
}

// Whether the loop's tiles of C, whatever C, cover exactly the indices below the written tile's mask
// bound B: `range(0, cdiv(B, C))` or `range(0, B, C)`, with the atomic masked by t·C + lane < B. A
// wider tile then reaches the same elements (the mask cuts the last one), never fewer (a floor
// division of B by C) or others.
std::string tiles_cover_the_bound(const ir::Function &f, Affine &a, const ir::Op &atomic, int loop,
                                  const TripCount &trips, const std::string &c) {
    std::optional<Poly> bound;
    const ir::Type &t = f.type(atomic.operands[0]);
    for (const Bound &b : a.bounds(atomic.has_mask ? atomic.operands[2] : ir::kNoValue)) {
        auto iter = b.form.terms.find(IndexVar{IndexVar::Iteration, loop});
        for (const auto &[v, coeff] : b.form.terms)
            if (v.kind == IndexVar::Lane && t.shape.at(static_cast<size_t>(v.n)).expr == c &&
                iter != b.form.terms.end() && iter->second == Poly::symbol(c) * coeff && b.form.offset.zero() &&
                !b.bound.mentions(c))
                bound = b.bound;
    }
    if (!bound) return "its tiles of " + c + " have no mask bound";
    const bool from_zero = trips.lo.op == HostExpr::Const && trips.lo.value == 0;
    const HostExpr *x = nullptr;
    if (from_zero && trips.step.op == HostExpr::Const && trips.step.value == 1) x = cdiv_of(trips.hi, c);
    if (from_zero && is_name(trips.step, c)) x = &trips.hi;
    const bool same = x && ((x->op == HostExpr::Name && *bound == Poly::symbol(x->name)) ||
                            (x->op == HostExpr::Const && *bound == Poly::constant(x->value)));
    return same ? "" : "its loop's tiles of " + c + " may end before or after its mask bound " + bound->str();
}

// Whether `form` reads program id p of the axis whose program ids a loop's start lo = lo(0) + c·p
// moves with only through the loop variable x = lo + S·i: its p and i coefficients a_p, a_i with
// a_p·S = a_i·c (then it is a function of x: a_i/S·(x - lo(0)) plus the rest).
bool through_variable(const Form &form, int axis, int loop, const Poly &c, const Poly &step) {
    const auto p = form.terms.find(IndexVar{IndexVar::Program, axis});
    const auto i = form.terms.find(IndexVar{IndexVar::Iteration, loop});
    const Poly ap = p == form.terms.end() ? Poly() : p->second, ai = i == form.terms.end() ? Poly() : i->second;
    for (const auto &[v, coeff] : form.terms)
        if ((v.kind == IndexVar::Quotient || v.kind == IndexVar::Remainder) && v.n == axis) return false;
    return form.affine && ap * step == ai * c;
}

// For an add in a loop whose start moves with one axis' program id: "" where its address and mask
// read that program id only through the loop variable (the address's or a bound's p and i terms in
// proportion, through_variable), and that axis is taken out of `read`; else why not.
std::string follows_the_variable(const ir::Function &f, Affine &a, const ir::Loop &loop, int l, const ir::Op &atomic,
                                 std::set<int> *read) {
    const ir::Op &begin = f.ops[loop.begin];
    const Form &lo = a.of(begin.operands[0]);
    const ir::Op &step = f.def(begin.operands[2]);
    if (!lo.affine || lo.terms.size() != 1 || lo.terms.begin()->first.kind != IndexVar::Program ||
        step.kind != OpKind::Const)
        return "its loop's start is not the same multiple of a program id plus a value the same for every program";
    const int axis = lo.terms.begin()->first.n;
    const Poly c = lo.terms.begin()->second;
    const Poly s = step.name.empty() ? Poly::constant(static_cast<int64_t>(step.fval)) : Poly::symbol(step.name);
    const std::string id = "tl.program_id(" + std::to_string(axis) + ")";
    const Form &addr = a.of(atomic.operands[0]);
    if (!through_variable(addr, axis, l, c, s))
        return addr.terms.count(IndexVar{IndexVar::Program, axis})
                   ? "its address reads " + id + " other than through its loop's variable"
                   : "its address moves with its loop's iteration count, not with its variable";
    if (atomic.has_mask) {
        if (!a.only_bounds(atomic.operands[2])) return "its mask is not a conjunction of bounds on indices";
        for (const Bound &b : a.bounds(atomic.operands[2]))
            if (!through_variable(b.form, axis, l, c, s))
                return "its mask reads " + id + " other than through its loop's variable";
    }
    read->erase(axis);
    return "";
}

// A loop start that rises with program_id(axis) by whole steps: lo(p) = lo(0) + c·p with c a multiple
// of the loop's step S (a positive literal, or a constexpr that sizes a tile), so every program's
// loop variable takes values lo(0) + k·S only. `lo` gets lo(0); `conditions` what makes lo rise and
// the guard that S divides c where that is not a number (S·(c // S) >= c). "" or why not.
std::string moving_start(const ir::Function &f, Affine &a, const ir::Op &begin, int axis, std::optional<HostExpr> *lo,
                         std::vector<Inequality> *conditions) {
    const ir::Op &step = f.def(begin.operands[2]);
    if (step.kind != OpKind::Const || step.fval <= 0 || (!step.name.empty() && !sizes_a_tile(f, step.name)))
        return "its loop's start reads tl.program_id(" + std::to_string(axis) +
               ") and its step is not a positive constant that sizes a tile";
    std::string why;
    std::optional<RisingEnd> r = rising_end(f, begin.operands[0], axis, &why);
    if (!r) return "its loop's start does not rise with tl.program_id(" + std::to_string(axis) + ") (" + why + ")";
    // follows_the_variable proved lo = lo(0) + c·p for this axis.
    const Poly c = a.of(begin.operands[0]).terms.at(IndexVar{IndexVar::Program, axis});
    const Poly s = step.name.empty() ? Poly::constant(static_cast<int64_t>(step.fval)) : Poly::symbol(step.name);
    int64_t cv = 0, sv = 0;
    const std::set<std::string> names = c.symbols();
    if (c.constant_value(&cv) && s.constant_value(&sv)) {
        if (cv % sv != 0) return "its loop's start moves by " + c.str() + " per program, not a multiple of its step";
    } else if (names.size() == 1 && c == Poly::symbol(*names.begin()) &&
               names.begin()->find("//") == std::string::npos) {
        conditions->push_back({s * Poly::symbol(*names.begin() + "//" + s.str()), c});
    } else if (c.constant_value(&cv) && cv > 0) {
        conditions->push_back({s * Poly::symbol(std::to_string(cv) + "//" + s.str()), c});
    } else {
        return "its loop's start moves by " + c.str() + " per program, which no guard shows a multiple of its step";
    }
    conditions->insert(conditions->end(), r->conditions.begin(), r->conditions.end());
    *lo = r->first;
    return "";
}

// Whether atomic add `op` to `param` could transpose; fills `m` when it could, else returns why not.
std::string qualify(const ir::Function &f, Affine &a, int op, const std::string &param,
                    const std::set<std::string> &written, const std::vector<bool> &from_loops, Member &m) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    const ir::Op &atomic = f.ops[op];
    const int l = innermost(loops, op);
    if (loops[l].parent >= 0) return "it sits in a nested loop";
    const Form &addr = a.of(atomic.operands[0]);
    if (!addr.affine || addr.data >= 0) return "its address is not affine";
    if (!addr.loops.count(l)) return "its address does not move with the loop";
    const ir::Op &begin = f.ops[loops[l].begin];
    const auto program_id = [](const ir::Op &x) { return x.kind == OpKind::ProgramId; };
    const bool moving = cone_any(f, begin.operands[0], program_id);
    // Where the loop's start moves with a program id, the address may read it through the loop
    // variable alone: it is then the same for every program at one value of the variable.
    std::set<int> read = addr.axes;
    if (moving) {
        const std::string why = follows_the_variable(f, a, loops[l], l, atomic, &read);
        if (!why.empty()) return why;
    }
    std::vector<int> shared, others;
    for (int axis : program_axes(f)) (read.count(axis) ? others : shared).push_back(axis);
    if (shared.size() != 1)
        return shared.empty() ? "every program writes its own elements" : "it is shared along several grid axes";
    Slice slice(f, loops[l], written, from_loops.empty() ? nullptr : &from_loops);
    std::string why = slice.gather(op);
    if (!why.empty()) return why;
    std::vector<Inequality> start;
    std::optional<HostExpr> lo, hi, step;
    if (moving) {
        why = moving_start(f, a, begin, shared[0], &lo, &start);
        if (!why.empty()) return why;
    } else {
        lo = host_expr(f, begin.operands[0], &why);
    }
    if (lo) step = host_expr(f, begin.operands[2], &why);
    if (step) hi = host_expr(f, begin.operands[1], &why);
    std::optional<RisingEnd> rising;
    if (step && !hi && cone_any(f, begin.operands[1], program_id)) {
        const ir::Op &s = f.def(begin.operands[2]);
        if (s.kind != OpKind::Const || s.fval <= 0)
            return "its loop's end reads tl.program_id(" + std::to_string(shared[0]) +
                   ") and its step is not a positive constant";
        rising = rising_end(f, begin.operands[1], shared[0], &why);
        if (!rising)
            return "its loop's end neither is computable on the host nor rises with tl.program_id(" +
                   std::to_string(shared[0]) + ") (" + why + ")";
        hi = rising->last;
    }
    if (!hi) return "the loop's bounds are not computable on the host (" + why + ")";
    m = Member{op, param, l, shared[0], others, TripCount{*lo, *hi, *step}, {}, rising.has_value(), moving, start};
    if (rising) m.conditions.insert(m.conditions.end(), rising->conditions.begin(), rising->conditions.end());
    if (moving) return "";  // proved by its partner's proof (transpose_segments)
    const ValueId mask = atomic.has_mask ? atomic.operands[2] : ir::kNoValue;
    if (!writes_distinct(f, a, {atomic.operands[0]}, mask, others, l, &m.guards, &why)) return why;
    if (rising)
        for (std::vector<Inequality> &alternative : m.guards)
            alternative.insert(alternative.end(), rising->conditions.begin(), rising->conditions.end());
    return "";
}

// The ops whose results the memory writes `roots` need, through loops: a carried value needs its
// init and its next value, a loop's result its last next value, an op in a loop body its loop.
std::vector<bool> cone(const ir::Function &f, const std::vector<ir::Loop> &loops, const std::vector<int> &roots) {
    std::vector<bool> in(f.ops.size(), false);
    std::vector<int> work = roots;
    auto need = [&](int d) {
        if (d >= 0 && !in[d]) work.push_back(d);
    };
    while (!work.empty()) {
        const int d = work.back();
        work.pop_back();
        if (in[d]) continue;
        in[d] = true;
        const ir::Op &op = f.ops[d];
        for (ValueId v : op.operands) need(f.values[v].def_op);
        for (const ir::Loop &l : loops) {
            if (l.begin < d && d < l.end) need(l.begin);
            const auto arg = std::find(l.args.begin(), l.args.end(), d);
            if (arg != l.args.end()) need(f.values[f.ops[l.end].operands.at(arg - l.args.begin())].def_op);
            const auto res = std::find(l.results.begin(), l.results.end(), d);
            if (res == l.results.end()) continue;
            const size_t slot = static_cast<size_t>(res - l.results.begin());
            need(f.values[f.ops[l.end].operands.at(slot)].def_op);
            need(l.args.at(slot));  // its init, when the loop runs zero times
        }
    }
    return in;
}

// Contractions the group's kernel computes besides its sums that the rest of the backward computes
// too: attention's scores and dP for dK and dV. Allowed: `recompute` per gradient whose atomic adds
// the kernel removes (1: the FlashAttention-2 backward, two for dK and dV together, not two for dK
// alone); "" when within that, else why not.
std::string recomputation(const ir::Function &f, const Group &g, const Slice &slice, const ir::Loop &loop,
                          int recompute) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    std::set<int> members, sums;
    for (const Member *m : g) {
        members.insert(m->op);
        sums.insert(f.values[peeled(f, f.ops[m->op].operands[1])].def_op);
    }
    std::vector<int> roots;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const OpKind k = f.ops[i].kind;
        if ((k == OpKind::Store || k == OpKind::AtomicAdd) && !members.count(static_cast<int>(i)))
            roots.push_back(static_cast<int>(i));
    }
    const std::vector<bool> rest = cone(f, loops, roots);
    int own = 0, again = 0, first = -1;
    for (int i = loop.begin + 1; i < loop.end; ++i) {
        if (!slice.in(i) || f.ops[i].kind != OpKind::Dot) continue;
        ++own;
        if (rest[i] && !sums.count(i) && again++ == 0) first = i;
    }
    if (again <= recompute * static_cast<int>(g.size())) return "";
    std::vector<std::string> params;
    for (const Member *m : g) params.push_back(m->param);
    const auto n = [](int k, const char *what) { return std::to_string(k) + " " + what + (k == 1 ? "" : "s"); };
    return (g.size() > 1 ? "the tiles of " + join(params) + " need " : std::string("its tile needs ")) +
           n(own, "contraction") + " per iteration, " + std::to_string(again) +
           " besides the sums also computed by the rest of the backward (" + op_at(f, first) + ")";
}

// How the tiles of group `g` widen along constexpr `block` (widen.h: Widening); why they cannot: a
// dim the launcher could not size.
std::string widening_of(const ir::Function &f, const Group &g, const std::string &block, int max_copies,
                        Widening &out) {
    out = Widening{block, 1, max_copies, {}};
    int64_t elements = 0, value = 1;
    for (const Member *m : g) {
        const ir::Type &t = f.type(f.ops[m->op].operands[1]);
        std::vector<std::string> dims;
        for (const ir::Dim &d : t.shape) {
            const bool literal = d.expr == std::to_string(d.value);
            const bool named = std::any_of(f.constexprs.begin(), f.constexprs.end(),
                                           [&](const ir::Constexpr &c) { return c.name == d.expr; });
            if (!literal && !named) return "its tile's size " + d.expr + " is neither a constexpr nor a literal";
            if (d.expr == block) value = d.value;
            dims.push_back(d.expr);
        }
        out.tiles.push_back(dims);
        elements += t.numel();
    }
    out.width = widen_factor(value, max_copies, elements);
    return "";
}

// Names the stash of each value `slice` stashes that has none yet (one per value, whichever group
// reads it); whether it stashes any.
bool name_stashes(const ir::Function &f, const Slice &slice, std::map<ValueId, Stash> &stashes) {
    for (ValueId v : slice.stashed()) {
        if (stashes.count(v)) continue;
        std::string name = fresh_name(f, (f.values[v].name.empty() ? "value" : f.values[v].name) + "_stash");
        while (std::any_of(stashes.begin(), stashes.end(), [&](const auto &s) { return s.second.param == name; }))
            name += "_";
        stashes[v] = stash_of(f, v, name);
    }
    return !slice.stashed().empty();
}

// Why constexpr `block` may not be widened: it sizes a stashed value ("" when it does not).
std::string sizes_a_stash(const Slice &slice, const std::map<ValueId, Stash> &stashes, const std::string &block) {
    for (ValueId v : slice.stashed()) {
        const std::vector<std::string> &dims = stashes.at(v).dims;
        if (std::find(dims.begin(), dims.end(), block) != dims.end())
            return block + " sizes the stashed " + stashes.at(v).param;
    }
    return "";
}

// Adds `step >= 1` to every alternative of `guards` where the loop steps by a constexpr that sizes
// no tile (its traced value is positive, as copies() and qualify() read it; one backward serves every
// value of it, and at a negative one the loop counts down); "" or why not. A block size needs none.
std::string positive_step(const ir::Function &f, const ir::Loop &loop,
                          std::vector<std::vector<std::vector<Inequality>>> &guards) {
    const ir::Op &step = f.def(f.ops[static_cast<size_t>(loop.begin)].operands[2]);
    if (step.name.empty() || sizes_a_tile(f, step.name)) return "";
    std::optional<Poly> p = Poly::parse(step.name);
    if (!p) return "its loop's step '" + step.name + "' is no polynomial of names a guard could bound";
    for (auto &alternatives : guards)
        for (std::vector<Inequality> &alternative : alternatives) alternative.push_back({*p, Poly::constant(1)});
    return "";
}

// The loop variable's value at program 0's first iteration, the same for every segment (each
// segment's trips.lo); "" or why not. `hi`: the largest end over the segments, which sizes the grid.
std::string common_range(const std::vector<const Member *> &firsts, HostExpr *hi) {
    const Member &a = *firsts.front();
    // Compared as polynomials where they are ones (a moving start at program 0 is `0 * BLOCK_M`).
    auto same = [](const HostExpr &x, const HostExpr &y) {
        const std::optional<Poly> p = Poly::parse(x.str()), q = Poly::parse(y.str());
        return p && q ? *p == *q : x.str() == y.str();
    };
    for (const Member *m : firsts) {
        if (!same(m->trips.lo, a.trips.lo)) return "its loops start at different values";
        if (!same(m->trips.step, a.trips.step)) return "its loops step differently";
    }
    *hi = a.trips.hi;
    for (size_t i = 1; i < firsts.size(); ++i) {
        if (firsts[i]->trips.hi.str() == hi->str()) continue;
        HostExpr m;
        m.op = HostExpr::Max;
        m.args = {*hi, firsts[i]->trips.hi};
        *hi = m;
    }
    return "";
}

// `form` as a function of the value of its loop's variable (the group's loops share their start and
// step): its iteration term under one name for every loop, and for a loop whose start moves with a
// program id, which the form reads only through the variable (follows_the_variable), without that
// program id's term.
Form at_value(Form form, const Member &m) {
    if (m.moving_start) form.terms.erase(IndexVar{IndexVar::Program, m.axis});
    const auto i = form.terms.find(IndexVar{IndexVar::Iteration, m.loop});
    if (i != form.terms.end()) {
        const Poly c = i->second;
        form.terms.erase(i);
        form.terms[IndexVar{IndexVar::Iteration, std::numeric_limits<int>::min()}] = c;
    }
    return form;
}

bool same_form(const Form &x, const Form &y) {
    return x.affine && y.affine && x.terms == y.terms && x.offset == y.offset;
}

// Whether adds x and y write one element at one value of their loops' variable: their addresses'
// affine forms agree as functions of it (at_value), and so do their masks' bounds, one by one (the
// Triton tutorial's descriptor loads carry their row offset, which a structural comparison cannot
// match across loops).
bool same_at_value(const ir::Function &f, Affine &a, const Member &x, const Member &y) {
    const ir::Op &p = f.ops[x.op], &q = f.ops[y.op];
    if (!(f.type(p.operands[0]) == f.type(q.operands[0])) || p.has_mask != q.has_mask ||
        !same_form(at_value(a.of(p.operands[0]), x), at_value(a.of(q.operands[0]), y)))
        return false;
    if (!p.has_mask) return true;
    if (!a.only_bounds(p.operands[2]) || !a.only_bounds(q.operands[2])) return false;
    const std::vector<Bound> bx = a.bounds(p.operands[2]), by = a.bounds(q.operands[2]);
    if (bx.size() != by.size()) return false;
    std::vector<bool> used(by.size(), false);  // the conjuncts in any order
    for (const Bound &b : bx) {
        size_t k = 0;
        while (k < by.size() &&
               (used[k] || b.bound != by[k].bound || !same_form(at_value(b.form, x), at_value(by[k].form, y))))
            ++k;
        if (k == by.size()) return false;
        used[k] = true;
    }
    return true;
}

// Whether p is at least 0 for every launch: nonnegative coefficients of products of grid sizes and
// constexprs that size tiles.
bool nonnegative_poly(const ir::Function &f, const Poly &p) {
    for (const auto &[names, coeff] : p.terms()) {
        if (coeff < 0) return false;
        for (const std::string &n : names)
            if (n.rfind("num_programs(", 0) != 0 && !sizes_a_tile(f, n)) return false;
    }
    return true;
}

// One candidate for the extent of the loop variable's values over a group's loops: an extent of one
// of them (loop_extent) and the guards that it is the largest at the launch.
struct Extent {
    Poly extent;
    std::vector<Inequality> guards;
};

// Each loop's extent that may be the largest (none of the others provably exceeds it), with the
// guards that it is; `guards` gets what the extents themselves need. Empty where one is not affine.
std::vector<Extent> union_extents(const ir::Function &f, Affine &a, const std::vector<const Member *> &firsts,
                                  std::vector<Inequality> *guards) {
    std::vector<Poly> extents;
    for (const Member *m : firsts) {
        std::optional<Poly> e = loop_extent(f, a, m->loop, m->others, guards);
        if (!e) return {};
        if (std::find(extents.begin(), extents.end(), *e) == extents.end()) extents.push_back(*e);
    }
    std::vector<Extent> out;
    for (const Poly &r : extents) {
        Extent x{r, {}};
        bool dominated = false;
        for (const Poly &e : extents) {
            if (e == r || nonnegative_poly(f, r - e)) continue;
            dominated = dominated || nonnegative_poly(f, e - r);
            x.guards.push_back({r, e});
        }
        if (!dominated) out.push_back(x);
    }
    return out;
}

ValueId mask_of(const ir::Op &op) { return op.has_mask ? op.operands[2] : ir::kNoValue; }

// The first add to `param` in group g in a loop whose start is fixed (null if none); `conditions`
// gets every add's conditions (rising bounds, a moving start's whole steps), each once.
const Member *fixed_member(const Group &g, const std::string &param, std::vector<Inequality> *conditions) {
    const Member *proof = nullptr;
    for (const Member *x : g) {
        if (x->param != param) continue;
        if (!x->moving_start && !proof) proof = x;
        for (const Inequality &q : x->conditions)
            if (std::find(conditions->begin(), conditions->end(), q) == conditions->end()) conditions->push_back(q);
    }
    return proof;
}

// "" where every add of group g to the buffer of `proof` writes, at each value of the loops'
// variable, the element `proof` writes (one structure, or one affine form: same_at_value).
std::string one_element(const ir::Function &f, Affine &a, SameInLoops &same, const Group &g, const Member &proof) {
    const ir::Op &p = f.ops[proof.op];
    for (const Member *x : g) {
        if (x->param != proof.param) continue;
        const ir::Op &q = f.ops[x->op];
        const bool structural = same(p.operands[0], q.operands[0], proof.loop, x->loop) &&
                                same(mask_of(p), mask_of(q), proof.loop, x->loop);
        if (!structural && !same_at_value(f, a, proof, *x))
            return "its adds to " + proof.param + " at " + op_at(f, proof.op) + " and " + op_at(f, x->op) +
                   " write different elements for one value of their loops' variables";
    }
    return "";
}

// Whether two alternatives hold the same conditions, in any order.
bool same_conditions(const std::vector<Inequality> &x, const std::vector<Inequality> &y) {
    return x.size() == y.size() && std::is_permutation(x.begin(), x.end(), y.begin());
}

// Each alternative of `guards` with `conditions` added, each alternative once.
std::vector<std::vector<Inequality>> with_conditions(const std::vector<std::vector<Inequality>> &guards,
                                                     const std::vector<Inequality> &conditions) {
    std::vector<std::vector<Inequality>> out;
    for (std::vector<Inequality> alternative : guards) {
        for (const Inequality &q : conditions)
            if (std::find(alternative.begin(), alternative.end(), q) == alternative.end()) alternative.push_back(q);
        if (std::none_of(out.begin(), out.end(), [&](const auto &y) { return same_conditions(y, alternative); }))
            out.push_back(alternative);
    }
    return out;
}

// The disjointness proof of each buffer of a multi-loop group, from its add in a loop whose start
// is the same for every program, over the values of the loop variable in all the loops (`extent`),
// which each of its other adds must equal as a function of the loop variable (address and mask);
// each alternative gets every add's conditions and `extra`. "" or why not.
std::string segment_proofs(const ir::Function &f, const std::vector<ir::Loop> &loops, const Group &g,
                           const MemoryParams &mem, const std::vector<Extent> &extents,
                           const std::vector<Inequality> &extra, Transposed &out) {
    Affine a(f);
    SameInLoops same(f, loops,
                     [&](const ir::Op &load) { return !mem.stored.count(pointer_base(f, load.operands[0])); });
    for (const Member *m : g) {
        if (std::find(out.params.begin(), out.params.end(), m->param) != out.params.end()) continue;
        std::vector<Inequality> conditions = extra;
        const Member *proof = fixed_member(g, m->param, &conditions);
        if (!proof) return m->param + "'s adds are all in loops whose start moves with the program id";
        std::string why = one_element(f, a, same, g, *proof);
        if (!why.empty()) return why;
        // One proof per extent that may be the largest, each under the guards that it is.
        const ir::Op &atomic = f.ops[proof->op];
        std::vector<std::vector<Inequality>> alternatives;
        for (const Extent &x : extents) {
            std::vector<std::vector<Inequality>> guards;
            std::vector<Inequality> with = conditions;
            with.insert(with.end(), x.guards.begin(), x.guards.end());
            if (!writes_distinct(f, a, {atomic.operands[0]}, mask_of(atomic), proof->others, proof->loop, &guards, &why,
                                 &x.extent))
                continue;
            for (const std::vector<Inequality> &alternative : with_conditions(guards, with))
                if (std::none_of(alternatives.begin(), alternatives.end(),
                                 [&](const auto &y) { return same_conditions(y, alternative); }))
                    alternatives.push_back(alternative);
        }
        if (alternatives.empty()) return why;
        out.params.push_back(m->param);
        out.guards.push_back(alternatives);
    }
    return "";
}

// A group whose buffers are added to in several top-level loops (the two stages of a causal
// attention's key loop): one kernel whose program owns a value x of the loops' variable and sums,
// loop after loop, over the programs whose loop has x (Writer::run_segments). The loops must start
// at one value and step alike; in a loop whose start moves with the program id, a value it carries
// and advances is computed per program (its iteration count at x differs among the programs).
// What transpose_segments builds its kernel from: per loop of the group, in op order, its slice
// and segment, and its first add; each add's buffer.
struct Segments {
    std::vector<int> order;
    std::vector<std::unique_ptr<Slice>> slices;
    std::vector<Segment> segments;
    std::vector<const Member *> firsts;
    std::map<int, std::string> params;
};

// Gathers each loop's slice of group g (its adds' values), bounds what it computes again, and
// names its stashes; "" or why not.
std::string gather_segments(const ir::Function &f, const std::vector<ir::Loop> &loops, const Group &g,
                            const std::set<std::string> &written, const std::vector<bool> &from_loops, int recompute,
                            std::map<ValueId, Stash> &stashes, std::map<ValueId, std::string> &likes, Segments &s) {
    for (const Member *m : g)
        if (std::find(s.order.begin(), s.order.end(), m->loop) == s.order.end()) s.order.push_back(m->loop);
    std::sort(s.order.begin(), s.order.end(), [&](int x, int y) { return loops[x].begin < loops[y].begin; });
    for (int l : s.order) {
        s.slices.push_back(std::make_unique<Slice>(f, loops[l], written, from_loops.empty() ? nullptr : &from_loops));
        Slice &slice = *s.slices.back();
        Group in;
        for (const Member *m : g)
            if (m->loop == l) in.push_back(m);
        Segment seg{&loops[l], &slice, {}, in.front()->rising, in.front()->moving_start};
        for (const Member *m : in) {
            const std::string why = slice.gather(m->op);
            if (!why.empty()) return why;
            seg.atomics.push_back(m->op);
            s.params[m->op] = m->param;
        }
        const std::string why = recomputation(f, in, slice, loops[l], recompute);
        if (!why.empty()) return why;
        name_stashes(f, slice, stashes);
        for (ValueId v : slice.stashed()) likes[v] = converted_like(f, v, slice.ops());
        s.segments.push_back(seg);
        s.firsts.push_back(in.front());
    }
    return "";
}

// Per buffer, the add through whose address and mask the kernel stores its sum: the first in a loop
// with a fixed start, whose address must not vary with the programs summed over; "" or why not.
std::string store_adds(const ir::Function &f, const Group &g, const Segments &s, Writer &w,
                       std::map<std::string, int> *store_at) {
    for (const Member *m : g) {
        if (m->moving_start || !store_at->emplace(m->param, m->op).second) continue;
        w.select(s.segments[static_cast<size_t>(std::find(s.order.begin(), s.order.end(), m->loop) - s.order.begin())]);
        const ir::Op &atomic = f.ops[m->op];
        if (w.varies(atomic.operands[0]) || (atomic.has_mask && w.varies(atomic.operands[2])))
            return "its address or mask is computed from tl.program_id(" + std::to_string(m->axis) + ")";
    }
    return "";
}

std::string transpose_segments(const ir::Function &f, const Group &g, const std::set<std::string> &written,
                               const std::vector<bool> &from_loops, int recompute, std::map<ValueId, Stash> &stashes,
                               std::map<ValueId, std::string> &likes, Transposed &out) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    Segments s;
    std::string why = gather_segments(f, loops, g, written, from_loops, recompute, stashes, likes, s);
    HostExpr hi;
    if (why.empty()) why = common_range(s.firsts, &hi);
    if (!why.empty()) return why;
    Affine a(f);
    std::vector<Inequality> extra;
    const std::vector<Extent> extents = union_extents(f, a, s.firsts, &extra);
    if (extents.empty()) return "its loops' ranges are not affine in the program ids it sums over";
    why = segment_proofs(f, loops, g, memory_params(f), extents, extra, out);
    if (!why.empty()) return why;
    for (const Member *m : g)
        for (int axis : m->others)
            if (std::find(out.kept.begin(), out.kept.end(), axis) == out.kept.end()) out.kept.push_back(axis);
    std::sort(out.kept.begin(), out.kept.end());
    out.axis = s.firsts.front()->axis;
    // The start as a loop that does not move spells it (0, not a moving start's `0 * BLOCK_M`).
    const auto fixed = std::find_if(s.firsts.begin(), s.firsts.end(), [](const Member *m) { return !m->moving_start; });
    out.trips =
        TripCount{(fixed != s.firsts.end() ? *fixed : s.firsts.front())->trips.lo, hi, s.firsts.front()->trips.step};
    out.loops = static_cast<int>(s.segments.size());
    why = positive_step(f, loops[s.order.front()], out.guards);
    Writer w(f, loops[s.order.front()], *s.slices.front(), out.axis, 1, false, stashes, out);
    std::map<std::string, int> store_at;
    if (why.empty()) why = store_adds(f, g, s, w, &store_at);
    if (!why.empty()) return why;
    w.run_segments(s.segments, s.params, store_at);
    const std::string problem = ir::verify(out.fn);
    if (!problem.empty()) return "internal: the transposed kernel is not valid IR: " + problem;
    return "";
}

// Whether group `g` transposes as one kernel; fills `out` when it does, else returns why not.
// `stashes`: the stash of every value a group's slice stashes (named here when new); `likes`: for
// each value this group's kernel loads from one, what its slice converts it like (stash.h).
std::string transpose_group(const ir::Function &f, const Group &g, const std::set<std::string> &written,
                            const std::vector<bool> &from_loops, int max_copies, bool widen, int recompute,
                            std::map<ValueId, Stash> &stashes, std::map<ValueId, std::string> &likes, Transposed &out) {
    const std::vector<ir::Loop> loops = ir::loops(f);
    const Member &first = *g.front();
    const ir::Loop &loop = loops[first.loop];
    Slice slice(f, loop, written, from_loops.empty() ? nullptr : &from_loops);
    for (const Member *m : g) {
        const std::string why = slice.gather(m->op);
        if (!why.empty()) return why;
        out.params.push_back(m->param);
        for (int axis : m->others)
            if (std::find(out.kept.begin(), out.kept.end(), axis) == out.kept.end()) out.kept.push_back(axis);
        out.guards.push_back(m->guards);
    }
    std::string why = recomputation(f, g, slice, loop, recompute);
    if (!why.empty()) return why;
    const bool stashing = name_stashes(f, slice, stashes);
    for (ValueId v : slice.stashed()) likes[v] = converted_like(f, v, slice.ops());
    std::sort(out.kept.begin(), out.kept.end());
    out.axis = first.axis;
    out.trips = first.trips;
    Affine a(f);
    const int r = first.rising ? 1 : copies(f, g, slice, loop, max_copies);
    // Copies, a widened tile and a rising end read `lo + i·step < hi` as "iteration i exists".
    if (r > 1 || first.rising) {
        why = positive_step(f, loop, out.guards);
        if (!why.empty()) return why;
    }
    std::string block = r > 1 && widen ? tile_constexpr(f, a, f.ops[first.op], first.loop) : "";
    for (const Member *m : g)
        if (!block.empty() && tile_constexpr(f, a, f.ops[m->op], m->loop) != block) {
            block.clear();
            out.unwidened = "the gradients' tiles are not all spelled by one constexpr along the loop";
        }
    if (!block.empty() && out.unwidened.empty()) out.unwidened = sizes_a_stash(slice, stashes, block);
    for (const Member *m : g)
        if (!block.empty() && out.unwidened.empty())
            out.unwidened = tiles_cover_the_bound(f, a, f.ops[m->op], m->loop, out.trips, block);
    Widening widening;
    if (!block.empty() && out.unwidened.empty()) out.unwidened = widening_of(f, g, block, max_copies, widening);
    if (!block.empty() && out.unwidened.empty()) {
        Transposed wide = out;
        why = write(f, loop, slice, g, 1, stashes, wide);
        if (why.empty() && widen_proof(wide.fn, wide.axis, block, &out.unwidened)) {
            wide.widening = widening;
            out = std::move(wide);
            if (!stashing) out.tiles = free_tiles(out.fn, out.kept, out.grid_param, block, widening.width);
            return "";
        }
    }
    why = write(f, loop, slice, g, r, stashes, out);
    if (why.empty() && !stashing) out.tiles = free_tiles(out.fn, out.kept, out.grid_param, "", 1);
    return why;
}

// The rest: f without the transposed atomic adds (`kept`), storing the stashes the transposed kernels
// load (those with `likes`: a stash named for a group that did not transpose is not), each typed
// like the tensor every kernel reading it converts it to.
void finish_rest(const ir::Function &f, const std::vector<bool> &kept, std::map<ValueId, Stash> &stashes,
                 const std::map<ValueId, std::set<std::string>> &likes, Transposition &t) {
    std::map<ValueId, Stash> used;
    for (auto &[v, s] : stashes) {
        auto l = likes.find(v);
        if (l == likes.end()) continue;
        if (l->second.size() == 1) s.like = *l->second.begin();
        used[v] = s;
        t.stashes.push_back(s);
    }
    if (!used.empty()) {
        t.rest = store_stashes(f, kept, used);
        return;
    }
    std::vector<ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ValueId>(v);
    t.rest = compact(f, kept, repl);
}

// Whether every access of `param` is an atomic add directly in a top-level loop, each in another
// (one buffer's adds in the loops of a chain: transpose_segments).
bool adds_in_separate_loops(const MemoryParams &m, const std::string &param, const std::vector<ir::Loop> &loops) {
    std::set<int> seen;
    for (const Access &x : m.accesses) {
        if (x.param != param) continue;
        const int l = innermost(loops, x.op);
        if (x.kind != OpKind::AtomicAdd || l < 0 || loops[l].parent >= 0 || !seen.insert(l).second) return false;
    }
    return true;
}

// One kernel per (loop, shared axis): the adds of one loop body share their slice's work; groups
// that add to one buffer in different loops are one (transpose_segments). The adds to a buffer in
// `refused` stay atomic.
std::vector<Group> group_members(const std::vector<Member> &members, const std::set<std::string> &refused) {
    std::vector<Group> groups;
    for (const Member &mem : members) {
        if (refused.count(mem.param)) continue;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const Group &x) {
            return x.front()->axis == mem.axis && std::any_of(x.begin(), x.end(), [&](const Member *y) {
                       return y->loop == mem.loop || y->param == mem.param;
                   });
        });
        if (g == groups.end()) {
            groups.push_back({&mem});
            continue;
        }
        g->push_back(&mem);
        // The new member may join this group to a later one (its loop there, its buffer here).
        for (auto h = std::next(g); h != groups.end();) {
            const bool shares = h->front()->axis == mem.axis && std::any_of(h->begin(), h->end(), [&](const Member *y) {
                                    return std::any_of(g->begin(), g->end(), [&](const Member *z) {
                                        return y->loop == z->loop || y->param == z->param;
                                    });
                                });
            if (!shares) {
                ++h;
                continue;
            }
            g->insert(g->end(), h->begin(), h->end());
            h = groups.erase(h);
        }
    }
    for (Group &g : groups)
        std::sort(g.begin(), g.end(), [](const Member *x, const Member *y) { return x->op < y->op; });
    return groups;
}

// "" where group g holds every add to each buffer it writes (the kernel stores the buffer: an add
// left elsewhere would be overwritten), else why not.
std::string owns_its_buffers(const ir::Function &f, const Group &g, const std::vector<Member> &members,
                             const std::set<std::string> &refused) {
    for (const Member &m : members)
        if (std::any_of(g.begin(), g.end(), [&](const Member *x) { return x->param == m.param; }) &&
            (refused.count(m.param) || std::find(g.begin(), g.end(), &m) == g.end()))
            return "its add at " + op_at(f, m.op) + " is not summed by the same kernel";
    return "";
}

// A refused group tried in parts: one loop's adds member by member; a group over several loops as
// each buffer's adds in several loops together, and each loop's other adds together (the groups
// they were before they were joined).
std::vector<Group> split(const Group &g) {
    auto in_several = [&](const Member *m) {
        return std::any_of(g.begin(), g.end(),
                           [&](const Member *x) { return x->param == m->param && x->loop != m->loop; });
    };
    const bool several = std::any_of(g.begin(), g.end(), in_several);
    std::vector<Group> parts;
    for (const Member *m : g) {
        auto p = std::find_if(parts.begin(), parts.end(), [&](const Group &x) {
            if (in_several(m) || in_several(x.front())) return x.front()->param == m->param;
            return several && x.front()->loop == m->loop;
        });
        if (p == parts.end())
            parts.push_back({m});
        else
            p->push_back(m);
    }
    return parts;
}

std::string transposed_text(const Transposed &t) {
    std::string s = join(t.params, ", ") + ": transposed" + (t.params.size() > 1 ? " in one kernel" : "") +
                    ": grid axis " + std::to_string(t.axis) + " of size " + t.trips.str() + ", " +
                    std::to_string(t.trips.per) + " iteration" + (t.trips.per > 1 ? "s" : "") +
                    " per program, each summing over " + t.grid_param + " programs" +
                    (t.loops > 1 ? " in each of " + std::to_string(t.loops) + " loops" : "");
    if (!t.widening.name.empty())
        s += ", with " + t.widening.name + " " + std::to_string(t.widening.width) + " times its value";
    else if (!t.unwidened.empty())
        s += " (" + t.unwidened + ")";
    for (size_t i = 0; i < t.stashes.size(); ++i) s += (i ? ", " : "; loads ") + t.stashes[i].param;
    for (size_t i = 0; i < t.tiles.size(); ++i) {
        const FreeTile &x = t.tiles[i];
        s += (i ? ", " : "; free tiles: ") + x.name +
             (x.axis < 0 ? " (the loop over " + t.grid_param + ")" : " (grid axis " + std::to_string(x.axis) + ")");
        if (x.target > 0) s += " at " + std::to_string(x.target);
    }
    if (t.params.size() == 1) return s + guards_text(t.guards[0]) + "\n";
    for (size_t i = 0; i < t.guards.size(); ++i) {
        const std::string g = guards_text(t.guards[i]);
        if (!g.empty()) s += "; " + t.params[i] + g;
    }
    return s + "\n";
}

}  // namespace

std::string guards_text(const std::vector<std::vector<Inequality>> &alternatives) {
    std::string s;
    for (size_t i = 0; i < alternatives.size(); ++i) {
        if (alternatives[i].empty()) continue;
        s += i ? " or " : " if ";
        for (size_t g = 0; g < alternatives[i].size(); ++g) s += (g ? " and " : "") + alternatives[i][g].str();
    }
    return s;
}

Transposition transpose_loops(const ir::Function &f, const std::set<std::string> &keep, int max_copies, bool widen,
                              int recompute, bool stash) {
    Transposition t;
    const MemoryParams m = memory_params(f);
    std::set<std::string> written = m.stored;
    written.insert(m.accumulated.begin(), m.accumulated.end());
    const std::vector<ir::Loop> loops = ir::loops(f);
    // Without stashes (empty), the slice stashes nothing: it refuses a value from another loop.
    const std::vector<bool> from = stash ? from_loops(f) : std::vector<bool>{};
    Affine a(f);
    std::vector<Member> members;
    std::map<int, std::string> lines;  // op -> its report line, in op order
    std::set<std::string> refused;  // a buffer with an add that stays atomic keeps all of them
    for (const Access &x : m.accesses) {
        if (x.kind != OpKind::AtomicAdd || innermost(loops, x.op) < 0) continue;
        const auto n =
            std::count_if(m.accesses.begin(), m.accesses.end(), [&](const Access &y) { return y.param == x.param; });
        std::string why = keep.count(x.param) ? "other launches add to its shadow"
                          : n != 1 && !adds_in_separate_loops(m, x.param, loops)
                              ? "the kernel accesses that buffer more than once"
                              : "";
        Member member;
        if (why.empty()) why = qualify(f, a, x.op, x.param, written, from, member);
        if (why.empty()) {
            members.push_back(std::move(member));
        } else {
            lines[x.op] = x.param + ": not transposed: " + why + "\n";
            refused.insert(x.param);
        }
    }
    // A buffer added to in several loops, shared along different grid axes, would need two kernels
    // that both store it.
    for (const Member &x : members)
        for (const Member &y : members)
            if (x.param == y.param && x.axis != y.axis && refused.insert(x.param).second)
                lines[x.op] = x.param + ": not transposed: its adds in the " + op_at(f, loops[x.loop].begin) +
                              " and the " + op_at(f, loops[y.loop].begin) + " are shared along different grid axes\n";
    std::vector<Group> groups = group_members(members, refused);
    std::vector<bool> kept(f.ops.size(), true);
    std::map<ValueId, Stash> stashes;
    std::map<ValueId, std::set<std::string>> likes;  // per stashed value, its transposed kernels' likes
    // A group refused as a whole is tried member by member: one costly gradient does not keep the
    // others atomic.
    for (size_t i = 0; i < groups.size(); ++i) {
        const Group g = groups[i];
        Transposed out;
        std::map<ValueId, std::string> group_likes;
        const bool segmented = std::any_of(
            g.begin(), g.end(), [&](const Member *m) { return m->loop != g.front()->loop || m->moving_start; });
        std::string why =
            segmented ? transpose_segments(f, g, written, from, recompute, stashes, group_likes, out)
                      : transpose_group(f, g, written, from, max_copies, widen, recompute, stashes, group_likes, out);
        if (why.empty()) why = owns_its_buffers(f, g, members, refused);
        const std::vector<Group> parts = why.empty() ? std::vector<Group>{} : split(g);
        if (parts.size() > 1) {
            groups.insert(groups.end(), parts.begin(), parts.end());
            continue;
        }
        if (!why.empty()) {
            lines[g.front()->op] = g.front()->param + ": not transposed: " + why + "\n";
            continue;
        }
        lines[g.front()->op] = transposed_text(out);
        for (const auto &[v, like] : group_likes) likes[v].insert(like);
        for (const Member *mem : g) kept[mem->op] = false;
        t.kernels.push_back(std::move(out));
    }
    for (const auto &[op, line] : lines) t.report += line;
    finish_rest(f, kept, stashes, likes, t);
    return t;
}

}  // namespace tad::passes
