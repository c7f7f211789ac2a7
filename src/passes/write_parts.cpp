#include "passes/write_parts.h"

#include <algorithm>
#include <map>
#include <string>

#include "passes/passes.h"

namespace tad::passes {

std::vector<int> write_parts(const ir::Function &f) {
    const long dots =
        std::count_if(f.ops.begin(), f.ops.end(), [](const ir::Op &op) { return op.kind == ir::OpKind::Dot; });
    if (dots < 2) return {};
    const MemoryParams m = memory_params(f);
    std::map<std::string, int> part;  // written parameter -> its part
    std::vector<int> parts(f.ops.size(), 0);
    for (const Access &a : m.accesses) {
        if (a.kind == ir::OpKind::Load) continue;
        if (m.loaded.count(a.param)) return {};
        auto it = part.emplace(a.param, static_cast<int>(part.size()) + 1).first;
        parts[static_cast<size_t>(a.op)] = it->second;
    }
    return part.size() < 2 ? std::vector<int>{} : parts;
}

int part_count(const std::vector<int> &parts) {
    return parts.empty() ? 0 : *std::max_element(parts.begin(), parts.end());
}

}  // namespace tad::passes
