#include "passes/fold_scatter.h"

#include "passes/passes.h"
#include "passes/split_scatter.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

bool writes(const ir::Op &op) { return op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd; }

// The ops from a pointer parameter out to `ptr`, outermost first (into `path` unless null), when
// there are only offsets, broadcasts and expand_dims on the way (then the element offset is their
// offsets' sum).
bool offset_path(const ir::Function &f, ValueId ptr, std::vector<int> *path) {
    for (ValueId v = ptr;;) {
        const ir::Op &op = f.def(v);
        if (op.kind == OpKind::Param) return true;
        if (op.kind != OpKind::AddPtr && op.kind != OpKind::Broadcast && op.kind != OpKind::ExpandDims) return false;
        if (path) path->insert(path->begin(), f.values[v].def_op);
        v = op.operands[0];
    }
}

// The program's index in the grid, axis 0 fastest: the same in both kernels of a fold.
ValueId linear_program_id(ir::Builder &b) {
    std::array<ValueId, 3> ids{}, counts{};
    for (int axis = 0; axis < 3; ++axis) {
        ids[axis] = b.program_id(axis);
        if (axis < 2) counts[axis] = b.num_programs(axis);  // the last axis's count is not read
    }
    return linear_program(b, ids, counts, {0, 1, 2});
}

// One scattered write: its op, its bit in the hits word, and (once the copy reached it) its element
// offset, value and mask in the rewritten function.
struct Scattered {
    int op = -1;
    int bit = 0;
    ValueId offset = ir::kNoValue, value = ir::kNoValue, mask = ir::kNoValue;
};

// The innermost loop holding op i (its index in `loops`), -1 at top level.
int innermost_loop(const std::vector<ir::Loop> &loops, int i) {
    int best = -1;
    for (size_t k = 0; k < loops.size(); ++k)
        if (loops[k].begin < i && i <= loops[k].last() && (best < 0 || loops[k].begin > loops[best].begin))
            best = static_cast<int>(k);
    return best;
}

// Copies f without its scattered writes, adding each to the stores it lands on and carrying the
// hits word through the loops that hold such a store.
class Folder {
public:
    Folder(const ir::Function &f, std::vector<Scattered> scattered, std::vector<bool> carries)
        : f_(f),
          out_(empty_like(f)),
          b_(out_),
          map_(f.values.size(), ir::kNoValue),
          loops_(ir::loops(f)),
          scattered_(std::move(scattered)),
          carries_(std::move(carries)) {}

    ir::Function run(ir::Param *hits_param) {
        size_t i = 0;
        for (; i < f_.ops.size() && f_.ops[i].kind == OpKind::Param; ++i) copy_op(b_, f_, f_.ops[i], map_);
        hits_ = b_.constant(0, ir::DType::I32);
        for (; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            Scattered *s = scattered_at(static_cast<int>(i));
            if (s)
                remember(*s);
            else if (op.kind == OpKind::Store && folds_into(op))
                fold(op);
            else if (op.kind == OpKind::ForEnd && carrying(static_cast<int>(i)))
                end_loop(op);
            else
                copy_op(b_, f_, op, map_);
            after(static_cast<int>(i));
        }
        *hits_param = store_hits();
        return with_params(std::move(out_), f_, map_, {*hits_param});
    }

private:
    const ir::Function &f_;
    ir::Function out_;
    ir::Builder b_;
    std::vector<ValueId> map_;
    std::vector<ir::Loop> loops_;
    std::vector<Scattered> scattered_;
    std::vector<bool> carries_;  // per loop: it holds a store something folds into
    ValueId hits_ = ir::kNoValue;

    Scattered *scattered_at(int i) {
        for (Scattered &s : scattered_)
            if (s.op == i) return &s;
        return nullptr;
    }

    bool folds_into(const ir::Op &store) const {
        for (const Scattered &s : scattered_)
            if (pointer_base(f_, store.operands[0]) == pointer_base(f_, f_.ops[s.op].operands[0])) return true;
        return false;
    }

    int loop_ending_at(int i, bool results) const {
        for (size_t l = 0; l < loops_.size(); ++l) {
            const ir::Loop &lp = loops_[l];
            if ((results ? lp.last() : lp.end) == i) return static_cast<int>(l);
        }
        return -1;
    }

    bool carrying(int end) const {
        const int l = loop_ending_at(end, false);
        return l >= 0 && carries_[l];
    }

    // The element offset of `ptr` from its parameter, as an i64 tile of its shape.
    ValueId offset(ValueId ptr) {
        std::vector<int> path;
        offset_path(f_, ptr, &path);
        ValueId off = ir::kNoValue;
        for (int i : path) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::AddPtr) {
                const ValueId o = b_.cast(map_[op.operands[1]], ir::DType::I64);
                off = off == ir::kNoValue ? o : b_.binary(OpKind::Add, off, o);
            } else if (off != ir::kNoValue) {
                off = op.kind == OpKind::Broadcast ? b_.broadcast(off, f_.type(op.result).shape)
                                                   : b_.expand_dims(off, op.axis);
            }
        }
        if (off == ir::kNoValue) off = b_.constant(0, ir::DType::I64);
        return f_.type(ptr).scalar() ? off : b_.broadcast(off, f_.type(ptr).shape);
    }

    void remember(Scattered &s) {
        const ir::Op &op = f_.ops[s.op];
        b_.loc = op.loc;
        s.offset = offset(op.operands[0]);
        s.value = map_[op.operands[1]];
        s.mask = op.has_mask ? map_[op.operands[2]] : ir::kNoValue;
    }

    ValueId both(ValueId a, ValueId c) {
        return a == ir::kNoValue ? c : c == ir::kNoValue ? a : b_.binary(OpKind::And, a, c);
    }

    ValueId spread(ValueId v, const std::vector<ir::Dim> &shape) {
        return shape.empty() || v == ir::kNoValue ? v : b_.broadcast(v, shape);
    }

    // The store with each scattered value that lands on one of its lanes added, and their bits set
    // in the hits word.
    void fold(const ir::Op &store) {
        b_.loc = store.loc;
        const ir::Type &t = f_.type(store.operands[1]);
        ValueId value = map_[store.operands[1]];
        const ValueId mask = store.has_mask ? map_[store.operands[2]] : ir::kNoValue;
        const ValueId at = offset(store.operands[0]);
        for (const Scattered &s : scattered_) {
            if (pointer_base(f_, store.operands[0]) != pointer_base(f_, f_.ops[s.op].operands[0])) continue;
            const ValueId on = both(b_.binary(OpKind::Eq, at, spread(s.offset, t.shape)), spread(s.mask, t.shape));
            const ValueId add = spread(b_.cast(s.value, t.elem), t.shape);
            value = b_.binary(OpKind::Add, value, b_.where(on, add, spread(b_.constant(0, t.elem), t.shape)));
            ValueId hit = b_.cast(both(on, mask), ir::DType::I32);
            if (!t.shape.empty()) hit = b_.reduce(OpKind::ReduceMax, hit, -1, false);
            if (s.bit > 0) hit = b_.binary(OpKind::Mul, hit, b_.constant(1 << s.bit, ir::DType::I32));
            hits_ = b_.binary(OpKind::Or, hits_, hit);
        }
        b_.store(map_[store.operands[0]], value, mask);
    }

    // A carrying loop's for_end also yields the hits word.
    void end_loop(const ir::Op &op) {
        ir::Op c = op;
        for (ValueId &v : c.operands) v = map_.at(v);
        c.operands.push_back(hits_);
        b_.loc = op.loc;
        b_.append(c, ir::Type{}, false);
    }

    // After the last loop_arg of a carrying loop, the hits word's; after its last loop_result, the
    // word's result.
    void after(int i) {
        for (size_t l = 0; l < loops_.size(); ++l) {
            const ir::Loop &lp = loops_[l];
            if (!carries_[l]) continue;
            const int n = static_cast<int>(lp.args.size());
            if ((lp.args.empty() ? lp.begin : lp.args.back()) == i) hits_ = b_.loop_arg(hits_, n);
            if (lp.last() == i) hits_ = b_.loop_result(n, ir::Type{ir::DType::I32, false, {}});
        }
    }

    // hits[linear program id] = the word.
    ir::Param store_hits() {
        ir::Op op(OpKind::Param, {});
        op.ival = static_cast<int64_t>(f_.params.size());
        op.name = fresh_name(f_, "Hits");
        const ValueId p = b_.append(op, ir::Type{ir::DType::I32, true, {}});
        out_.values[p].name = op.name;
        b_.store(b_.add_ptr(p, linear_program_id(b_)), hits_, ir::kNoValue);
        return ir::Param{op.name, ir::ParamKind::Pointer, p, ""};
    }
};

// The scatter kernel adding only where its program did not fold: each atomic add's mask gains
// `(hits[linear program id] & bit) == 0`.
ir::Function masked_scatter(const ir::Function &scatter, const std::string &hits_name) {
    ir::Function out = empty_like(scatter);
    ir::Builder b(out);
    std::vector<ValueId> map(scatter.values.size(), ir::kNoValue);
    ir::Op param(OpKind::Param, {});
    param.ival = static_cast<int64_t>(scatter.params.size());
    param.name = hits_name;
    ValueId hits = ir::kNoValue, word = ir::kNoValue;
    int bit = 0;
    for (const ir::Op &op : scatter.ops) {
        if (op.kind != OpKind::AtomicAdd) {
            copy_op(b, scatter, op, map);
            continue;
        }
        b.loc = op.loc;
        if (word == ir::kNoValue) {
            hits = b.append(param, ir::Type{ir::DType::I32, true, {}});
            out.values[hits].name = hits_name;
            word = b.load(b.add_ptr(hits, linear_program_id(b)), ir::kNoValue, ir::kNoValue);
        }
        const ValueId mine = b.binary(OpKind::And, word, b.constant(1 << bit++, ir::DType::I32));
        ValueId elsewhere = b.binary(OpKind::Eq, mine, b.constant(0, ir::DType::I32));
        if (op.has_mask) elsewhere = b.binary(OpKind::And, map[op.operands[2]], elsewhere);
        b.atomic_add(map[op.operands[0]], map[op.operands[1]], elsewhere, op.name);
    }
    return with_params(std::move(out), scatter, map, {ir::Param{hits_name, ir::ParamKind::Pointer, hits, ""}});
}

}  // namespace

ScatterFold fold_scatter(const ir::Function &f, const std::set<std::string> &params) {
    ScatterFold out;
    ScatterSplit split = split_scatter(f, params);
    if (!split.why.empty()) return out.why = split.why, out;
    const std::vector<ir::Loop> loops = ir::loops(f);
    const std::vector<bool> top = top_level(f);
    const std::vector<bool> is_scattered = scattered_writes(f, params);
    std::vector<Scattered> scattered;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (!is_scattered[i]) continue;
        if (!top[i]) return out.why = "the " + op_at(f, static_cast<int>(i)) + " is inside a loop", out;
        if (!f.type(op.operands[0]).scalar())
            return out.why = "the " + op_at(f, static_cast<int>(i)) + " writes a tile", out;
        if (!offset_path(f, op.operands[0], nullptr))
            return out.why = "the " + op_at(f, static_cast<int>(i)) + " has an address other than offsets", out;
        if (scattered.size() == 31) return out.why = "more than 31 writes at data-dependent addresses", out;
        scattered.push_back({static_cast<int>(i), static_cast<int>(scattered.size())});
    }
    std::vector<bool> carries(loops.size(), false);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        const std::string base = writes(op) ? pointer_base(f, op.operands[0]) : "";
        if (!params.count(base) || is_scattered[i]) continue;
        if (op.kind != OpKind::Store || !offset_path(f, op.operands[0], nullptr))
            return out.why = "the " + op_at(f, static_cast<int>(i)) + " is not a plain store at offsets", out;
        int first = static_cast<int>(i);
        for (int l = innermost_loop(loops, first); l >= 0; l = loops[l].parent) {
            carries[l] = true;
            first = loops[l].begin;
        }
        for (const Scattered &s : scattered)
            if (pointer_base(f, f.ops[s.op].operands[0]) == base && s.op > first)
                return out.why = "the " + op_at(f, s.op) + " follows the " + op_at(f, static_cast<int>(i)), out;
    }
    ir::Param hits;
    out.rest = Folder(f, scattered, carries).run(&hits);
    out.hits = hits.name;
    out.scatter = masked_scatter(split.scatter, hits.name);
    return out;
}

}  // namespace tad::passes
