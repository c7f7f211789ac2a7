#include "passes/merge_adds.h"

#include <map>
#include <set>

#include "passes/passes.h"
#include "passes/same_in_loops.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

bool inside(const ir::Loop &l, int op) { return l.begin < op && op <= l.last(); }

// One buffer's adds to merge: the loops holding them (top-level, in op order) and the add in the
// last loop where the sum is written (the last add there, so every term's own values exist).
struct Merge {
    std::vector<int> adds;  // every add to the buffer, in op order
    std::vector<int> loops;  // loop index of each add
    int at = -1;  // the add replaced by the sum
};

class Merger {
public:
    explicit Merger(const ir::Function &f) : f_(f), loops_(ir::loops(f)), mem_(memory_params(f)) {}

    MergedAdds run() {
        std::map<std::string, std::vector<int>> adds;
        for (const Access &a : mem_.accesses)
            if (a.kind == OpKind::AtomicAdd) adds[a.param].push_back(a.op);
        for (const auto &[param, ops] : adds) {
            std::string why;
            std::optional<Merge> m = plan(param, ops, &why);
            if (m) {
                std::string where;
                for (size_t i = 0; i + 1 < m->adds.size(); ++i) where += op_at(f_, m->adds[i]) + ", ";
                out_.report += param + ": adds merged into the " + op_at(f_, m->at) + " (from " +
                               where.substr(0, where.size() - 2) + ")\n";
                merges_.push_back(*m);
                out_.params.push_back(param);
            } else if (!why.empty()) {
                out_.report += param + ": adds not merged: " + why + "\n";
            }
        }
        if (merges_.empty()) return out_.fn = f_, std::move(out_);
        rebuild();
        return std::move(out_);
    }

private:
    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    MemoryParams mem_;
    std::vector<Merge> merges_;
    MergedAdds out_;

    // The innermost loop holding op i (-1: none).
    int loop_of(int i) const {
        int in = -1;
        for (size_t l = 0; l < loops_.size(); ++l)
            if (inside(loops_[l], i)) in = static_cast<int>(l);
        return in;
    }

    bool read_only(const ir::Op &load) const {
        const std::string p = pointer_base(f_, load.operands[0]);
        return !p.empty() && !mem_.stored.count(p);
    }

    ValueId mask(const ir::Op &add) const { return add.has_mask ? add.operands[2] : ir::kNoValue; }

    // The ops of loop l that value v is computed from (its cone), or why the last loop cannot copy them.
    bool cone(ValueId v, int l, std::set<int> &ops, std::string *why) const {
        const int i = f_.values[v].def_op;
        if (!inside(loops_[l], i) || i == loops_[l].begin || ops.count(i)) return true;
        const ir::Op &op = f_.ops[i];
        if (op.kind == OpKind::LoopArg)
            return *why = "its term in the " + op_at(f_, loops_[l].begin) + " reads a loop-carried value", false;
        if (op.kind == OpKind::LoopResult || op.kind == OpKind::ForBegin)
            return *why = "its term in the " + op_at(f_, loops_[l].begin) + " reads a nested loop", false;
        if (op.kind == OpKind::Dot)
            return *why = "its term in the " + op_at(f_, loops_[l].begin) + " needs a dot", false;
        if (op.kind == OpKind::Load && !read_only(op))
            return *why = "its term reads a buffer the kernel writes (" + op_at(f_, i) + ")", false;
        ops.insert(i);
        for (ValueId o : op.operands)
            if (!cone(o, l, ops, why)) return false;
        return true;
    }

    std::optional<Merge> plan(const std::string &param, const std::vector<int> &adds, std::string *why) const {
        Merge m{adds, {}, adds.back()};
        for (int a : adds) m.loops.push_back(loop_of(a));
        std::set<int> distinct(m.loops.begin(), m.loops.end());
        if (distinct.size() < 2) return std::nullopt;  // nothing to merge; no line
        for (int l : m.loops)
            if (l < 0 || loops_[l].parent != -1) return *why = "an add is outside the top-level loops", std::nullopt;
        if (mem_.loaded.count(param) || mem_.overwritten.count(param))
            return *why = "the kernel also reads or stores to it", std::nullopt;
        const int last = m.loops.back();
        const ir::Op &to = f_.ops[m.at], &last_begin = f_.ops[loops_[last].begin];
        for (size_t k = 0; k < adds.size(); ++k) {
            const ir::Op &add = f_.ops[adds[k]];
            const ir::Op &begin = f_.ops[loops_[m.loops[k]].begin];
            if (begin.operands != last_begin.operands || begin.name != last_begin.name)
                return *why = "the " + op_at(f_, loops_[m.loops[k]].begin) + " runs over another range", std::nullopt;
            SameInLoops same(f_, loops_, [&](const ir::Op &load) { return read_only(load); });
            if (!same(add.operands[0], to.operands[0], m.loops[k], last) ||
                !same(mask(add), mask(to), m.loops[k], last))
                return *why = "the " + op_at(f_, adds[k]) + " adds at other addresses", std::nullopt;
            if (!(f_.type(add.operands[1]) == f_.type(to.operands[1])))
                return *why = "the " + op_at(f_, adds[k]) + " adds another type", std::nullopt;
            std::set<int> ops;
            if (m.loops[k] != last && !cone(add.operands[1], m.loops[k], ops, why)) return std::nullopt;
        }
        return m;
    }

    // The earlier loops' terms recomputed in the last loop, summed with its own, added once.
    void write_sum(ir::Builder &b, const Merge &m, std::vector<ValueId> &map) const {
        const int last = m.loops.back();
        const ValueId iv = f_.ops[loops_[last].begin].result;
        ValueId sum = ir::kNoValue;
        for (size_t k = 0; k < m.adds.size(); ++k) {
            const ValueId v = f_.ops[m.adds[k]].operands[1];
            ValueId term = map[v];
            if (m.loops[k] != last) {
                std::set<int> ops;
                std::string why;
                cone(v, m.loops[k], ops, &why);
                std::vector<ValueId> local = map;
                local[f_.ops[loops_[m.loops[k]].begin].result] = map[iv];
                for (int i : ops) copy_op(b, f_, f_.ops[i], local);
                term = local[v];
            }
            b.loc = f_.ops[m.at].loc;
            sum = sum == ir::kNoValue ? term : b.binary(OpKind::Add, sum, term);
        }
        const ir::Op &to = f_.ops[m.at];
        b.atomic_add(map[to.operands[0]], sum, to.has_mask ? map[to.operands[2]] : ir::kNoValue, to.name);
    }

    void rebuild() {
        out_.fn = empty_like(f_);
        ir::Builder b(out_.fn);
        std::vector<ValueId> map(f_.values.size(), ir::kNoValue);
        std::map<int, const Merge *> dropped, summed;
        for (const Merge &m : merges_)
            for (int a : m.adds) (a == m.at ? summed : dropped)[a] = &m;
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b.loc = op.loc;
            if (dropped.count(static_cast<int>(i))) continue;
            if (summed.count(static_cast<int>(i))) {
                write_sum(b, *summed.at(static_cast<int>(i)), map);
            } else if (op.kind == OpKind::Param) {
                map[op.result] = b.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            } else {
                copy_op(b, f_, op, map);
            }
        }
    }
};

}  // namespace

MergedAdds merge_loop_adds(const ir::Function &f) { return Merger(f).run(); }

}  // namespace tad::passes
