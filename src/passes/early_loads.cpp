#include "passes/early_loads.h"

#include <algorithm>
#include <set>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;

bool has_dot(const ir::Function &f) {
    return std::any_of(f.ops.begin(), f.ops.end(), [](const ir::Op &op) { return op.kind == OpKind::Dot; });
}

// Ops a load may not cross: every memory op but a load, and barriers.
bool is_write(const ir::Op &op) {
    const ir::OpClass c = ir::op_info(op.kind).cls;
    return (c == ir::OpClass::Memory && op.kind != OpKind::Load) || c == ir::OpClass::Barrier;
}

class Scheduler {
public:
    explicit Scheduler(const ir::Function &f) : f_(f), loop_at_(f.ops.size(), -1), loops_(ir::loops(f)) {
        for (size_t k = 0; k < loops_.size(); ++k) loop_at_[static_cast<size_t>(loops_[k].begin)] = static_cast<int>(k);
    }

    std::vector<int> run(int *moved) {
        // Parameters first, in their order: the signature follows the order of their ops.
        for (size_t i = 0; i < f_.ops.size(); ++i)
            if (f_.ops[i].kind == OpKind::Param) order_.push_back(static_cast<int>(i));
        level(0, static_cast<int>(f_.ops.size()));
        *moved = moved_;
        return std::move(order_);
    }

private:
    const ir::Function &f_;
    std::vector<int> loop_at_;  // per op: the loop it begins, or -1
    std::vector<ir::Loop> loops_;
    std::vector<int> order_;
    int moved_ = 0;

    // Ops [lo, hi) of one loop level, a nested loop whole: its header and tail in place, its body a
    // level of its own.
    void level(int lo, int hi) {
        std::vector<int> segment;
        for (int i = lo; i < hi; ++i) {
            const ir::Op &op = f_.ops[static_cast<size_t>(i)];
            if (op.kind == OpKind::Param) continue;
            const int k = loop_at_[static_cast<size_t>(i)];
            if (k < 0 && !is_write(op)) {
                segment.push_back(i);
                continue;
            }
            schedule(segment);
            if (k < 0) {
                order_.push_back(i);
                continue;
            }
            const ir::Loop &l = loops_[static_cast<size_t>(k)];
            const int body = l.args.empty() ? l.begin + 1 : l.args.back() + 1;
            for (int h = l.begin; h < (op.ival == 1 ? l.end : body); ++h) order_.push_back(h);
            if (op.ival != 1) level(body, l.end);  // a pipelined loop's loads are prefetched already
            for (int t = l.end; t <= l.last(); ++t) order_.push_back(t);
            i = l.last();
        }
        schedule(segment);
    }

    // The segment's ops in dependence order, those a load needs (and the loads) first.
    void schedule(std::vector<int> &segment) {
        const size_t n = segment.size();
        std::vector<int> pos(f_.ops.size(), -1);
        for (size_t j = 0; j < n; ++j) pos[static_cast<size_t>(segment[j])] = static_cast<int>(j);
        std::vector<std::vector<int>> preds(n);
        for (size_t j = 0; j < n; ++j)
            for (ir::ValueId v : f_.ops[static_cast<size_t>(segment[j])].operands) {
                const int p = pos[static_cast<size_t>(f_.values[v].def_op)];
                if (p >= 0) preds[j].push_back(p);
            }
        // Where a load waits behind a reduction: every load, and what they read from.
        const auto is_load = [&](int i) { return f_.ops[static_cast<size_t>(i)].kind == OpKind::Load; };
        const auto reduction = std::find_if(segment.begin(), segment.end(), [&](int i) {
            const ir::OpClass c = ir::op_info(f_.ops[static_cast<size_t>(i)].kind).cls;
            return c == ir::OpClass::Reduction || c == ir::OpClass::Scan;
        });
        const bool behind = std::any_of(reduction, segment.end(), is_load);
        std::vector<bool> needed(n, false);
        for (size_t j = n; j-- > 0;) {
            needed[j] = needed[j] || (behind && is_load(segment[j]));
            if (needed[j])
                for (int p : preds[j]) needed[static_cast<size_t>(p)] = true;
        }
        std::vector<bool> done(n, false);
        const auto ready = [&](size_t j) {
            return !done[j] && std::all_of(preds[j].begin(), preds[j].end(), [&](int p) { return done[p]; });
        };
        for (size_t step = 0; step < n; ++step) {
            size_t pick = n;
            for (size_t j = 0; j < n && pick == n; ++j)
                if (needed[j] && ready(j)) pick = j;
            for (size_t j = 0; j < n && pick == n; ++j)
                if (ready(j)) pick = j;
            if (f_.ops[static_cast<size_t>(segment[pick])].kind == OpKind::Load &&
                std::any_of(done.begin(), done.begin() + static_cast<long>(pick), [](bool d) { return !d; }))
                ++moved_;
            done[pick] = true;
            order_.push_back(segment[pick]);
        }
        segment.clear();
    }
};

}  // namespace

EarlyLoads early_loads(const ir::Function &f) {
    if (has_dot(f)) return {f, 0};
    EarlyLoads out;
    const std::vector<int> order = Scheduler(f).run(&out.moved);
    out.fn = out.moved > 0 ? reordered(f, order) : f;
    return out;
}

}  // namespace tad::passes
