// Block pointers: tl.make_block_ptr describes a tile window over a strided tensor; tad keeps it as a
// compile-time record (base, shape, strides, offsets, block shape) and lowers each access to a
// pointer tile plus, under boundary_check, the mask of in-bounds lanes. The backward then needs no
// block-pointer support of its own: its shadow pointers follow the same arithmetic.
#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

namespace {

std::vector<CV> tuple_items(const CV &c) { return c.kind == CV::Tuple ? c.items : std::vector<CV>{c}; }

}  // namespace

CV Lowerer::make_block_ptr(const ast::Node &e, const Args &a) {
    const std::string fn = "tl.make_block_ptr";
    ValueId base = value_arg(need(a, 0, "base", e, fn), e);
    if (!fn_.type(base).is_ptr || !fn_.type(base).scalar()) unsupported(e, fn, "base must be a scalar pointer");
    std::vector<CV> shape = tuple_items(need(a, 1, "shape", e, fn)),
                    strides = tuple_items(need(a, 2, "strides", e, fn)),
                    offsets = tuple_items(need(a, 3, "offsets", e, fn));
    std::vector<Dim> block = shape_arg(need(a, 4, "block_shape", e, fn), e);
    size_t r = block.size();
    if (shape.size() != r || strides.size() != r || offsets.size() != r)
        unsupported(e, fn, "shape, strides, offsets and block_shape must have the same length");
    CV bp;
    bp.kind = CV::BlockPtr;
    bp.v = base;
    bp.block = block;
    for (const auto *list : {&shape, &strides, &offsets})
        for (const CV &c : *list) {
            if (c.kind != CV::Value && c.kind != CV::Int)
                unsupported(e, fn, "shape, strides and offsets must be integers");
            bp.items.push_back(c);
        }
    return bp;
}

CV Lowerer::advance(const ast::Node &e, const Args &a) {
    CV bp = need(a, 0, "base", e, "tl.advance");
    if (bp.kind != CV::BlockPtr) unsupported(e, "tl.advance", "its first argument must be a block pointer");
    std::vector<CV> delta = tuple_items(need(a, 1, "offsets", e, "tl.advance"));
    if (delta.size() != bp.block.size()) unsupported(e, "tl.advance", "one offset per dim of the block");
    for (size_t d = 0; d < delta.size(); ++d) {
        // A literal 0 moves nothing; a constexpr is added even where it is 0 (it stays symbolic).
        if (!(delta[d].kind == CV::Int && delta[d].i == 0 && delta[d].deps.empty()))
            bp.offset(d) = binop("Add", bp.offset(d), delta[d], e);
    }
    return bp;
}

std::pair<ValueId, ValueId> Lowerer::block_access(const ast::Node &e, const CV &bp, const Args &a,
                                                  const std::string &fn) {
    const size_t r = bp.block.size();
    std::vector<bool> checked(r, false);
    if (a.kw.count("boundary_check"))
        for (const CV &c : tuple_items(a.kw.at("boundary_check"))) {
            const int64_t d = c.kind == CV::Int ? int_of(c, e, fn + "'s boundary_check") : -1;
            if (d < 0 || d >= static_cast<int64_t>(r)) unsupported(e, fn, "boundary_check must list dims of the block");
            checked[static_cast<size_t>(d)] = true;
        }
    return block_window(e, bp, checked);
}

std::pair<ValueId, ValueId> Lowerer::block_window(const ast::Node &e, const CV &bp, const std::vector<bool> &checked) {
    const size_t r = bp.block.size();
    // Element (i_0, ..., i_r-1) of the block sits at base + Σ_d (offset_d + i_d)·stride_d, in int64
    // as Triton computes block pointer addresses.
    Type i64{DType::I64, false, {}}, i32{DType::I32, false, {}};
    ValueId address = ir::kNoValue, mask = ir::kNoValue;
    for (size_t d = 0; d < r; ++d) {
        ValueId idx = b_.arange(0, bp.block[d].value, bp.block[d].expr);
        ValueId off = b_.cast(materialize(bp.offset(d), &i32, e), DType::I32);
        idx = b_.binary(OpKind::Add, b_.broadcast(off, fn_.type(idx).shape), idx);
        for (size_t k = 0; k < r; ++k)
            if (k != d) idx = b_.expand_dims(idx, static_cast<int>(k));
        idx = b_.broadcast(idx, bp.block);
        ValueId term = b_.cast(idx, DType::I64);
        const CV &stride = bp.items[r + d];
        // A descriptor's last stride is the literal 1: no multiply to print in the backward (a
        // constexpr stride is multiplied by even where it is 1, so that it stays symbolic).
        if (!(stride.kind == CV::Int && stride.i == 1 && stride.deps.empty()))
            term =
                b_.binary(OpKind::Mul, term, b_.broadcast(b_.cast(materialize(stride, &i64, e), DType::I64), bp.block));
        address = address == ir::kNoValue ? term : b_.binary(OpKind::Add, address, term);
        if (!checked[d]) continue;
        ValueId extent = b_.cast(materialize(bp.items[d], &i32, e), DType::I32);
        ValueId zero = b_.broadcast(b_.constant(0, DType::I32), bp.block);
        ValueId in = b_.binary(OpKind::And, b_.binary(OpKind::Ge, idx, zero),
                               b_.binary(OpKind::Lt, idx, b_.broadcast(extent, bp.block)));
        mask = mask == ir::kNoValue ? in : b_.binary(OpKind::And, mask, in);
    }
    return {b_.add_ptr(b_.broadcast(bp.v, bp.block), address), mask};
}

}  // namespace tad::frontend::detail
