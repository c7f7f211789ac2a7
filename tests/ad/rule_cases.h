// One small kernel per derivative rule: loads its inputs from pointer parameters X0, X1, ...,
// applies the op under test and stores the result to Y. Shared by the golden and numeric tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::testing {

struct RuleCase {
    std::string name;
    std::vector<std::vector<ir::Dim>> inputs;  // shapes of X0, X1, ...
    double lo, hi;  // input values are drawn from [lo, hi)
    std::function<ir::ValueId(ir::Builder &, const std::vector<ir::ValueId> &)> body;
};

// Builds the kernel of `c`: every input tile is loaded whole (row-major contiguous), the result
// is stored whole to Y.
ir::Function rule_kernel(const RuleCase &c);

const std::vector<RuleCase> &rule_cases();
const RuleCase &rule_case(const std::string &name);  // by name; throws std::out_of_range if none

}  // namespace tad::testing
