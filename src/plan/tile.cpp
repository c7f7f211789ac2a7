#include <algorithm>

#include "plan/plan.h"

namespace tad::plan {

std::vector<std::string> largest_tile(const ir::Function &fn) {
    const ir::Type *best = nullptr;
    for (const ir::ValueInfo &v : fn.values)
        if (!best || v.type.numel() > best->numel()) best = &v.type;
    std::vector<std::string> dims;
    if (!best) return dims;
    for (const ir::Dim &d : best->shape) {
        const bool named = std::any_of(fn.constexprs.begin(), fn.constexprs.end(),
                                       [&](const ir::Constexpr &c) { return c.name == d.expr; });
        dims.push_back(named ? d.expr : std::to_string(d.value));
    }
    return dims;
}

}  // namespace tad::plan
