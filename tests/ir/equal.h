// Structural equality of two functions, for the parse round trips: "" when equal, else the first
// difference. Op locations and the source path are not compared (the text form has neither).
#pragma once

#include <cmath>
#include <string>

#include "ir/ir.h"

namespace tad::testing {

inline std::string dims_differ(const ir::Type &a, const ir::Type &b) {
    if (a.elem != b.elem || a.is_ptr != b.is_ptr || a.shape.size() != b.shape.size()) return "type";
    for (size_t i = 0; i < a.shape.size(); ++i)
        if (a.shape[i].value != b.shape[i].value || a.shape[i].expr != b.shape[i].expr)
            return "dim " + std::to_string(i);
    return "";
}

inline bool same_double(double a, double b) { return a == b ? std::signbit(a) == std::signbit(b) : a != a && b != b; }

inline std::string op_differs(const ir::Op &a, const ir::Op &b) {
    if (a.kind != b.kind) return "kind";
    if (a.operands != b.operands) return "operands";
    if (a.result != b.result) return "result";
    if (a.axis != b.axis || a.keep_dims != b.keep_dims) return "axis / keep_dims";
    if (a.has_mask != b.has_mask || a.has_other != b.has_other) return "mask / other";
    if (!same_double(a.fval, b.fval) || a.ival != b.ival || a.ival2 != b.ival2) return "fval / ival / ival2";
    return a.name != b.name ? "name" : "";
}

inline std::string function_differs(const ir::Function &a, const ir::Function &b) {
    if (a.name != b.name) return "name";
    if (a.params.size() != b.params.size()) return "param count";
    for (size_t i = 0; i < a.params.size(); ++i)
        if (a.params[i].name != b.params[i].name || a.params[i].kind != b.params[i].kind ||
            a.params[i].value != b.params[i].value)
            return "param " + std::to_string(i);
    if (a.constexprs.size() != b.constexprs.size()) return "constexpr count";
    for (size_t i = 0; i < a.constexprs.size(); ++i)
        if (a.constexprs[i].name != b.constexprs[i].name || a.constexprs[i].literal != b.constexprs[i].literal)
            return "constexpr " + std::to_string(i);
    if (a.specialized != b.specialized) return "specialized";
    if (a.values.size() != b.values.size()) return "value count";
    for (size_t v = 0; v < a.values.size(); ++v) {
        const std::string d = dims_differ(a.values[v].type, b.values[v].type);
        if (!d.empty()) return "value %" + std::to_string(v) + ": " + d;
        if (a.values[v].def_op != b.values[v].def_op || a.values[v].name != b.values[v].name)
            return "value %" + std::to_string(v) + ": definition or name";
    }
    if (a.ops.size() != b.ops.size()) return "op count";
    for (size_t i = 0; i < a.ops.size(); ++i) {
        const std::string d = op_differs(a.ops[i], b.ops[i]);
        if (!d.empty()) return "op " + std::to_string(i) + " (" + ir::op_name(a.ops[i].kind) + "): " + d;
    }
    return "";
}

}  // namespace tad::testing
