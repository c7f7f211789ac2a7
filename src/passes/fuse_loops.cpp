#include "passes/fuse_loops.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "passes/passes.h"
#include "support/error.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

bool same_loop_header(const ir::Op &a, const ir::Op &b) {
    return a.operands == b.operands && a.name == b.name && a.ival == b.ival;
}

// The pointer parameters an op range [from, to] stores or adds to, and those it loads.
struct Effects {
    std::set<std::string> written, read;
    bool barrier = false;
};

// `accesses`: memory_params(f).accesses (each access's buffer resolved once).
Effects effects(const ir::Function &f, const std::vector<Access> &accesses, int from, int to) {
    Effects e;
    for (int i = from; i <= to; ++i) e.barrier = e.barrier || f.ops[static_cast<size_t>(i)].kind == OpKind::Barrier;
    for (const Access &a : accesses)
        if (a.op >= from && a.op <= to) (a.kind == OpKind::Load ? e.read : e.written).insert(a.param);
    return e;
}

bool meet(const std::set<std::string> &a, const std::set<std::string> &b) {
    for (const std::string &x : a)
        if (b.count(x)) return true;
    return false;
}

// A pair to fuse, and which ops between them move before the first.
struct Plan {
    ir::Loop a, b;
    std::set<int> hoisted;  // op indices between a and b, needed by b
};

class Fuser {
public:
    Fuser(const ir::Function &f, std::vector<Access> accesses)
        : f_(f), loops_(ir::loops(f)), accesses_(std::move(accesses)) {
        for (const Access &a : accesses_)
            if (a.kind != OpKind::Load) written_.insert(a.param);
    }

    std::optional<Plan> find() const {
        for (size_t i = 0; i < loops_.size(); ++i) {
            const int next = next_sibling(i);
            if (next < 0) continue;
            std::optional<Plan> p = plan(loops_[i], loops_[static_cast<size_t>(next)]);
            if (p) return p;
        }
        return std::nullopt;
    }

private:
    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    std::vector<Access> accesses_;
    std::set<std::string> written_;  // every parameter the kernel stores or adds to

    // The loop after loop i with its parent, when no loop lies between them.
    int next_sibling(size_t i) const {
        int best = -1;
        for (size_t j = 0; j < loops_.size(); ++j) {
            const ir::Loop &o = loops_[j];
            if (o.begin > loops_[i].last() && (best < 0 || o.begin < loops_[static_cast<size_t>(best)].begin))
                best = static_cast<int>(j);
        }
        if (best < 0 || loops_[static_cast<size_t>(best)].parent != loops_[i].parent) return -1;
        return best;
    }

    // Whether value v depends on an op in [from, to] (through ops after `from`).
    bool depends(ValueId v, int from, int to, std::map<ValueId, bool> &memo) const {
        const int at = f_.values[v].def_op;
        if (at < from) return false;
        if (at <= to) return true;
        auto it = memo.find(v);
        if (it != memo.end()) return it->second;
        bool r = false;
        for (ValueId o : f_.ops[static_cast<size_t>(at)].operands) r = r || depends(o, from, to, memo);
        return memo[v] = r;
    }

    std::optional<Plan> plan(const ir::Loop &a, const ir::Loop &b) const {
        if (!same_loop_header(f_.ops[static_cast<size_t>(a.begin)], f_.ops[static_cast<size_t>(b.begin)]))
            return std::nullopt;
        const Effects ea = effects(f_, accesses_, a.begin, a.last()), eb = effects(f_, accesses_, b.begin, b.last());
        const Effects mid = effects(f_, accesses_, a.last() + 1, b.begin - 1);
        // The ops between the loops move before A (what B needs) or after B (the rest): none may
        // read what either loop writes.
        if (meet(mid.read, ea.written) || meet(mid.read, eb.written)) return std::nullopt;
        for (int i = a.last() + 1; i < b.begin; ++i)  // parameters keep their order: none moves
            if (f_.ops[static_cast<size_t>(i)].kind == OpKind::Param) return std::nullopt;
        if (ea.barrier || eb.barrier || meet(ea.written, eb.read) || meet(ea.written, eb.written) ||
            meet(eb.written, ea.read))
            return std::nullopt;
        // What the ops between write, they write after B now, and a barrier between no longer
        // separates B from them: B writes nothing then, and reads only buffers nothing in the kernel
        // writes (two parameters may be one buffer: a launch passing x twice gets one shadow for both).
        const bool effects_between = mid.barrier || !mid.written.empty();
        if (effects_between && (!eb.written.empty() || meet(eb.read, written_))) return std::nullopt;
        Plan p{a, b, {}};
        std::map<ValueId, bool> memo;
        std::vector<int> stack;
        for (int i = b.begin; i <= b.last(); ++i)
            for (ValueId o : f_.ops[static_cast<size_t>(i)].operands) {
                const int d = f_.values[o].def_op;
                if (d >= b.begin) continue;
                if (depends(o, a.begin, a.last(), memo)) return std::nullopt;
                if (d > a.last()) stack.push_back(d);
            }
        while (!stack.empty()) {  // what b needs from between the loops, with its own operands there
            const int d = stack.back();
            stack.pop_back();
            if (!p.hoisted.insert(d).second) continue;
            for (ValueId o : f_.ops[static_cast<size_t>(d)].operands)
                if (f_.values[o].def_op > a.last()) stack.push_back(f_.values[o].def_op);
        }
        // What moves before A is pure, or a load: of memory nothing in the kernel writes where ops
        // with effects stay between (it would pass them and their barriers).
        for (int d : p.hoisted) {
            const ir::Op &op = f_.ops[static_cast<size_t>(d)];
            if (op.kind == OpKind::Load ? effects_between && written_.count(pointer_base(f_, op.operands[0]))
                                        : ir::op_info(op.kind).cls == ir::OpClass::Memory || op.kind == OpKind::Barrier)
                return std::nullopt;
        }
        return p;
    }
};

class Rebuilder {
public:
    Rebuilder(const ir::Function &f, const Plan &p) : f_(f), p_(p), b_(out_), map_(f.values.size(), ir::kNoValue) {
        out_ = empty_like(f);
    }

    ir::Function run() {
        const int a0 = p_.a.begin, b0 = p_.b.begin;
        for (int i = 0; i < a0; ++i) copy(i);
        for (int d : p_.hoisted) copy(d);
        const ValueId iv = b_.for_begin(
            map_.at(f_.ops[static_cast<size_t>(a0)].operands[0]), map_.at(f_.ops[static_cast<size_t>(a0)].operands[1]),
            map_.at(f_.ops[static_cast<size_t>(a0)].operands[2]), f_.ops[static_cast<size_t>(a0)].name);
        out_.ops.back().ival = f_.ops[static_cast<size_t>(a0)].ival;
        out_.values[iv].name = f_.values[f_.ops[static_cast<size_t>(a0)].result].name;
        map_[f_.ops[static_cast<size_t>(a0)].result] = iv;
        map_[f_.ops[static_cast<size_t>(b0)].result] = iv;
        const int na = static_cast<int>(p_.a.args.size());
        for (int k = 0; k < na; ++k) arg(p_.a.args[static_cast<size_t>(k)], k);
        for (size_t k = 0; k < p_.b.args.size(); ++k) arg(p_.b.args[k], na + static_cast<int>(k));
        body(p_.a);
        body(p_.b);
        std::vector<ValueId> yields;
        for (ValueId y : f_.ops[static_cast<size_t>(p_.a.end)].operands) yields.push_back(map_.at(y));
        for (ValueId y : f_.ops[static_cast<size_t>(p_.b.end)].operands) yields.push_back(map_.at(y));
        b_.for_end(yields);
        for (int k = 0; k < na; ++k) result(p_.a.results[static_cast<size_t>(k)], k);
        for (size_t k = 0; k < p_.b.results.size(); ++k) result(p_.b.results[k], na + static_cast<int>(k));
        for (int i = p_.a.last() + 1; i < b0; ++i)
            if (!p_.hoisted.count(i)) copy(i);
        for (int i = p_.b.last() + 1; i < static_cast<int>(f_.ops.size()); ++i) copy(i);
        return std::move(out_);
    }

private:
    const ir::Function &f_;
    const Plan &p_;
    ir::Function out_;
    ir::Builder b_;
    std::vector<ValueId> map_;

    void copy(int i) {
        const ir::Op &op = f_.ops[static_cast<size_t>(i)];
        b_.loc = op.loc;
        if (op.kind == OpKind::Param) {
            map_[op.result] = b_.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            return;
        }
        copy_op(b_, f_, op, map_);
    }

    void arg(int at, int index) {
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        b_.loc = op.loc;
        map_[op.result] = b_.loop_arg(map_.at(op.operands[0]), index);
        out_.values[map_[op.result]].name = f_.values[op.result].name;
    }

    void result(int at, int index) {
        const ir::Op &op = f_.ops[static_cast<size_t>(at)];
        map_[op.result] = b_.loop_result(index, f_.type(op.result));
        out_.values[map_[op.result]].name = f_.values[op.result].name;
    }

    // A loop's body: the ops between its loop_args and its for_end.
    void body(const ir::Loop &l) {
        for (int i = l.args.empty() ? l.begin + 1 : l.args.back() + 1; i < l.end; ++i) copy(i);
    }
};

}  // namespace

// Every access of f with its buffer; none where one has no known buffer (memory_params refuses
// such a kernel, and fuse_loops leaves it alone).
std::optional<std::vector<Access>> accesses_of(const ir::Function &f) {
    try {
        return memory_params(f).accesses;
    } catch (const Error &) {
        return std::nullopt;
    }
}

FusedLoops fuse_loops(const ir::Function &f) {
    FusedLoops out{f, 0};
    for (std::optional<std::vector<Access>> acc = accesses_of(out.fn); acc; acc = accesses_of(out.fn)) {
        std::optional<Plan> p = Fuser(out.fn, std::move(*acc)).find();
        if (!p) break;
        out.fn = Rebuilder(out.fn, *p).run();
        ++out.fused;
    }
    // The second body's repeats of the first's ops, loads from memory nothing writes included.
    if (out.fused > 0) out.fn = cse(out.fn, true);
    return out;
}

}  // namespace tad::passes
