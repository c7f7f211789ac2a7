#include "passes/reverse_rereads.h"

#include <set>

#include "passes/passes.h"
#include "passes/rewrites.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// Whether the loop's step is positive on every launch: a positive literal, or a constexpr that
// sizes a tile.
bool positive_step(const ir::Function &f, ValueId step) {
    const ir::Op &op = f.def(step);
    if (op.kind != OpKind::Const || op.fval <= 0) return false;
    return op.name.empty() || sizes_a_tile(f, op.name);
}

std::set<std::string> loaded_bases(const ir::Function &f, const ir::Loop &l) {
    std::set<std::string> out;
    for (int i = l.begin + 1; i < l.end; ++i)
        if (f.ops[static_cast<size_t>(i)].kind == OpKind::Load)
            out.insert(pointer_base(f, f.ops[static_cast<size_t>(i)].operands[0]));
    out.erase("");
    return out;
}

// Whether an earlier top-level loop loads through a parameter that loop l loads through too.
bool rereads(const ir::Function &f, const std::vector<ir::Loop> &loops, const ir::Loop &l) {
    const std::set<std::string> mine = loaded_bases(f, l);
    for (const ir::Loop &a : loops) {
        if (a.parent >= 0 || a.begin >= l.begin) continue;
        for (const std::string &b : loaded_bases(f, a))
            if (mine.count(b)) return true;
    }
    return false;
}

// Why loop l's iterations may not run in another order ("" when they may): see reverse_rereads.h.
std::string refusal(const ir::Function &f, const ir::Loop &l, const std::set<std::string> &written,
                    const std::set<std::string> &twice) {
    if (!l.args.empty()) return "it carries values";
    if (!positive_step(f, f.ops[static_cast<size_t>(l.begin)].operands[2])) return "its step may not be positive";
    for (int i = l.begin + 1; i < l.end; ++i) {
        const ir::Op &op = f.ops[static_cast<size_t>(i)];
        if (op.kind == OpKind::ForBegin || op.kind == OpKind::AtomicAdd || op.kind == OpKind::Barrier)
            return op_at(f, i) + " in its body";
        if (op.kind != OpKind::Load && op.kind != OpKind::Store) continue;
        const std::string base = pointer_base(f, op.operands[0]);
        if (op.kind == OpKind::Load && (base.empty() || written.count(base)))
            return op_at(f, i) + " reads a buffer the kernel writes";
        if (op.kind == OpKind::Store && (base.empty() || twice.count(base)))
            return op_at(f, i) + " may write an element another iteration writes";
    }
    return "";
}

// f with the loops whose for_begin is in `reversed` run last iteration first.
ir::Function rebuilt(const ir::Function &f, const std::set<int> &reversed) {
    ir::Function out = empty_like(f);
    ir::Builder b(out);
    std::vector<ValueId> map(f.values.size(), ir::kNoValue);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        b.loc = op.loc;
        if (!reversed.count(static_cast<int>(i))) {
            copy_op(b, f, op, map);
            continue;
        }
        // From lo = 0 (the usual start) the additions of lo are left out.
        const bool from_zero = zero_constant(f, op.operands[0]);
        const ValueId lo = map[op.operands[0]], hi = map[op.operands[1]], step = map[op.operands[2]];
        const ValueId one = b.constant(1, f.type(op.result).elem);
        const ValueId span = from_zero ? hi : b.binary(OpKind::Sub, hi, lo);
        const ValueId trips = b.binary(OpKind::Div, b.binary(OpKind::Sub, span, one), step);
        const ValueId last = from_zero ? b.binary(OpKind::Mul, trips, step)
                                       : b.binary(OpKind::Add, lo, b.binary(OpKind::Mul, trips, step));
        const std::string name = f.values[op.result].name;
        out.values[last].name = "last_" + (name.empty() ? std::string("i") : name);
        const ValueId up = b.for_begin(lo, hi, step, op.name);
        out.ops.back().ival = op.ival;
        out.values[up].name = "rev_" + (name.empty() ? std::string("i") : name);
        const ValueId down = b.binary(OpKind::Sub, last, up);
        map[op.result] = from_zero ? down : b.binary(OpKind::Add, lo, down);
        out.values[map[op.result]].name = name;
    }
    return with_params(std::move(out), f, map, {});
}

}  // namespace

ReversedLoops reverse_rereads(const ir::Function &f) {
    ReversedLoops out{f, {}, ""};
    const std::vector<ir::Loop> loops = ir::loops(f);
    const std::set<std::string> written = written_buffers(f);
    std::set<std::string> twice;
    for (const Rewrite &r : rewrites(f)) twice.insert(r.param);
    std::set<int> reversed;
    for (const ir::Loop &l : loops) {
        if (l.parent >= 0 || !rereads(f, loops, l)) continue;
        const std::string why = refusal(f, l, written, twice);
        if (why.empty())
            reversed.insert(l.begin);
        else
            out.why = op_at(f, l.begin) + ": " + why;
    }
    if (reversed.empty()) return out;
    out.fn = rebuilt(f, reversed);
    out.loops.assign(reversed.begin(), reversed.end());
    out.why.clear();
    return out;
}

}  // namespace tad::passes
