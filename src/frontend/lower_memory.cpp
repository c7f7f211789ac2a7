// Memory access: tl.load, tl.store and tl.atomic_add, each masked with the run-time `if` predicate
// it runs under (a load of an untaken branch could be out of bounds).
#include <cmath>

#include "frontend/lower_internal.h"

namespace tad::frontend::detail {

CV Lowerer::load(const ast::Node &e, const Args &a) {
    if (need(a, 0, "pointer", e, "tl.load").kind == CV::TensorDesc)
        unsupported(e, "tl.load of a tensor descriptor", "read it with desc.load(offsets)");
    if (need(a, 0, "pointer", e, "tl.load").kind == CV::BlockPtr) {
        auto [p, m] = block_access(e, a.pos[0], a, "tl.load");
        std::string padding = str_of(a.kw.count("padding_option") ? &a.kw.at("padding_option") : nullptr);
        if (!padding.empty() && padding != "zero" && padding != "nan")
            unsupported(e, "tl.load with padding_option='" + padding + "'", "expected 'zero' or 'nan'");
        ValueId o = ir::kNoValue;
        if (m != ir::kNoValue && !padding.empty()) {
            DType t = fn_.type(p).elem;
            o = b_.broadcast(b_.constant(padding == "zero" ? 0.0 : NAN, t), fn_.type(p).shape);
        }
        return CV::value(b_.load(p, predicated(m, fn_.type(p).shape), o));
    }
    ValueId p = value_arg(need(a, 0, "pointer", e, "tl.load"), e);
    if (!fn_.type(p).is_ptr) unsupported(e, "tl.load", "the address is not a pointer");
    if (a.kw.count("boundary_check") || a.kw.count("padding_option"))
        unsupported(e, "tl.load with boundary_check", "boundary_check needs a block pointer (tl.make_block_ptr)");
    const CV *mask = a.get(1, "mask");
    const CV *other = a.get(2, "other");
    ValueId m = ir::kNoValue, o = ir::kNoValue;
    std::vector<Dim> shape = fn_.type(p).shape;
    if (mask && mask->kind != CV::None) {
        ValueId mv = b_.cast(value_arg(*mask, e), DType::I1);
        std::vector<Dim> s2;
        if (!ir::broadcast_shapes(shape, fn_.type(mv).shape, &s2))
            fail(TAD_ERR_UNSUPPORTED,
                 at(e) + ": mask " + fn_.type(mv).str() + " does not broadcast with pointer " + fn_.type(p).str());
        shape = s2;
        m = mv;
    }
    p = b_.broadcast(p, shape);
    if (m != ir::kNoValue) m = b_.broadcast(m, shape);
    if (other && other->kind != CV::None) {
        if (m == ir::kNoValue) unsupported(e, "tl.load with other= and no mask", "");
        Type elem = fn_.type(p).with_elem(fn_.type(p).elem);
        ValueId ov = b_.cast(materialize(*other, &elem, e), elem.elem);
        o = b_.broadcast(ov, shape);
    }
    return CV::value(b_.load(p, predicated(m, shape), o));
}

CV Lowerer::store(const ast::Node &e, const std::string &name, const Args &a) {
    if (need(a, 0, "pointer", e, "tl." + name).kind == CV::TensorDesc)
        unsupported(e, "tl." + name + " to a tensor descriptor", "write it with desc." + name + "(offsets, value)");
    if (name == "store" && need(a, 0, "pointer", e, "tl.store").kind == CV::BlockPtr) {
        auto [p, m] = block_access(e, a.pos[0], a, "tl.store");
        Type elem = fn_.type(p).with_elem(fn_.type(p).elem);
        ValueId v = materialize(need(a, 1, "value", e, "tl.store"), &elem, e);
        b_.store(p, b_.broadcast(b_.cast(v, elem.elem), fn_.type(p).shape), predicated(m, fn_.type(p).shape));
        return CV{};
    }
    ValueId p = value_arg(need(a, 0, "pointer", e, "tl." + name), e);
    if (!fn_.type(p).is_ptr) unsupported(e, "tl." + name, "the address is not a pointer");
    Type elem = fn_.type(p).with_elem(fn_.type(p).elem);
    ValueId v = materialize(need(a, 1, name == "store" ? "value" : "val", e, "tl." + name), &elem, e);
    const CV *mask = a.get(2, "mask");
    std::vector<Dim> shape;
    if (!ir::broadcast_shapes(fn_.type(p).shape, fn_.type(v).shape, &shape))
        fail(TAD_ERR_UNSUPPORTED,
             at(e) + ": value " + fn_.type(v).str() + " does not broadcast with pointer " + fn_.type(p).str());
    ValueId m = ir::kNoValue;
    if (mask && mask->kind != CV::None) {
        m = b_.cast(value_arg(*mask, e), DType::I1);
        std::vector<Dim> s2;
        if (!ir::broadcast_shapes(shape, fn_.type(m).shape, &s2))
            fail(TAD_ERR_UNSUPPORTED,
                 at(e) + ": mask " + fn_.type(m).str() + " does not broadcast with pointer " + fn_.type(p).str());
        shape = s2;
        m = b_.broadcast(m, shape);
    }
    m = predicated(m, shape);
    p = b_.broadcast(p, shape);
    v = b_.broadcast(b_.cast(v, elem.elem), shape);
    if (name == "store") {
        b_.store(p, v, m);
    } else {
        std::string sem = str_of(a.get(3, "sem"));
        b_.atomic_add(p, v, m, sem.empty() ? "acq_rel" : sem);
    }
    return CV{};
}

}  // namespace tad::frontend::detail
