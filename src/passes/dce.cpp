// Dead code elimination, loops included: a loop-carried value stays only when something live reads
// its result or its value inside the loop, and a loop only when it carries such a value or writes
// memory.
#include <vector>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

bool effect(OpKind k) { return k == OpKind::Store || k == OpKind::AtomicAdd || k == OpKind::Barrier; }

class Liveness {
public:
    explicit Liveness(const ir::Function &f) : f_(f), loops_(ir::loops(f)), live_(f.values.size(), false) {
        slot_.assign(f.ops.size(), {-1, -1});
        for (size_t l = 0; l < loops_.size(); ++l) {
            for (size_t k = 0; k < loops_[l].args.size(); ++k) {
                slot_[loops_[l].args[k]] = {static_cast<int>(l), static_cast<int>(k)};
                slot_[loops_[l].results[k]] = {static_cast<int>(l), static_cast<int>(k)};
            }
        }
    }

    // Which ops stay.
    std::vector<bool> run() {
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::Param) mark(op.result);
            if (!effect(op.kind)) continue;
            for (ValueId v : op.operands) mark(v);
            in_loops(static_cast<int>(i));
        }
        while (!work_.empty()) {
            const ValueId v = work_.back();
            work_.pop_back();
            visit(v);
        }
        std::vector<bool> keep(f_.ops.size(), false);
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            keep[i] = effect(op.kind) || (op.result != ir::kNoValue && live_[op.result]);
        }
        for (const ir::Loop &l : loops_) {
            if (!live_[f_.ops[l.begin].result]) continue;
            keep[l.end] = true;
            for (size_t k = 0; k < l.args.size(); ++k) keep[l.results[k]] = live_[f_.ops[l.args[k]].result];
        }
        return keep;
    }

private:
    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    std::vector<bool> live_;
    std::vector<ValueId> work_;
    std::vector<std::pair<int, int>> slot_;  // per op: (loop, carried index) of a loop_arg / loop_result

    void mark(ValueId v) {
        if (live_[v]) return;
        live_[v] = true;
        work_.push_back(v);
    }

    // Ops inside loops exist only while their loops run.
    void in_loops(int i) {
        for (const ir::Loop &l : loops_)
            if (l.begin < i && i < l.end) mark(f_.ops[l.begin].result);
    }

    void visit(ValueId v) {
        const int d = f_.values[v].def_op;
        const ir::Op &op = f_.ops[d];
        if (op.kind == OpKind::LoopArg || op.kind == OpKind::LoopResult) {
            const ir::Loop &l = loops_[slot_[d].first];
            const size_t k = static_cast<size_t>(slot_[d].second);
            const ir::Op &arg = f_.ops[l.args[k]];
            mark(arg.result);  // a used result keeps its carried value whole
            mark(arg.operands[0]);
            mark(f_.ops[l.end].operands[k]);
            mark(f_.ops[l.begin].result);
            in_loops(l.begin);
            return;
        }
        for (ValueId o : op.operands) mark(o);
        in_loops(d);
    }
};

}  // namespace

ir::Function dce(const ir::Function &f) {
    std::vector<bool> keep = Liveness(f).run();
    // The carried values that go leave their yields, and the rest are renumbered.
    ir::Function g = f;
    for (const ir::Loop &l : ir::loops(f)) {
        if (!keep[l.end]) continue;
        std::vector<ValueId> yields;
        int index = 0;
        for (size_t k = 0; k < l.args.size(); ++k) {
            if (!keep[l.args[k]]) continue;
            yields.push_back(f.ops[l.end].operands[k]);
            g.ops[l.args[k]].ival = index;
            g.ops[l.results[k]].ival = index++;
        }
        g.ops[l.end].operands = yields;
    }
    std::vector<ValueId> repl(f.values.size());
    for (size_t v = 0; v < repl.size(); ++v) repl[v] = static_cast<ValueId>(v);
    return compact(g, keep, repl);
}

}  // namespace tad::passes
