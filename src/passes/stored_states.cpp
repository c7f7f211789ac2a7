// reuse_stored_states (stored_states.h): which loops store their carried state at every iteration,
// and the rewrite that reads the state entering each iteration back from the previous one's store.
#include "passes/stored_states.h"

#include <algorithm>
#include <map>
#include <optional>

#include "passes/access.h"
#include "passes/passes.h"
#include "passes/read_back.h"
#include "passes/unsaved_accumulators.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

// A carried state the backward reads back: slot `slot` of loop `loop` (an index in ir::loops), and
// the store of its next value.
struct State {
    int loop = -1;
    size_t slot = 0;
    int store = -1;
    std::vector<std::vector<Inequality>> alternatives;  // one without guards: proved statically
};

bool float_cast(const ir::Function &f, const ir::Op &op) {
    return op.kind == OpKind::Cast && f.type(op.result).is_float() && f.type(op.operands[0]).is_float();
}

class Finder {
public:
    Finder(const ir::Function &f, const std::vector<std::string> &kept)
        : f_(f), kept_(kept), loops_(ir::loops(f)), users_(ir::users(f)), affine_(f) {}

    std::vector<State> run(std::string *report) {
        std::vector<State> out;
        for (size_t li = 0; li < loops_.size(); ++li) {
            const ir::Loop &l = loops_[li];
            if (l.parent != -1) continue;
            for (size_t k = 0; k < l.args.size(); ++k) {
                State s{static_cast<int>(li), k, next_state_store(l, k), {}};
                if (s.store < 0) continue;
                const std::string why = check(s);
                const ValueId h = f_.ops[l.args[k]].result;
                const std::string base = pointer_base(f_, f_.ops[s.store].operands[0]);
                *report += op_at(f_, s.store) + ": " +
                           (why.empty() ? "the backward reads " + name(h) + " back from " + base +
                                              ", where the iteration before stored it"
                                        : name(h) + " not read back from " + base + ": " + why) +
                           "\n";
                if (why.empty()) out.push_back(std::move(s));
            }
        }
        return out;
    }

private:
    const ir::Function &f_;
    const std::vector<std::string> &kept_;
    std::vector<ir::Loop> loops_;
    std::vector<std::vector<int>> users_;
    mutable Affine affine_;

    std::string name(ValueId v) const {
        return f_.values[v].name.empty() ? "the " + op_at(f_, f_.values[v].def_op) : "'" + f_.values[v].name + "'";
    }

    ValueId uncast(ValueId v) const {
        while (float_cast(f_, f_.def(v))) v = f_.def(v).operands[0];
        return v;
    }

    // The narrowest float type on the way from the state's next value to the stored value v, v's
    // included (a state rounded to float16 and cast back is not the state).
    ir::DType narrowest(ValueId v) const {
        ir::DType out = f_.type(v).elem;
        for (; float_cast(f_, f_.def(v)); v = f_.def(v).operands[0])
            if (ir::dtype_rank(f_.type(v).elem) < ir::dtype_rank(out)) out = f_.type(v).elem;
        return ir::dtype_rank(f_.type(v).elem) < ir::dtype_rank(out) ? f_.type(v).elem : out;
    }

    // Whether op i lies in l's body outside the loops nested in it.
    bool directly_in(const ir::Loop &l, int i) const {
        if (i <= l.begin || i >= l.end) return false;
        return std::none_of(loops_.begin(), loops_.end(),
                            [&](const ir::Loop &m) { return m.begin > l.begin && m.begin < i && i <= m.last(); });
    }

    // The first store of slot k's next value into a kept buffer, directly in l's body; -1 if none.
    int next_state_store(const ir::Loop &l, size_t k) const {
        const ValueId next = f_.ops[l.end].operands[k];
        if (!f_.type(next).is_float()) return -1;
        for (int i = l.begin + 1; i < l.end; ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != OpKind::Store || !directly_in(l, i) || uncast(op.operands[1]) != next) continue;
            if (std::count(kept_.begin(), kept_.end(), pointer_base(f_, op.operands[0]))) return i;
        }
        return -1;
    }

    // Whether value v is loop l's carried value that only advances by an amount from before l
    // (passes::advance_of: `p += D`), not a float.
    bool advancing(const ir::Loop &l, ValueId v) const {
        const int d = f_.values[v].def_op;
        const auto k = std::find(l.args.begin(), l.args.end(), d);
        return k != l.args.end() && !f_.type(v).is_float() &&
               advance_of(f_, l, static_cast<size_t>(k - l.args.begin())) != ir::kNoValue;
    }

    // Computed from loop l's variable, its advancing carried values and values from before l,
    // without memory.
    bool from_variable(const ir::Loop &l, ValueId v) const {
        return !cone_any(f_, v, [&](const ir::Op &op) {
            const ir::OpClass c = ir::op_info(op.kind).cls;
            return c == ir::OpClass::Memory || c == ir::OpClass::Random ||
                   (c == ir::OpClass::Loop && op.result != f_.ops[l.begin].result && !advancing(l, op.result));
        });
    }

    bool changes_with_iteration(const ir::Loop &l, ValueId v) const {
        const ValueId iv = f_.ops[l.begin].result;
        return cone_any(f_, v, [&](const ir::Op &op) { return op.result == iv || op.kind == OpKind::LoopArg; });
    }

    std::string check(State &s) const {
        const ir::Loop &l = loops_[static_cast<size_t>(s.loop)];
        const ir::Op &st = f_.ops[s.store];
        const ValueId h = f_.ops[l.args[s.slot]].result;
        const std::string base = pointer_base(f_, st.operands[0]);
        if (!value_needed(f_, h)) return "reverse mode needs no value of it";
        if (!f_.type(st.operands[0]).same_shape(f_.type(h))) return "its store is of another shape";
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (static_cast<int>(i) != s.store &&
                (f_.ops[i].kind == OpKind::Store || f_.ops[i].kind == OpKind::AtomicAdd) &&
                pointer_base(f_, f_.ops[i].operands[0]) == base)
                return "the kernel writes " + base + " elsewhere too";
        const ir::DType stored = narrowest(st.operands[1]);
        if (ir::dtype_rank(stored) < ir::dtype_rank(ir::DType::F32) ||
            ir::dtype_rank(stored) < ir::dtype_rank(f_.type(h).elem))
            return std::string("it is saved in ") + ir::dtype_name(stored) + " (rounded)";
        if (exactness_matters(f_, users_, h)) return "its exact value matters (an extremum, or compared)";
        if (!from_variable(l, st.operands[0]))
            return "its address reads memory or a carried value that does not advance by a fixed amount";
        const ValueId mask = st.has_mask ? st.operands[2] : ir::kNoValue;
        if (mask != ir::kNoValue) {
            if (!from_variable(l, mask))
                return "its mask reads memory or a carried value that does not advance by a fixed amount";
            if (changes_with_iteration(l, mask)) return "its mask changes with the iteration";
            if (!lanes_off_unread(f_, users_, h, s.store, mask))
                return "its lanes off the store's mask may matter (read back as 0 there)";
        }
        std::string why;
        if (!writes_distinct(f_, affine_, {st.operands[0]}, mask, program_axes(f_), s.loop, &s.alternatives, &why))
            return "not proven to write each element once: " + why;
        return "";
    }
};

// The forward again, with each state read as replay_as(h, its stand-in) from right after its loop's
// carried values on.
class Rewrite {
public:
    Rewrite(const ir::Function &f, const std::vector<State> &states)
        : f_(f),
          states_(states),
          loops_(ir::loops(f)),
          out_(empty_like(f)),
          b_(out_),
          map_(f.values.size(), ir::kNoValue) {}

    ir::Function run() {
        size_t i = 0;
        for (; i < f_.ops.size() && f_.ops[i].kind == OpKind::Param; ++i) copy_op(b_, f_, f_.ops[i], map_);
        std::vector<std::string> bases;
        for (const State &s : states_) bases.push_back(pointer_base(f_, f_.ops[s.store].operands[0]));
        finals_.emplace(b_, f_, bases);
        for (; i < f_.ops.size(); ++i) {
            copy_op(b_, f_, f_.ops[i], map_);
            for (const State &s : states_)
                if (loops_[static_cast<size_t>(s.loop)].args.back() == static_cast<int>(i)) stand_in(s);
        }
        return with_params(std::move(out_), f_, map_, finals_->params());
    }

private:
    const ir::Function &f_;
    const std::vector<State> &states_;
    std::vector<ir::Loop> loops_;
    ir::Function out_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::optional<FinalBuffers> finals_;  // the buffers states are read back from

    // A scalar as a tile of `shape` (itself where the shape is a scalar's).
    ValueId spread(ValueId v, const std::vector<ir::Dim> &shape) { return shape.empty() ? v : b_.broadcast(v, shape); }

    // Each advancing carried value of l (passes::advance_of) at the iteration before, k - 1 (k the
    // iteration's index, `before`): init + (k - 1) · amount, from the init computed again through
    // the final buffers (a pointer into the buffer read back must point into its final contents).
    void back_one_step(const ir::Loop &l, ValueId before, const ir::Op &st, std::map<ValueId, ValueId> &done) {
        const auto reaches = [&](ValueId v) {
            const auto is_v = [&](const ir::Op &op) { return op.result == v; };
            return cone_any(f_, st.operands[0], is_v) || (st.has_mask && cone_any(f_, st.operands[2], is_v));
        };
        for (size_t k = 0; k < l.args.size(); ++k) {
            const ValueId v = f_.ops[l.args[k]].result, a = advance_of(f_, l, k);
            if (f_.type(v).is_float() || a == ir::kNoValue || !reaches(v)) continue;
            const ValueId init = finals_->recompute(f_.ops[l.args[k]].operands[0], map_, done);
            done[v] = advanced_by(b_, init, finals_->recompute(a, map_, done), before);
        }
    }

    // h as where(t == lo, init, what iteration t - step stored), from here on.
    void stand_in(const State &s) {
        const ir::Loop &l = loops_[static_cast<size_t>(s.loop)];
        const ir::Op &begin = f_.ops[l.begin], &st = f_.ops[s.store], &arg = f_.ops[l.args[s.slot]];
        b_.loc = st.loc;
        const ValueId t = map_[begin.result];
        const ir::DType it = out_.type(t).elem;
        const ValueId lo = b_.cast(map_[begin.operands[0]], it), step = b_.cast(map_[begin.operands[2]], it);
        std::map<ValueId, ValueId> done{{begin.result, b_.binary(OpKind::Sub, t, step)}};
        const ValueId index = b_.binary(OpKind::Div, b_.binary(OpKind::Sub, t, lo), step);
        back_one_step(l, b_.binary(OpKind::Sub, index, b_.constant(1, it)), st, done);
        const ValueId ptr = finals_->recompute(st.operands[0], map_, done);
        const ir::Type &h = f_.type(arg.result);
        ValueId later = spread(b_.binary(OpKind::Ne, t, lo), h.shape);
        if (st.has_mask) later = b_.binary(OpKind::And, finals_->recompute(st.operands[2], map_, done), later);
        const ValueId zero = spread(b_.constant(0.0, out_.type(ptr).elem), h.shape);
        const ValueId stored = b_.cast(b_.load(ptr, later, zero), h.elem, true);
        const ValueId first = spread(b_.binary(OpKind::Eq, t, lo), h.shape);
        const ValueId w = b_.where(first, map_[arg.operands[0]], stored);
        const ValueId r = b_.append(ir::Op(OpKind::ReplayAs, {map_[arg.result], w}), h);
        out_.values[r].name = f_.values[arg.result].name;
        map_[arg.result] = r;
    }
};

}  // namespace

SavedReuse reuse_stored_states(const ir::Function &f, const std::vector<std::string> &kept, std::string *report) {
    if (kept.empty()) return {f, {}};
    const std::vector<State> states = Finder(f, kept).run(report);
    if (states.empty()) return {f, {}};
    SavedReuse out{Rewrite(f, states).run(), {}};
    for (const State &s : states)
        if (std::none_of(s.alternatives.begin(), s.alternatives.end(), [](const auto &a) { return a.empty(); }))
            out.guards.push_back(s.alternatives);
    return out;
}

}  // namespace tad::passes
