#include "passes/widen.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// Whether a constexpr spelling ("BLOCK_K - 1") names identifier `c`.
bool mentions(const std::string &spelling, const std::string &c) {
    for (size_t at = spelling.find(c); at != std::string::npos; at = spelling.find(c, at + 1)) {
        auto ident = [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_'; };
        const bool before = at > 0 && ident(spelling[at - 1]);
        const bool after = at + c.size() < spelling.size() && ident(spelling[at + c.size()]);
        if (!before && !after) return true;
    }
    return false;
}

class WidenProof {
public:
    WidenProof(const ir::Function &g, TileRole role, const std::string &c)
        : g_(g), role_(role), c_(c), a_(g, true), users_(ir::users(g)) {
        for (const ir::Constexpr &x : g.constexprs)
            if (x.name == c) c_value_ = std::strtoll(x.literal.c_str(), nullptr, 10);
    }

    bool run(std::string *why) {
        written_ = written_buffers(g_);
        index_.assign(g_.values.size(), false);
        // Loop-carried values reach their loop's start only through its end: repeat until stable.
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t i = 0; i < g_.ops.size(); ++i)
                if (!visit(static_cast<int>(i), &changed, why)) return false;
        }
        for (size_t i = 0; i < g_.ops.size(); ++i)
            if (!consistent(static_cast<int>(i), why)) return false;
        if (!carried(why)) return false;
        if (role_.exact && !moved_) return *why = c_ + " spells no tile that moves with the programs", false;
        return true;
    }

private:
    const ir::Function &g_;
    const TileRole role_;
    const std::string c_;
    Affine a_;
    int64_t c_value_ = -1;
    std::vector<bool> index_;  // per value: depends on the program id, C or a lane of a C dim
    std::vector<std::vector<int>> users_;  // value -> the ops reading it
    std::set<std::string> written_;  // the buffers the kernel stores or adds to
    bool moved_ = false;  // some address or bound is a global index t·C + lane

    bool c_dim(const ir::Type &t, size_t d) const { return d < t.shape.size() && t.shape[d].expr == c_; }
    bool has_c_dim(const ir::Type &t) const {
        for (size_t d = 0; d < t.shape.size(); ++d)
            if (c_dim(t, d)) return true;
        return false;
    }
    bool refuse(int i, const std::string &what, std::string *why) const {
        return *why = op_at(g_, i) + " " + what, false;
    }
    void mark(ValueId v, bool *changed) {
        if (v != ir::kNoValue && !index_[v]) index_[v] = *changed = true;
    }
    const std::vector<int> &users(ValueId v) const { return users_[static_cast<size_t>(v)]; }

    // The operands of op i that may carry index values (addresses, masks, conditions, loop bounds).
    bool index_operand(const ir::Op &op, size_t k) const {
        switch (op.kind) {
        case OpKind::Load: return k != 2;
        case OpKind::Store:
        case OpKind::AtomicAdd: return k != 1;
        case OpKind::Where: return k == 0 || !g_.type(op.result).is_float();
        default: return !(op.result != ir::kNoValue && g_.type(op.result).is_float());
        }
    }

    bool source(const ir::Op &op) const {
        if (op.kind == OpKind::ProgramId) return op.axis == role_.axis;
        if (op.kind == OpKind::ForBegin) return role_.loop >= 0 && &op == &g_.ops[a_.loops()[role_.loop].begin];
        if (op.kind == OpKind::Const) return mentions(op.name, c_);
        return op.kind == OpKind::Arange && has_c_dim(g_.type(op.result));
    }

    // A dim spelled from C but not C (`2*BLOCK`, `BLOCK // 2`): its size changes with C in a way the
    // proof does not follow.
    bool derived_dim(const ir::Type &t) const {
        for (const ir::Dim &d : t.shape)
            if (d.expr != c_ && mentions(d.expr, c_)) return true;
        return false;
    }

    // Whether op i's result is only added into an accumulator of the loop over the tiles of C, which
    // only that addition reads: a sum along C split at other tile boundaries is the same sum, in
    // another order.
    bool accumulates(int i) const {
        if (role_.loop < 0) return false;
        const ir::Loop &l = a_.loops()[role_.loop];
        ValueId r = g_.ops[i].result;
        while (users(r).size() == 1 && unit_sum(users(r)[0])) r = g_.ops[users(r)[0]].result;
        if (users(r).size() != 1) return false;
        const ir::Op &add = g_.ops[users(r)[0]];
        if (add.kind != OpKind::Add) return false;
        const ValueId acc = add.operands[0] == r ? add.operands[1] : add.operands[0];
        for (size_t s = 0; s < l.args.size(); ++s)
            if (g_.ops[l.args[s]].result == acc)
                return users(acc).size() == 1 && users(add.result) == std::vector<int>{l.end} &&
                       g_.ops[l.end].operands[s] == add.result;
        return false;
    }

    // reduce_sum over a dim of size 1: the same values (`tl.sum(tl.sum(t, 0, keep_dims=True), 0)`).
    bool unit_sum(int i) const {
        const ir::Op &op = g_.ops[i];
        if (op.kind != OpKind::ReduceSum || op.axis < 0) return false;
        const ir::Type &in = g_.type(op.operands[0]);
        return static_cast<size_t>(op.axis) < in.shape.size() && in.shape[op.axis].value == 1 &&
               in.shape[op.axis].expr == "1";
    }

    // The op a value was summed by, through sums over dims of size 1.
    int summed_by(ValueId x) const {
        int d = g_.values[x].def_op;
        while (d >= 0 && unit_sum(d)) d = g_.values[g_.ops[d].operands[0]].def_op;
        return d;
    }

    // A sum of op i's operand along a dim of C: a contraction of one, or reduce_sum along one.
    bool sums_along_c(int i) const {
        const ir::Op &op = g_.ops[i];
        if (op.kind == OpKind::Dot) return c_dim(g_.type(op.operands[0]), 1) || c_dim(g_.type(op.operands[1]), 0);
        if (op.kind != OpKind::ReduceSum) return false;
        const ir::Type &in = g_.type(op.operands[0]);
        return op.axis < 0 ? has_c_dim(in) : c_dim(in, static_cast<size_t>(op.axis));
    }

    // Along the loop, what each carried value becomes after all its iterations must not depend on
    // how many there are: an index value (its uses are checked), a value passed through unchanged,
    // or an accumulator of sums along C (accumulates()); a count of iterations or a tile of C
    // carried across them would change with C.
    bool carried(std::string *why) const {
        if (role_.loop < 0) return true;
        const ir::Loop &l = a_.loops()[role_.loop];
        const ir::Op &end = g_.ops[l.end];
        for (size_t s = 0; s < l.args.size(); ++s) {
            const ValueId v = end.operands[s], arg = g_.ops[l.args[s]].result;
            if (index_[v] || v == arg) continue;
            const ir::Op &add = g_.def(v);
            bool ok = false;
            if (add.kind == OpKind::Add)
                for (ValueId x : add.operands) {
                    const int d = x == arg ? -1 : summed_by(x);
                    ok = ok || (d >= 0 && sums_along_c(d) && accumulates(d));
                }
            if (!ok) return refuse(l.end, "carries a value other than a sum along " + c_ + " across its tiles", why);
        }
        return true;
    }

    // Two dims at one position of an op's operand and result (or of a contraction's operands), one
    // spelled C, the other not: the shapes would disagree at another value of C.
    bool mixes_c(const ir::Op &op) const {
        auto differ = [&](const ir::Dim &a, const ir::Dim &b) {
            return (a.expr == c_) != (b.expr == c_) && a.value != 1 && b.value != 1;
        };
        if (op.kind == OpKind::Dot) return differ(g_.type(op.operands[0]).shape[1], g_.type(op.operands[1]).shape[0]);
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (op.result == ir::kNoValue ||
            (cls != ir::OpClass::Unary && cls != ir::OpClass::Binary && cls != ir::OpClass::Compare &&
             cls != ir::OpClass::Logical && cls != ir::OpClass::Elementwise && op.kind != OpKind::Broadcast))
            return false;
        const ir::Type &t = g_.type(op.result);
        for (size_t k = 0; k < op.operands.size(); ++k) {
            if (op.kind == OpKind::Cast && k > 0) break;  // `cast x, y`: y gives only the element type
            const ir::Type &u = g_.type(op.operands[k]);
            if (u.rank() != t.rank()) continue;
            for (size_t d = 0; d < t.shape.size(); ++d)
                if (differ(u.shape[d], t.shape[d])) return true;
        }
        return false;
    }

    // What no op may do to a C dim or an index value, whether or not it reads one (`any`).
    bool along_c(int i, bool any, std::string *why) const {
        const ir::Op &op = g_.ops[i];
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (cls == ir::OpClass::Reduction || cls == ir::OpClass::Scan) {
            const ir::Type &in = g_.type(op.operands[0]);
            const bool over_c = op.axis < 0 ? has_c_dim(in) : c_dim(in, static_cast<size_t>(op.axis));
            if (any || (over_c && !(sums_along_c(i) && accumulates(i))))
                return refuse(i, "reduces along a dim of " + c_, why);
        }
        if (op.kind == OpKind::Dot && sums_along_c(i) && !accumulates(i))
            return refuse(i, "contracts a dim of " + c_, why);
        if (mixes_c(op)) return refuse(i, "pairs a dim of " + c_ + " with another dim", why);
        if (op.kind == OpKind::Reshape || op.kind == OpKind::Join || op.kind == OpKind::Split) {
            bool touches = any || (op.result != ir::kNoValue && has_c_dim(g_.type(op.result)));
            for (ValueId v : op.operands) touches = touches || has_c_dim(g_.type(v));
            if (touches) return refuse(i, "reshapes a tile with a dim of " + c_, why);
        }
        if (role_.axis >= 0 && op.kind == OpKind::NumPrograms && op.axis == role_.axis)
            return refuse(i, "reads the grid's size along axis " + std::to_string(role_.axis), why);
        return true;
    }

    // A yielded index value makes its loop argument and result index values.
    void carry(int end, bool *changed) {
        const ir::Op &op = g_.ops[end];
        for (const ir::Loop &l : a_.loops())
            if (l.end == end)
                for (size_t s = 0; s < l.args.size(); ++s)
                    if (index_[op.operands[s]]) {
                        mark(g_.ops[l.args[s]].result, changed);
                        if (s < l.results.size()) mark(g_.ops[l.results[s]].result, changed);
                    }
    }

    bool visit(int i, bool *changed, std::string *why) {
        const ir::Op &op = g_.ops[i];
        if (op.result != ir::kNoValue && derived_dim(g_.type(op.result)))
            return refuse(i, "has a tile whose size is computed from " + c_, why);
        if (op.kind == OpKind::Const && op.name.empty() && c_value_ > 1 && op.fval == static_cast<double>(c_value_))
            return refuse(i, "holds " + std::to_string(c_value_) + ", " + c_ + "'s value, as a literal", why);
        if (op.result != ir::kNoValue && c_value_ > 1)
            for (const ir::Dim &d : g_.type(op.result).shape)
                if (d.value == c_value_ && d.expr == std::to_string(d.value))
                    return refuse(i, "has a dim of " + d.expr + ", " + c_ + "'s value, unnamed", why);
        bool any = source(op);
        for (size_t k = 0; k < op.operands.size(); ++k) {
            if (!index_[op.operands[k]]) continue;
            if (!index_operand(op, k)) return refuse(i, "computes a value from an index along " + c_, why);
            // A trip count is the whole tile's, not each element's: its tiles' boundaries would move it.
            if (op.kind == OpKind::ForBegin) return refuse(i, "bounds a loop by an index along " + c_, why);
            any = true;
        }
        if (!along_c(i, any, why)) return false;
        if (!any || op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd) return true;
        if (op.kind == OpKind::ForEnd) return carry(i, changed), true;
        mark(op.result, changed);
        return true;
    }

    // Whether index variable v is the one whose tiles C spans: the program id along the role's axis
    // (or a part of it), or the iterations of the role's loop.
    bool own(const IndexVar &v) const {
        if (role_.loop >= 0) return v.kind == IndexVar::Iteration && v.n == role_.loop;
        return v.n == role_.axis && v.kind != IndexVar::Lane && v.kind != IndexVar::Iteration && !v.divides();
    }

    // Whether a divided index (x // d, x % d) of a form on tile t leaves C's tiles alone: x reads
    // neither the program id C spans nor a lane of a C dim, and nothing of it mentions C. Its value
    // is then the same wherever C's tile boundaries fall (a wrapped row offset `% M` in a kernel
    // widened along K).
    bool apart(const Division &d, const ir::Type &t) const {
        for (const auto &[v, coeff] : d.dividend.terms)
            if (own(v) || (v.kind == IndexVar::Lane && c_dim(t, static_cast<size_t>(v.n))) || coeff.mentions(c_))
                return false;
        return !d.dividend.offset.mentions(c_) && !d.divisor.mentions(c_);
    }

    // An index form moves with the program id C times as fast as with its C lane, and has C
    // nowhere else.
    bool global(const Form &f, const ir::Type &t, int i, std::string *why) {
        if (!f.affine) return refuse(i, "has an index along " + c_ + " that is not affine", why);
        Poly pid, lane;
        int lanes = 0;
        for (const auto &[v, coeff] : f.terms) {
            if (v.divides() && !apart(a_.divisions().at(static_cast<size_t>(v.n)), t))
                return refuse(i, "divides an index along " + c_, why);
            if (own(v) && v.kind != IndexVar::Program && v.kind != IndexVar::Iteration)
                return refuse(i, "splits the program id", why);
            if (own(v)) {
                pid = coeff;
            } else if (v.kind == IndexVar::Lane && c_dim(t, static_cast<size_t>(v.n))) {
                lane = coeff;
                ++lanes;
            } else if (coeff.mentions(c_)) {
                return refuse(i, "scales " + v.str() + " by " + c_, why);
            }
        }
        if (f.offset.mentions(c_)) return refuse(i, "offsets an index by " + c_, why);
        if (lanes > 1) return refuse(i, "indexes two dims of " + c_ + " at once", why);
        if (lane.mentions(c_)) return refuse(i, "scales a lane of " + c_ + " by " + c_, why);
        if (pid.zero() && lanes == 0) return true;
        if (lanes == 0 || pid != Poly::symbol(c_) * lane)
            return refuse(i, "indexes a tile of " + c_ + " other than by its elements' global index", why);
        moved_ = true;
        return true;
    }

    bool bounds_global(ValueId mask, int i, std::string *why) {
        if (mask == ir::kNoValue || !index_[mask]) return true;
        if (!a_.only_bounds(mask))
            return refuse(i, "has a condition on an index along " + c_ + " that is not a bound", why);
        for (const Bound &b : a_.bounds(mask)) {
            if (b.bound.mentions(c_)) return refuse(i, "bounds an index by " + c_, why);
            if (!global(b.form, g_.type(mask), i, why)) return false;
        }
        return true;
    }

    // Whether an address form indexes a lane of a C dim of type t.
    bool c_lane(const Form &f, const ir::Type &t) const {
        for (const auto &term : f.terms)
            if (term.first.kind == IndexVar::Lane && c_dim(t, static_cast<size_t>(term.first.n))) return true;
        return false;
    }

    // A mask with a bound on a C dim's global index: what keeps a wider tile's extra elements (past
    // the forward's last tile) out of memory.
    bool bounds_c_lane(ValueId mask) {
        if (mask == ir::kNoValue) return false;
        for (const Bound &b : a_.bounds(mask))
            if (c_lane(b.form, g_.type(mask))) return true;
        return false;
    }

    // Writes: along the loop, none inside it (what a later tile reads would move); along an axis,
    // each to elements of the program's own C tile (another number of programs would repeat or
    // drop a write that no lane of C indexes). Reads: no buffer the kernel writes.
    bool memory(int i, ValueId ptr, std::string *why) {
        const ir::Op &op = g_.ops[i];
        const bool write = op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd;
        if (!write) return !written_.count(pointer_base(g_, ptr)) || refuse(i, "reads a buffer the kernel writes", why);
        if (role_.loop >= 0) {
            const ir::Loop &l = a_.loops()[role_.loop];
            return i < l.begin || i > l.end || refuse(i, "writes memory inside the loop over the tiles of " + c_, why);
        }
        return c_lane(a_.of(ptr), g_.type(ptr)) ||
               refuse(i, "writes elements no lane of " + c_ + " indexes: per program, not per element", why);
    }

    bool access(int i, ValueId ptr, ValueId mask, std::string *why) {
        if (!memory(i, ptr, why)) return false;
        if (!index_[ptr]) return bounds_global(mask, i, why);
        if (!global(a_.of(ptr), g_.type(ptr), i, why)) return false;
        if (!role_.exact && has_c_dim(g_.type(ptr)) && !bounds_c_lane(mask))
            return refuse(i, "reaches past the tiles of " + c_ + " without a mask bounding them", why);
        return bounds_global(mask, i, why);
    }

    bool consistent(int i, std::string *why) {
        const ir::Op &op = g_.ops[i];
        switch (op.kind) {
        case OpKind::Load: return access(i, op.operands[0], op.has_mask ? op.operands[1] : ir::kNoValue, why);
        case OpKind::Store:
        case OpKind::AtomicAdd: return access(i, op.operands[0], op.has_mask ? op.operands[2] : ir::kNoValue, why);
        case OpKind::Where: return !g_.type(op.result).is_float() || bounds_global(op.operands[0], i, why);
        default: return true;
        }
    }
};

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The targets of free_tiles (widen.h).
void choose_targets(const ir::Function &g, int loop, std::vector<FreeTile> &tiles, const std::string &widened,
                    int64_t width) {
    if (loop < 0) return;
    const ir::Loop l = ir::loops(g)[static_cast<size_t>(loop)];
    bool dot = false, wide_index = false;
    for (int i = l.begin + 1; i < l.end; ++i) {
        const ir::Op &op = g.ops[static_cast<size_t>(i)];
        dot = dot || op.kind == OpKind::Dot;
        wide_index = wide_index || (op.result != ir::kNoValue && g.type(op.result).elem == ir::DType::I64 &&
                                    g.type(op.result).rank() > 0);
    }
    if (!dot) return;
    for (FreeTile &t : tiles)
        if (t.axis < 0) t.target = 64;
    if (wide_index || l.results.size() != 1) return;
    // The accumulator's one dim along a free axis gets what makes it about 128 x 256 elements.
    const ir::Type &acc = g.type(g.ops[static_cast<size_t>(l.results[0])].result);
    FreeTile *free_dim = nullptr;
    int64_t rest = 128L * 256;
    for (const ir::Dim &d : acc.shape) {
        FreeTile *t = nullptr;
        for (FreeTile &x : tiles)
            if (x.axis >= 0 && x.name == d.expr) t = &x;
        if (t && free_dim) return;  // two free dims: no one shape to aim at
        if (t)
            free_dim = t;
        else
            rest /= std::max<int64_t>(1, d.expr == widened ? d.value * width : d.value);
    }
    if (acc.rank() != 2 || !free_dim) return;
    int64_t target = 16;
    while (target * 2 <= std::min<int64_t>(rest, 256)) target *= 2;
    free_dim->target = target;
}

}  // namespace

std::vector<FreeTile> free_tiles(const ir::Function &g, const std::vector<int> &axes, const std::string &grid_param,
                                 const std::string &widened, int64_t width) {
    std::vector<FreeTile> out;
    const int loop = loop_over_grid(g, grid_param);
    for (const ir::Constexpr &c : g.constexprs) {
        if (c.name == widened || !power_of_two(std::strtoll(c.literal.c_str(), nullptr, 10))) continue;
        std::string why;
        if (loop >= 0 && retile_proof(g, TileRole{-1, loop, true}, c.name, &why)) {
            out.push_back({c.name, -1, 0});
            continue;
        }
        for (int a : axes)
            if (retile_proof(g, TileRole{a, -1, true}, c.name, &why)) {
                out.push_back({c.name, a, 0});
                break;
            }
    }
    choose_targets(g, loop, out, widened, width);
    return out;
}

int64_t widen_factor(int64_t value, int64_t most, int64_t elements) {
    int64_t w = 1;
    while (w * 2 <= most && w * 2 * std::max<int64_t>(1, elements) <= kWidenElements && w * 2 * value <= kWidenSide)
        w *= 2;
    return w;
}

bool widened_value(const Widening &w, const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out) {
    int64_t value = 0, elements = 0;
    if (!lookup(w.name, &value)) return false;
    for (const std::vector<std::string> &tile : w.tiles) {
        int64_t n = 1;
        for (const std::string &d : tile) {
            char *end = nullptr;
            int64_t v = std::strtoll(d.c_str(), &end, 10);
            if ((d.empty() || *end != '\0') && !lookup(d, &v)) return false;
            n *= v;
        }
        elements += n;
    }
    *out = value * widen_factor(value, w.most, elements);
    return true;
}

int loop_over_grid(const ir::Function &g, const std::string &grid_param) {
    const int p = g.param_index(grid_param);
    if (p < 0) return -1;
    const ValueId gv = g.params[static_cast<size_t>(p)].value;
    auto literal = [&](ValueId v, double x) {
        const ir::Op &op = g.def(v);
        return op.kind == OpKind::Const && op.name.empty() && op.fval == x;
    };
    const std::vector<ir::Loop> loops = ir::loops(g);
    int found = -1, uses = 0;
    for (size_t i = 0; i < g.ops.size(); ++i)
        for (ValueId o : g.ops[i].operands) uses += o == gv;
    for (size_t l = 0; l < loops.size(); ++l) {
        const ir::Op &b = g.ops[static_cast<size_t>(loops[l].begin)];
        if (b.operands.size() == 3 && b.operands[1] == gv && literal(b.operands[0], 0) && literal(b.operands[2], 1))
            found = static_cast<int>(l);
    }
    return uses == 1 ? found : -1;
}

bool widen_proof(const ir::Function &g, int axis, const std::string &c, std::string *why) {
    return WidenProof(g, TileRole{axis, -1, false}, c).run(why);
}

bool retile_proof(const ir::Function &g, TileRole role, const std::string &c, std::string *why) {
    return WidenProof(g, role, c).run(why);
}

}  // namespace tad::passes
