#include "retrieve/triton_api.h"

#include <map>
#include <set>

namespace tad::retrieve {

std::string triton_function(const std::string &callee) {
    for (const char *prefix :
         {"tl.", "triton.language.", "tl.math.", "triton.language.math.", "libdevice.", "tl.extra.cuda.libdevice.",
          "triton.language.extra.cuda.libdevice.", "tl.extra.libdevice.", "triton.language.extra.libdevice."}) {
        const std::string p = prefix;
        if (callee.size() > p.size() && callee.compare(0, p.size(), p) == 0 &&
            callee.find('.', p.size()) == std::string::npos)
            return callee.substr(p.size());
    }
    return "";
}

std::string call_category(const std::string &fn) {
    static const std::map<std::string, std::set<std::string>> categories = {
        {"reductions",
         {"sum", "max", "min", "argmax", "argmin", "reduce", "softmax", "xor_sum", ".sum", ".max", ".min"}},
        {"dots", {"dot", "dot_scaled"}},
        {"scans", {"cumsum", "cumprod", "associative_scan", ".cumsum"}},
        {"block_ptrs", {"make_block_ptr", "advance"}},
        {"descriptors",
         {"make_tensor_descriptor", "load_tensor_descriptor", "store_tensor_descriptor", ".load", ".store"}},
        {"loads", {"load"}},
        {"stores", {"store"}},
        {"wheres", {"where"}},
        {"math",
         {"exp",   "exp2",  "log", "log2", "sqrt", "rsqrt", "sigmoid", "erf",  "tanh", "sin",    "cos",    "pow",
          "log1p", "expm1", "tan", "atan", "sinh", "cosh",  "asin",    "acos", "fdiv", "div_rn", "sqrt_rn"}},
        {"rand", {"rand", "randn", "randint", "randint4x"}},
    };
    if (fn.rfind("atomic_", 0) == 0) return "atomics";
    for (const auto &[category, names] : categories)
        if (names.count(fn)) return category;
    return "";
}

bool is_constexpr_param(const ast::Node &arg) {
    ast::NodePtr a = arg.node("annotation");
    if (!a) return false;
    std::string text = ast::dotted(a.get());
    if (a->is("Constant") && std::holds_alternative<std::string>(*a->find("value")))
        text = std::get<std::string>(*a->find("value"));
    return text.size() >= 9 && text.compare(text.size() - 9, 9, "constexpr") == 0;
}

}  // namespace tad::retrieve
