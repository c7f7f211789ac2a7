#include "retrieve/features.h"

namespace tad::retrieve {

const char *group_name(Group g) {
    static const char *const names[kGroups] = {"ir", "ast", "ident", "count"};
    return names[static_cast<int>(g)];
}

const std::vector<std::string> &count_names() {
    static const std::vector<std::string> names = {
        "kernels", "helpers",    "launches", "grad_inputs", "constexprs",   "loops",      "loop_depth",  "static_loops",
        "ifs",     "reductions", "dots",     "atomics",     "scans",        "block_ptrs", "descriptors", "loads",
        "stores",  "wheres",     "math",     "rand",        "program_axes", "tiles_2d"};
    return names;
}

double Features::count(const std::string &name) const {
    const auto &g = group(Group::Count);
    auto it = g.find("count:" + name);
    return it == g.end() ? 0.0 : it->second;
}

Features extract(const frontend::KernelFile &kf) {
    Features f;
    add_ast_features(kf, f);
    add_ident_features(kf.file, f);
    add_ir_features(kf, f);
    return f;
}

}  // namespace tad::retrieve
