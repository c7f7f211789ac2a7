#include "passes/unwrap_adds.h"

#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "passes/affine.h"
#include "passes/off_mask.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// Ops an address may be computed through from the remainder: the copy applies the same op to x.
bool copyable(const ir::Op &op) {
    switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Cast:
    case OpKind::AddPtr:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Trans: return true;
    default: return false;
    }
}

bool reshapes(OpKind k) { return k == OpKind::Broadcast || k == OpKind::ExpandDims || k == OpKind::Trans; }

// One rewrite: the add at op `add` reads remainder `rem` (a value) in its address; `carried` is the
// loop_arg op whose initial value is computed again (-1: the address is copied before the add).
struct Unwrap {
    int add = -1;
    ValueId rem = ir::kNoValue;
    int carried = -1;
};

class Unwrapper {
public:
    explicit Unwrapper(const ir::Function &f) : f_(f), loops_(ir::loops(f)), users_(ir::users(f)), affine_(f, true) {}

    // The integer remainders the address of add `add` is computed from, in op order.
    std::vector<ValueId> remainders(int add) const {
        std::set<int> found;
        std::set<ValueId> seen;
        std::vector<ValueId> work = {f_.ops[add].operands[0]};
        while (!work.empty()) {
            const ValueId v = work.back();
            work.pop_back();
            if (!seen.insert(v).second) continue;
            const ir::Op &op = f_.def(v);
            if (op.kind == OpKind::Mod && !f_.type(v).is_float() && !f_.type(v).scalar())
                found.insert(f_.values[v].def_op);
            if (op.kind == OpKind::LoopArg || copyable(op) || op.kind == OpKind::Mod)
                work.insert(work.end(), op.operands.begin(), op.operands.end());
        }
        std::vector<ValueId> out;
        for (int i : found) out.push_back(f_.ops[i].result);
        return out;
    }

    // Whether add `add` can be unwrapped at remainder `rem`; fills u, else returns why not.
    std::string plan(int add, ValueId rem, Unwrap *u) {
        *u = Unwrap{add, rem, -1};
        const int at = f_.values[rem].def_op;
        for (const ir::Loop &l : loops_)
            if (inside(l, at) && !inside(l, add)) return "the remainder is computed in another loop";
        const Form &r = affine_.of(rem);
        if (!r.affine || r.terms.size() != 1 || r.terms.begin()->first.kind != IndexVar::Modulo || !r.offset.zero())
            return "its dividend is not an index never below 0";
        const Division &d = affine_.divisions().at(static_cast<size_t>(r.terms.begin()->first.n));
        for (const Inequality &s : d.signs)
            if (!(s.lhs == d.divisor && s.rhs == Poly::constant(1)))
                return "its dividend is not below 0 only where " + s.str();
        const ir::Op &divisor = f_.def(f_.def(rem).operands[1]);
        if (divisor.kind != OpKind::Broadcast || !f_.type(divisor.operands[0]).scalar())
            return "its divisor is not a scalar";
        if (!reads(f_.ops[add].operands[0], rem)) return "the address reads it only through another remainder";
        return path(f_.ops[add].operands[0], add, u);
    }

    // f_ with u applied; *value and *past are the add's value and the mask `x < d` in it.
    ir::Function apply(const Unwrap &u, ValueId *value, ValueId *past) {
        ir::Function out = empty_like(f_);
        ir::Builder b(out);
        std::vector<ValueId> map(f_.values.size(), ir::kNoValue);
        std::map<ValueId, std::pair<ValueId, ValueId>> copies;
        ValueId init = ir::kNoValue, index = ir::kNoValue;
        const int begin = u.carried < 0 ? -1 : loops_[static_cast<size_t>(loop_of_arg(u.carried))].begin;
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            b.loc = op.loc;
            if (static_cast<int>(i) == begin)
                std::tie(init, index) = copy(b, f_.ops[u.carried].operands[0], u.rem, map, copies);
            if (static_cast<int>(i) == u.carried) {
                ir::Op c = op;
                c.operands = {init};
                const ValueId v = b.append(c, f_.type(op.result));
                out.values[v].name = f_.values[op.result].name;
                map[op.result] = v;
            } else if (static_cast<int>(i) == u.add) {
                ValueId p = map[op.operands[0]];
                if (u.carried < 0) std::tie(p, index) = copy(b, op.operands[0], u.rem, map, copies);
                *past = below(b, index, map[f_.def(f_.def(u.rem).operands[1]).operands[0]], f_.type(op.operands[0]));
                const ValueId mask = op.has_mask ? b.binary(OpKind::And, map[op.operands[2]], *past) : *past;
                b.atomic_add(p, map[op.operands[1]], mask, op.name);
                *value = map[op.operands[1]];
            } else if (op.kind == OpKind::Param) {
                map[op.result] = b.param_like(f_.params.at(static_cast<size_t>(op.ival)), f_.type(op.result));
            } else {
                copy_op(b, f_, op, map);
            }
        }
        return out;
    }

private:
    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    std::vector<std::vector<int>> users_;
    Affine affine_;
    std::map<std::pair<ValueId, ValueId>, bool> reads_;  // (remainder, value) -> whether the value reads it

    static bool inside(const ir::Loop &l, int op) { return l.begin < op && op < l.end; }

    int loop_of_arg(int op) const {
        for (size_t l = 0; l < loops_.size(); ++l)
            for (int a : loops_[l].args)
                if (a == op) return static_cast<int>(l);
        return -1;
    }

    // Whether v is computed from `rem` through ops the copy follows (a carried value through its init).
    bool reads(ValueId v, ValueId rem) {
        if (v == rem) return true;
        const auto key = std::make_pair(rem, v);
        auto it = reads_.find(key);
        if (it != reads_.end()) return it->second;
        reads_[key] = false;
        const ir::Op &op = f_.def(v);
        bool r = false;
        if (op.kind == OpKind::LoopArg || copyable(op))
            for (ValueId o : op.operands) r = r || reads(o, rem);
        return reads_[key] = r;
    }

    // Whether the address v of add `add` can be computed again from x; sets u->carried.
    std::string path(ValueId v, int add, Unwrap *u) {
        if (v == u->rem || !reads(v, u->rem)) return "";
        const int i = f_.values[v].def_op;
        const ir::Op &op = f_.ops[i];
        if (op.kind == OpKind::LoopArg) return carried(i, add, u);
        if (!copyable(op)) return "the address reads it through the " + op_at(f_, i);
        int reading = 0;
        for (ValueId o : op.operands) reading += reads(o, u->rem) ? 1 : 0;
        if (reading > 1) return "two operands of the " + op_at(f_, i) + " read it";
        for (ValueId o : op.operands)
            if (reads(o, u->rem)) return path(o, add, u);
        return "";
    }

    // Whether loop_arg op `arg` is a pointer the add's own loop advances by an amount that does not
    // read the remainder and that serves the add alone.
    std::string carried(int arg, int add, Unwrap *u) {
        const int l = loop_of_arg(arg);
        const ir::Loop &loop = loops_[static_cast<size_t>(l)];
        for (const ir::Loop &inner : loops_)
            if (inner.parent == l && inside(inner, add)) return "the address is carried by an outer loop";
        if (!inside(loop, add) || u->carried >= 0) return "the address is carried by an outer loop";
        const ir::Op &a = f_.ops[static_cast<size_t>(arg)];
        const size_t k = static_cast<size_t>(a.ival);
        const ValueId next = f_.ops[static_cast<size_t>(loop.end)].operands.at(k);
        const ir::Op &step = f_.def(next);
        const std::vector<int> &readers = users_[static_cast<size_t>(a.result)];
        const bool alone = readers.size() == 2 && (readers[0] == add || readers[1] == add) &&
                           users_[static_cast<size_t>(next)].size() == 1 &&
                           users_[static_cast<size_t>(f_.ops[static_cast<size_t>(loop.results.at(k))].result)].empty();
        if (step.kind != OpKind::AddPtr || step.operands[0] != a.result || reads(step.operands[1], u->rem) || !alone)
            return "the " + op_at(f_, arg) + " carries a pointer other ops read, or advances it by the remainder";
        u->carried = arg;
        return path(a.operands[0], add, u);
    }

    // The copy of v computed from x instead of `rem`, and x shaped as it (kNoValue where v does not
    // read the remainder).
    std::pair<ValueId, ValueId> copy(ir::Builder &b, ValueId v, ValueId rem, std::vector<ValueId> &map,
                                     std::map<ValueId, std::pair<ValueId, ValueId>> &copies) {
        if (v == rem) {
            const ValueId x = map[f_.def(rem).operands[0]];
            return {x, x};
        }
        if (!reads(v, rem)) return {map[v], ir::kNoValue};
        auto it = copies.find(v);
        if (it != copies.end()) return it->second;
        const ir::Op &op = f_.def(v);
        ir::Op c = op;
        ValueId index = ir::kNoValue;
        for (ValueId &o : c.operands) {
            const ValueId from = o;
            std::tie(o, index) = reads(from, rem) ? copy(b, from, rem, map, copies) : std::make_pair(map[from], index);
        }
        b.loc = op.loc;
        const ValueId out = b.append(c, f_.type(v));
        if (reshapes(op.kind)) {
            ir::Op s = op;
            s.operands = {index};
            index = b.append(s, f_.type(v).with_elem(b.func().type(index).elem));
        }
        return copies[v] = {out, index};
    }

    // `x < d` for x shaped as the address (`index`), as the frontend writes `x[:, None] < d`: the
    // comparison on x before its last broadcast, then broadcast to the add's tile.
    static ValueId below(ir::Builder &b, ValueId index, ValueId d, const ir::Type &tile) {
        const ir::Function &g = b.func();
        ValueId x = index;
        while (g.def(x).kind == OpKind::Broadcast && g.type(g.def(x).operands[0]).rank() == g.type(x).rank())
            x = g.def(x).operands[0];
        const ValueId lt = b.binary(OpKind::Lt, x, b.broadcast(d, g.type(x).shape));
        return g.type(lt).same_shape(tile) ? lt : b.broadcast(lt, tile.shape);
    }
};

}  // namespace

UnwrappedAdds unwrap_adds(const ir::Function &f) {
    UnwrappedAdds out{f, 0, ""};
    for (;;) {
        Unwrapper u(out.fn);
        std::string refused;
        bool changed = false;
        for (int i = 0; i < static_cast<int>(out.fn.ops.size()) && !changed; ++i) {
            if (out.fn.ops[static_cast<size_t>(i)].kind != OpKind::AtomicAdd) continue;
            const std::string param = pointer_base(out.fn, out.fn.ops[static_cast<size_t>(i)].operands[0]);
            for (ValueId rem : u.remainders(i)) {
                const std::string what = param + ": " + op_at(out.fn, i) + ", wrapped by the " +
                                         op_at(out.fn, out.fn.values[static_cast<size_t>(rem)].def_op);
                Unwrap w;
                std::string why = u.plan(i, rem, &w);
                ValueId value = ir::kNoValue, past = ir::kNoValue;
                ir::Function g;
                if (why.empty()) {
                    g = u.apply(w, &value, &past);
                    if (!zero_off_mask(g, value, past)) why = "its value is not proved 0 past the divisor";
                }
                if (!why.empty()) {
                    refused += what + ": not unwrapped: " + why + "\n";
                    continue;
                }
                out.report += what + ": unwrapped\n";
                out.fn = dce(g);
                ++out.unwrapped;
                changed = true;
                break;
            }
        }
        if (!changed) return out.report += refused, out;
    }
}

}  // namespace tad::passes
