// reuse_saved_values (saved_values.h): which stores save a value the backward can read back, the
// values made from it that can be undone, and the rewrite that replays them from the load.
#include "passes/saved_values.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "passes/access.h"
#include "passes/off_mask.h"
#include "passes/passes.h"
#include "passes/read_back.h"
#include "passes/unsaved_accumulators.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

// One store whose value the backward reads back. chain[0] is the stored value; chain[k + 1] is the
// operand that op def(chain[k]) is undone to, with `other[k]` its other operand (kNoValue: unary).
struct Reuse {
    int store = -1;
    std::vector<ValueId> chain;
    std::vector<ValueId> other;
    std::vector<std::vector<Inequality>> alternatives;  // one without guards: proved statically
    // A masked store's mask: its lanes off read back what the value's loads give there (`other`),
    // or 0 where `zero_off` (off_mask.h).
    ValueId mask = ir::kNoValue;
    bool zero_off = false;
    // Read back as 0 off the mask where v is not 0 there, but nothing reads those lanes
    // (lanes_off_do_not_matter): nothing is undone from v then (its operands' other users would read
    // the 0).
    bool unread_off = false;
};

bool pure(const ir::Op &op) {
    const ir::OpClass c = ir::op_info(op.kind).cls;
    return c != ir::OpClass::Memory && c != ir::OpClass::Random && c != ir::OpClass::Loop &&
           c != ir::OpClass::Barrier && op.kind != OpKind::Param;
}

class Finder {
public:
    Finder(const ir::Function &f, const std::vector<std::string> &kept)
        : f_(f), kept_(kept), top_(top_level(f)), affine_(f), users_(ir::users(f)) {
        for (const ir::Loop &l : ir::loops(f))
            if (l.parent < 0)
                for (int r : l.results) top_results_.insert(r);
    }

    std::vector<Reuse> run(std::string *report) {
        std::vector<Reuse> out;
        for (int i = 0; i < static_cast<int>(f_.ops.size()); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind != OpKind::Store || !f_.type(op.operands[1]).is_float()) continue;
            const std::string base = pointer_base(f_, op.operands[0]);
            if (std::find(kept_.begin(), kept_.end(), base) == kept_.end()) continue;
            const ValueId v = op.operands[1];
            const ir::OpClass c = ir::op_info(f_.def(v).kind).cls;
            if (c == ir::OpClass::Leaf || c == ir::OpClass::Memory) continue;  // nothing to compute again
            Reuse r;
            r.store = i;
            const std::string why = check(r);
            *report +=
                op_at(f_, i) + ": " + (why.empty() ? replayed(r, base) : name(v) + " not read back: " + why) + "\n";
            if (!why.empty()) continue;
            claimed_.insert(r.chain.begin(), r.chain.end());
            out.push_back(std::move(r));
        }
        return out;
    }

private:
    const ir::Function &f_;
    const std::vector<std::string> &kept_;
    std::vector<bool> top_;
    mutable Affine affine_;
    std::set<ValueId> claimed_;
    std::vector<std::vector<int>> users_;  // value -> the ops reading it
    std::set<int> top_results_;  // the loop_result ops of top-level loops

    std::string name(ValueId v) const {
        return f_.values[v].name.empty() ? "the " + op_at(f_, def(v)) : "'" + f_.values[v].name + "'";
    }

    int def(ValueId v) const { return f_.values[v].def_op; }

    // A value the backward can replay from a load: computed by a top-level op of its own (not a
    // parameter, constant, load or a loop's state inside it) or the result of a top-level loop (a
    // contraction's accumulator), not taken by another store's chain.
    bool member(ValueId v) const {
        const ir::Op &op = f_.def(v);
        const ir::OpClass c = ir::op_info(op.kind).cls;
        if (top_results_.count(def(v))) return f_.type(v).is_float() && !claimed_.count(v);
        return f_.type(v).is_float() && top_[def(v)] && c != ir::OpClass::Leaf && c != ir::OpClass::Memory &&
               c != ir::OpClass::Loop && !claimed_.count(v);
    }

    bool cone_any(ValueId v, const std::function<bool(const ir::Op &)> &p) const { return passes::cone_any(f_, v, p); }

    // Whether v can be computed right after op `at`: what it needs from after `at` is pure.
    bool computable_after(ValueId v, int at) const {
        return !cone_any(
            v, [&](const ir::Op &op) { return op.result != ir::kNoValue && def(op.result) > at && !pure(op); });
    }

    bool exactness_matters(ValueId v) const { return passes::exactness_matters(f_, users_, v); }

    std::string check(Reuse &r) const {
        const ir::Op &st = f_.ops[r.store];
        const ValueId v = st.operands[1];
        const std::string base = pointer_base(f_, st.operands[0]);
        if (!top_[r.store]) return "stored inside a loop";
        const bool tile = f_.type(v).rank() > 0;
        std::set<ValueId> loads;
        const bool moved = tile && linear_over_loads(v, &loads);
        r.unread_off = st.has_mask && !moved && tile && !zeros_off(v, st.operands[2]) &&
                       lanes_off_do_not_matter(r.store, st.operands[2]);
        r.zero_off = st.has_mask && !moved && tile && (r.unread_off || zeros_off(v, st.operands[2]));
        if (st.has_mask && !moved && !r.zero_off)
            return "its store is masked (and it is not a linear tile of loads, nor 0 off the mask, nor unread "
                   "there)";
        if (st.has_mask && moved && !masked_alike(loads, st.operands[2]))
            return "its store is masked, and not every load it is made from is masked alike with an `other`";
        if (st.has_mask) r.mask = st.operands[2];
        if (r.zero_off && !value_needed(f_, uncast(v)))
            return "reverse mode needs no value of it (it is used linearly)";
        if (claimed_.count(v)) return "another store saves it already";
        if (!member(v)) return "it is a loop's result";
        // A buffer of tad's (frontend::kResidualPrefix, which a user's kernel may not take: float32,
        // float64 on a float64 launch) holds a float32 value's exact bits on every launch: what is
        // compared reads back as computed.
        const bool exact = base.rfind("TAD_SAVED_", 0) == 0 && f_.type(v).elem == ir::DType::F32;
        if (!exact && exactness_matters(v)) return "its exact value matters (an extremum, or compared)";
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (static_cast<int>(i) != r.store &&
                (f_.ops[i].kind == OpKind::Store || f_.ops[i].kind == OpKind::AtomicAdd) &&
                pointer_base(f_, f_.ops[i].operands[0]) == base)
                return "the kernel writes " + base + " elsewhere too";
        if (ir::dtype_rank(f_.type(v).elem) < ir::dtype_rank(ir::DType::F32))
            return std::string("it is saved in ") + ir::dtype_name(f_.type(v).elem) + " (rounded)";
        if (tile && !moved && !cone_any(v, [](const ir::Op &op) {
                const ir::OpClass c = ir::op_info(op.kind).cls;
                return c == ir::OpClass::Reduction || c == ir::OpClass::Scan || c == ir::OpClass::Contraction ||
                       op.kind == OpKind::LoopResult;
            }))
            return "a tile computed without a reduction, and not linearly from two or more loads only it reads "
                   "(recomputing it costs what loading it does)";
        if (cone_any(v, [](const ir::Op &op) { return op.kind == OpKind::GradVia || op.kind == OpKind::StopGradient; }))
            return "it is computed from values already read back";
        if (!computable_after(st.operands[0], def(v))) return "its address reads memory or a loop's state";
        std::string why;
        if (!writes_distinct(f_, affine_, {st.operands[0]}, r.mask, program_axes(f_), -1, &r.alternatives, &why))
            return "not proven to write each element from one program: " + why;
        chain(r);
        return "";
    }

    // Whether tile v is a linear function of two or more tile loads read by nothing else (`loads`
    // gets them): adds, subtractions, negations, float casts, broadcasts, products with an
    // invariant and quotients by one. Loading v back then costs one read where computing it costs two or more, and the
    // loads become dead in the backward (a linear op's derivative needs no operand).
    bool linear_over_loads(ValueId v, std::set<ValueId> *loads) const {
        while (float_cast(f_.def(v))) v = f_.def(v).operands[0];
        std::set<ValueId> cone;
        std::vector<ValueId> work = {v};
        while (!work.empty()) {
            const ValueId x = work.back();
            work.pop_back();
            if (invariant(x) || !cone.insert(x).second) continue;
            const ir::Op &op = f_.def(x);
            if (op.kind == OpKind::Load) {
                if (f_.type(x).rank() == 0 || !top_[def(x)]) return false;
                loads->insert(x);
                continue;
            }
            if (!linear_step(op)) return false;
            for (ValueId o : op.operands) work.push_back(o);
        }
        // A user outside the cone, or one without a result (a store: kNoValue is never in it), keeps
        // the loads alive.
        for (ValueId x : cone)
            for (int u : users_.at(x))
                if (x != v && !cone.count(f_.ops[u].result)) return false;
        return loads->size() >= 2;
    }

    ValueId uncast(ValueId v) const {
        while (float_cast(f_.def(v))) v = f_.def(v).operands[0];
        return v;
    }

    bool float_cast(const ir::Op &op) const {
        return op.kind == OpKind::Cast && f_.type(op.result).is_float() && f_.type(op.operands[0]).is_float();
    }

    bool linear_step(const ir::Op &op) const {
        switch (op.kind) {
        case OpKind::Add:
        case OpKind::Sub:
        case OpKind::Neg:
        case OpKind::Broadcast:
        case OpKind::ExpandDims: return true;
        case OpKind::Cast: return float_cast(op);
        case OpKind::Mul: return invariant(op.operands[0]) || invariant(op.operands[1]);
        case OpKind::Div: return invariant(op.operands[1]);
        default: return false;
        }
    }

    // Whether every load masks its lanes by `mask`, with an `other`: off the mask, the stored
    // value is then what its linear ops make of those `other`s.
    bool masked_alike(const std::set<ValueId> &loads, ValueId mask) const {
        return std::all_of(loads.begin(), loads.end(), [&](ValueId l) {
            const ir::Op &op = f_.def(l);
            return op.has_mask && op.has_other && op.operands[1] == mask;
        });
    }

    // Whether the stored value v's lanes off `mask` reach nothing that matters (read_back.h), so that
    // the backward may read v back as 0 there (the Triton tutorial's matmul wraps its rows `% M`: its
    // accumulator holds other rows' sums past M, which its masked store leaves out). v is a loop's
    // running sum (acc' = acc + T, T not reading acc), whose reverse reads no value of it.
    bool lanes_off_do_not_matter(int store, ValueId mask) const {
        const ValueId v = f_.ops[store].operands[1];
        return running_sum(v) && lanes_off_unread(f_, users_, v, store, mask);
    }

    // Whether v is a top-level loop's running sum: carried as acc' = acc + T with T not reading acc,
    // so that the loop's reverse needs no value of it.
    bool running_sum(ValueId v) const {
        if (!top_results_.count(def(v))) return false;
        for (const ir::Loop &l : ir::loops(f_)) {
            const auto r = std::find(l.results.begin(), l.results.end(), def(v));
            if (r == l.results.end()) continue;
            const size_t k = static_cast<size_t>(r - l.results.begin());
            const ValueId arg = f_.ops[l.args[k]].result, next = f_.ops[l.end].operands[k];
            const ir::Op &add = f_.def(next);
            if (add.kind != OpKind::Add || (add.operands[0] != arg && add.operands[1] != arg)) return false;
            const ValueId t = add.operands[0] == arg ? add.operands[1] : add.operands[0];
            return users_.at(arg).size() == 1 && !cone_any(t, [&](const ir::Op &op) { return op.result == arg; });
        }
        return false;
    }

    // Whether v is 0 off `mask` (off_mask.h), a mask computed from no memory: the backward computes
    // it again after v, where the buffers it could read may hold other values.
    bool zeros_off(ValueId v, ValueId mask) const {
        return zero_off_mask(f_, v, mask) &&
               !cone_any(mask, [](const ir::Op &op) { return ir::op_info(op.kind).cls == ir::OpClass::Memory; });
    }

    // chain[0] = the stored value, then each operand its op is undone to, while the other operand
    // (computed independently of it) and the address can still be computed after that operand.
    void chain(Reuse &r) const {
        const ir::Op &st = f_.ops[r.store];
        r.chain = {st.operands[1]};
        if (r.unread_off) return;
        std::vector<ValueId> needed = {st.operands[0]};
        for (;;) {
            const ir::Op &op = f_.def(r.chain.back());
            ValueId u = ir::kNoValue, c = ir::kNoValue;
            if (!undo_operand(op, &u, &c)) return;
            if (c != ir::kNoValue) needed.push_back(c);
            if (exactness_matters(u)) return;
            const int at = def(u);
            if (!std::all_of(needed.begin(), needed.end(), [&](ValueId n) { return computable_after(n, at); })) return;
            r.chain.push_back(u);
            r.other.push_back(c);
        }
    }

    // The operand `u` that op (y = op(u, c)) can be undone to, and its other operand `c`: one made
    // from parameters and constants alone (no load, reduction or loop, so not from u), and where
    // undoing divides by it (u · c, c / u), a non-zero literal (not a constexpr spelled by name,
    // which may be 0 on another launch), so that no undone value is 0 / 0.
    bool undo_operand(const ir::Op &op, ValueId *u, ValueId *c) const {
        if (op.kind == OpKind::Cast) {  // undone by a cast back where it does not narrow in the trace
            *u = op.operands[0];
            return float_cast(op) && member(*u) &&
                   ir::dtype_rank(f_.type(op.result).elem) >= ir::dtype_rank(f_.type(*u).elem);
        }
        switch (op.kind) {
        case OpKind::Sqrt:
        case OpKind::Rsqrt:
        case OpKind::Neg: *u = op.operands[0]; return member(*u);
        case OpKind::Mul:
        case OpKind::Div:
            for (int j = 0; j < 2; ++j) {
                const ValueId a = op.operands[j], b = op.operands[1 - j];
                const bool divides = op.kind == OpKind::Mul || j == 1;
                if (!member(a) || invariant(a) || !invariant(b) || (divides && !nonzero_constant(b))) continue;
                *u = a;
                *c = b;
                return true;
            }
            return false;
        default: return false;
        }
    }

    // Made from parameters, constants, program ids and ranges alone.
    bool invariant(ValueId v) const {
        return !cone_any(v, [](const ir::Op &op) {
            const ir::OpClass c = ir::op_info(op.kind).cls;
            return c == ir::OpClass::Memory || c == ir::OpClass::Loop || c == ir::OpClass::Reduction ||
                   c == ir::OpClass::Scan || c == ir::OpClass::Contraction || c == ir::OpClass::Random;
        });
    }

    bool nonzero_constant(ValueId v) const {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Broadcast) return nonzero_constant(op.operands[0]);
        return op.kind == OpKind::Const && op.name.empty() && op.fval != 0;
    }

    std::string replayed(const Reuse &r, const std::string &base) const {
        std::string s = "the backward reads " + name(r.chain[0]) + " back from " + base;
        for (size_t k = 1; k < r.chain.size(); ++k) s += (k == 1 ? " (and, undone from it, " : ", ") + name(r.chain[k]);
        return s + (r.chain.size() > 1 ? ")" : "");
    }
};

// The forward again, with each reuse's load and undone values after its chain's earliest value and
// every chain value read through replay_as(value, its stand-in) from its definition on.
class Rewrite {
public:
    Rewrite(const ir::Function &f, const std::vector<Reuse> &reuses)
        : f_(f), reuses_(reuses), out_(empty_like(f)), b_(out_), map_(f.values.size(), ir::kNoValue) {
        for (size_t r = 0; r < reuses.size(); ++r) at_[after(f.values[reuses[r].chain.back()].def_op)].push_back(r);
    }

    ir::Function run() {
        int i = 0;
        const int n = static_cast<int>(f_.ops.size());
        for (; i < n && f_.ops[i].kind == OpKind::Param; ++i) copy(i);
        std::vector<std::string> bases;
        for (const Reuse &r : reuses_) bases.push_back(pointer_base(f_, f_.ops[r.store].operands[0]));
        finals_.emplace(b_, f_, bases);  // after the kernel's own parameters
        for (; i < n; ++i) {
            copy(i);
            auto it = at_.find(i);
            if (it != at_.end())
                for (size_t r : it->second) {
                    stand_ins(reuses_[r]);
                    // A loop's result before its last one was copied before its stand-in was made.
                    for (ValueId c : reuses_[r].chain)
                        if (f_.values[c].def_op < i && map_[c] != ir::kNoValue) replay_as(c);
                }
            const ValueId v = f_.ops[i].result;
            if (v != ir::kNoValue && stand_in_.count(v)) replay_as(v);
        }
        return with_params(std::move(out_), f_, map_, finals_->params());
    }

private:
    const ir::Function &f_;
    const std::vector<Reuse> &reuses_;
    ir::Function out_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::map<int, std::vector<size_t>> at_;  // op index -> the reuses whose stand-ins follow it
    std::map<ValueId, ValueId> stand_in_;  // f_'s chain values -> out_'s values they are replayed as
    std::optional<FinalBuffers> finals_;  // the buffers values are read back from

    void copy(int i) { copy_op(b_, f_, f_.ops[i], map_); }

    // The op new ops may follow once op i is defined: a loop's results stay together after it.
    int after(int i) const {
        if (f_.ops[i].kind != OpKind::LoopResult) return i;
        for (const ir::Loop &l : ir::loops(f_))
            if (std::find(l.results.begin(), l.results.end(), i) != l.results.end()) return l.last();
        return i;
    }

    // v computed again after the current op, through the final buffers: what it reads from before
    // that op is reused unless it reaches a saved buffer's pointer.
    ValueId clone(ValueId v, std::map<ValueId, ValueId> &done) { return finals_->recompute(v, map_, done); }

    // The load of what r's store saved, and each chain value undone from it.
    void stand_ins(const Reuse &r) {
        const ir::Op &st = f_.ops[r.store];
        std::map<ValueId, ValueId> done;
        b_.loc = st.loc;
        const ValueId ptr = clone(st.operands[0], done);
        // The mask as the forward computed it where it masks v's loads (so it is defined before v):
        // not recomputed through the final buffers, whose contents may decide it differently. One
        // computed after v reads no memory (zeros_off).
        const ValueId mask = r.mask == ir::kNoValue ? ir::kNoValue : r.zero_off ? clone(r.mask, done) : map_[r.mask];
        // Kept although the traced dtypes agree: the buffer may hold another dtype on another launch.
        const ir::Type &t = f_.type(r.chain[0]);
        const ValueId zero = r.zero_off ? b_.broadcast(b_.constant(0.0, out_.type(ptr).elem), t.shape) : ir::kNoValue;
        ValueId w = b_.cast(b_.load(ptr, mask, zero), t.elem, true);
        if (!r.zero_off && mask != ir::kNoValue) {
            std::map<ValueId, ValueId> off;
            w = b_.where(mask, w, masked_off(r.chain[0], off));
        }
        stand_in_[r.chain[0]] = w;
        for (size_t k = 0; k + 1 < r.chain.size(); ++k) {
            const ir::Op &op = f_.def(r.chain[k]);
            const ValueId c = r.other[k] == ir::kNoValue ? ir::kNoValue : clone(r.other[k], done);
            b_.loc = op.loc;
            w = undo(op, r.chain[k + 1], w, c);
            stand_in_[r.chain[k + 1]] = w;
        }
    }

    // v on the lanes its loads mask off (Finder::masked_alike): each load gives its `other`, and
    // what reads no load is v's value itself.
    ValueId masked_off(ValueId v, std::map<ValueId, ValueId> &done) {
        auto it = done.find(v);
        if (it != done.end()) return it->second;
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Load) {
            const ir::Type &t = f_.type(v);
            ValueId o = b_.cast(map_[op.operands[2]], t.elem);
            if (!out_.type(o).same_shape(t)) o = b_.broadcast(o, t.shape);
            return done[v] = o;
        }
        ir::Op c = op;
        bool changed = false;
        for (ValueId &o : c.operands) {
            const ValueId n = masked_off(o, done);
            changed = changed || n != map_[o];
            o = n;
        }
        return done[v] = changed ? b_.append(c, f_.type(v)) : map_[v];
    }

    // u from y = op(u, c), y's stand-in `y`.
    ValueId undo(const ir::Op &op, ValueId u, ValueId y, ValueId c) {
        switch (op.kind) {
        case OpKind::Sqrt: return b_.binary(OpKind::Mul, y, y);
        case OpKind::Rsqrt: {  // (1 / y)², not 1 / y²: y² overflows first
            const ir::Type &t = out_.type(y);
            ValueId one = b_.constant(1.0, t.elem);
            if (t.rank() > 0) one = b_.broadcast(one, t.shape);
            const ValueId inv = b_.binary(OpKind::Div, one, y);
            return b_.binary(OpKind::Mul, inv, inv);
        }
        case OpKind::Neg: return b_.unary(OpKind::Neg, y);
        case OpKind::Cast: return b_.cast(y, f_.type(u).elem, true);
        case OpKind::Mul: return b_.binary(OpKind::Div, y, c);
        default: return op.operands[1] == u ? b_.binary(OpKind::Div, c, y) : b_.binary(OpKind::Mul, y, c);
        }
    }

    void replay_as(ValueId v) {
        b_.loc = f_.def(v).loc;
        const ValueId r = b_.append(ir::Op(OpKind::ReplayAs, {map_[v], stand_in_.at(v)}), f_.type(v));
        out_.values[r].name = f_.values[v].name;
        map_[v] = r;
    }
};

}  // namespace

SavedReuse reuse_saved_values(const ir::Function &f, const std::vector<std::string> &kept, std::string *report) {
    if (kept.empty()) return {f, {}};
    const std::vector<Reuse> reuses = Finder(f, kept).run(report);
    if (reuses.empty()) return {f, {}};
    SavedReuse out{Rewrite(f, reuses).run(), {}};
    for (const Reuse &r : reuses)
        if (std::none_of(r.alternatives.begin(), r.alternatives.end(), [](const auto &a) { return a.empty(); }))
            out.guards.push_back(r.alternatives);
    return out;
}

}  // namespace tad::passes
