#include "passes/lift_reductions.h"

#include <map>

#include "passes/carried_rewrite.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// The reduction a combining op folds in, or Const (none): sums only. A running maximum lifted the
// same way (cross entropy's int32 record of the target's block, fold_scatter.h) made the backward
// 1-3% slower on the H200: one 4096-wide int32 tile more in registers cost more than the
// reduction it saved.
OpKind reduction_of(OpKind combine) { return combine == OpKind::Add ? OpKind::ReduceSum : OpKind::Const; }

// One carried scalar to lift: its combining op and the tile it reduces.
struct Lift {
    int combine = -1;  // op index of `s ⊕ reduce(t)`
    int reduce = -1;  // op index of reduce(t)
    ValueId tile = ir::kNoValue;  // t
};

class Lifter : public CarriedRewrite<LiftedReductions> {
public:
    explicit Lifter(const ir::Function &f) : CarriedRewrite(f) {}

private:
    int found() override { return out_.lifted = static_cast<int>(lifts_.size()); }
    std::map<int, Lift> lifts_;  // by loop_arg op index
    std::map<int, int> arg_of_result_;  // loop_result op index -> its loop_arg op index, lifted ones
    std::vector<ValueId> map_;

    const ir::Op &def(ValueId v) const { return f_.def(v); }

    // Carried value k of loop l, when it is `s ⊕ reduce(t)` alone.
    void find(const ir::Loop &l, size_t k) override {
        const ValueId s = f_.ops[static_cast<size_t>(l.args[k])].result;
        const ir::Type &ts = f_.type(s);
        if (!ts.scalar() || ts.is_ptr ||
            (ts.elem != ir::DType::F32 && ts.elem != ir::DType::F64 && ts.elem != ir::DType::I32))
            return;
        const ValueId y = f_.ops[static_cast<size_t>(l.end)].operands[k];
        const int combine = f_.values[y].def_op;
        const ir::Op &c = f_.ops[static_cast<size_t>(combine)];
        const OpKind r = reduction_of(c.kind);
        if (r == OpKind::Const || c.operands.size() != 2 || !only_user(s, combine) || !only_user(y, l.end)) return;
        const ValueId other = c.operands[0] == s ? c.operands[1] : c.operands[0];
        if (other == s || def(other).kind != r || !only_user(other, combine)) return;
        const ir::Op &red = def(other);
        const ValueId t = red.operands[0];
        if (f_.type(t).rank() != 1 || red.keep_dims || f_.type(t).elem != ts.elem) return;
        lifts_[l.args[k]] = Lift{combine, f_.values[other].def_op, t};
        arg_of_result_[l.results[k]] = l.args[k];
    }

    void rebuild() override {
        out_.fn = empty_like(f_);
        map_.assign(f_.values.size(), ir::kNoValue);
        std::map<int, ValueId> identities;  // loop_arg op index -> its tile's initial value
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b_.loc = op.loc;
            const int at = static_cast<int>(i);
            if (op.kind == OpKind::ForBegin) start_loop(at, &identities);
            if (lifted_arg(at, identities) || skipped(at) || combined(at)) continue;
            if (op.kind == OpKind::Param) {
                map_[op.result] = b_.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            } else if (!lifted_result(at)) {
                copy_op(b_, f_, op, map_);
            }
        }
    }

    // Before a loop: the identity tiles its lifted values start at.
    void start_loop(int begin, std::map<int, ValueId> *identities) {
        for (const ir::Loop &l : ir::loops(f_))
            if (l.begin == begin)
                for (int a : l.args)
                    if (lifts_.count(a)) {
                        const Lift &lf = lifts_.at(a);
                        const ir::Type t = f_.type(lf.tile);
                        (*identities)[a] = b_.broadcast(b_.constant(0, t.elem), t.shape);
                    }
    }

    bool lifted_arg(int at, const std::map<int, ValueId> &identities) {
        if (!lifts_.count(at)) return false;
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        map_[op.result] = b_.loop_arg(identities.at(at), static_cast<int>(op.ival));
        return true;
    }

    bool skipped(int at) const {
        for (const auto &[arg, lf] : lifts_)
            if (lf.reduce == at) return true;
        return false;
    }

    // `s ⊕ reduce(t)` becomes `acc ⊕ t`.
    bool combined(int at) {
        for (const auto &[arg, lf] : lifts_) {
            if (lf.combine != at) continue;
            const ir::Op &c = f_.ops[static_cast<size_t>(at)];
            const ValueId acc = map_.at(f_.ops[static_cast<size_t>(arg)].result);
            map_[c.result] = b_.binary(c.kind, acc, map_.at(lf.tile));
            return true;
        }
        return false;
    }

    // A lifted value's loop_result: the tile; after the loop's last result, each lifted value's
    // scalar, `s0 ⊕ reduce(acc)`.
    bool lifted_result(int at) {
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        if (op.kind != OpKind::LoopResult) return false;
        const bool lifted = arg_of_result_.count(at) > 0;
        if (lifted) {
            const Lift &lf = lifts_.at(arg_of_result_.at(at));
            tiles_[at] = b_.loop_result(static_cast<int>(op.ival), f_.type(lf.tile));
        } else {
            copy_op(b_, f_, op, map_);
        }
        const bool last =
            at + 1 >= static_cast<int>(f_.ops.size()) || f_.ops[static_cast<size_t>(at) + 1].kind != OpKind::LoopResult;
        if (last) finish_results();
        return true;
    }

    void finish_results() {
        for (const auto &[res, tile] : tiles_) {
            const int arg = arg_of_result_.at(res);
            const Lift &lf = lifts_.at(arg);
            const ir::Op &c = f_.ops[static_cast<size_t>(lf.combine)];
            const ValueId reduced = b_.reduce(reduction_of(c.kind), tile, 0, false);
            const ValueId init = map_.at(f_.ops[static_cast<size_t>(arg)].operands[0]);
            map_[f_.ops[static_cast<size_t>(res)].result] = b_.binary(c.kind, init, reduced);
        }
        tiles_.clear();
    }

    std::map<int, ValueId> tiles_;  // this loop's lifted loop_result op index -> its tile
};

}  // namespace

LiftedReductions lift_reductions(const ir::Function &f) { return Lifter(f).run(); }

}  // namespace tad::passes
