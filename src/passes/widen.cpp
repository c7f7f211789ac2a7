#include "passes/widen.h"

#include <cctype>
#include <cstdlib>

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
    WidenProof(const ir::Function &g, int axis, const std::string &c) : g_(g), axis_(axis), c_(c), a_(g) {
        for (const ir::Constexpr &x : g.constexprs)
            if (x.name == c) c_value_ = std::strtoll(x.literal.c_str(), nullptr, 10);
    }

    bool run(std::string *why) {
        index_.assign(g_.values.size(), false);
        // Loop-carried values reach their loop's start only through its end: repeat until stable.
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t i = 0; i < g_.ops.size(); ++i)
                if (!visit(static_cast<int>(i), &changed, why)) return false;
        }
        for (size_t i = 0; i < g_.ops.size(); ++i)
            if (!consistent(static_cast<int>(i), why)) return false;
        return true;
    }

private:
    const ir::Function &g_;
    const int axis_;
    const std::string c_;
    Affine a_;
    int64_t c_value_ = -1;
    std::vector<bool> index_;  // per value: depends on the program id, C or a lane of a C dim

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
        if (op.kind == OpKind::ProgramId) return op.axis == axis_;
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

    // What no op may do to a C dim or an index value, whether or not it reads one (`any`).
    bool along_c(int i, bool any, std::string *why) const {
        const ir::Op &op = g_.ops[i];
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (cls == ir::OpClass::Reduction || cls == ir::OpClass::Scan) {
            const ir::Type &in = g_.type(op.operands[0]);
            const bool over_c = op.axis < 0 ? has_c_dim(in) : c_dim(in, static_cast<size_t>(op.axis));
            if (over_c || any) return refuse(i, "reduces along a dim of " + c_, why);
        }
        if (op.kind == OpKind::Dot && (c_dim(g_.type(op.operands[0]), 1) || c_dim(g_.type(op.operands[1]), 0)))
            return refuse(i, "contracts a dim of " + c_, why);
        if (op.kind == OpKind::Reshape || op.kind == OpKind::Join || op.kind == OpKind::Split) {
            bool touches = any || (op.result != ir::kNoValue && has_c_dim(g_.type(op.result)));
            for (ValueId v : op.operands) touches = touches || has_c_dim(g_.type(v));
            if (touches) return refuse(i, "reshapes a tile with a dim of " + c_, why);
        }
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
        bool any = source(op);
        for (size_t k = 0; k < op.operands.size(); ++k) {
            if (!index_[op.operands[k]]) continue;
            if (!index_operand(op, k)) return refuse(i, "computes a value from an index along " + c_, why);
            any = true;
        }
        if (!along_c(i, any, why)) return false;
        if (!any || op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd) return true;
        if (op.kind == OpKind::ForEnd) return carry(i, changed), true;
        mark(op.result, changed);
        return true;
    }

    // An index form moves with the program id C times as fast as with its C lane, and has C
    // nowhere else.
    bool global(const Form &f, const ir::Type &t, int i, std::string *why) const {
        if (!f.affine) return refuse(i, "has an index along " + c_ + " that is not affine", why);
        Poly pid, lane;
        int lanes = 0;
        for (const auto &[v, coeff] : f.terms) {
            const bool own_axis = v.n == axis_ && v.kind != IndexVar::Lane && v.kind != IndexVar::Iteration;
            if (own_axis && v.kind != IndexVar::Program) return refuse(i, "splits the program id", why);
            if (own_axis) {
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

    // A mask with a bound on a C dim's global index: what keeps a wider tile's extra elements (past
    // the forward's last tile) out of memory.
    bool bounds_c_lane(ValueId mask) {
        if (mask == ir::kNoValue) return false;
        const ir::Type &t = g_.type(mask);
        for (const Bound &b : a_.bounds(mask))
            for (const auto &term : b.form.terms)
                if (term.first.kind == IndexVar::Lane && c_dim(t, static_cast<size_t>(term.first.n))) return true;
        return false;
    }

    bool access(int i, ValueId ptr, ValueId mask, std::string *why) {
        if (!index_[ptr]) return bounds_global(mask, i, why);
        if (!global(a_.of(ptr), g_.type(ptr), i, why)) return false;
        if (has_c_dim(g_.type(ptr)) && !bounds_c_lane(mask))
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

}  // namespace

bool widen_proof(const ir::Function &g, int axis, const std::string &c, std::string *why) {
    return WidenProof(g, axis, c).run(why);
}

}  // namespace tad::passes
