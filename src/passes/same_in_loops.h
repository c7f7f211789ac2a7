// Whether two values computed in two loops' bodies are one value up to the loops' induction
// variables (merge_adds.h: terms of one buffer's adds in sibling loops; transpose.h: one buffer's
// adds in two loops that cover different ranges).
#pragma once

#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

class SameInLoops {
public:
    // `read_only`: whether a load reads a buffer nothing in the kernel writes (two such loads at one
    // address read one value).
    SameInLoops(const ir::Function &f, const std::vector<ir::Loop> &loops,
                std::function<bool(const ir::Op &)> read_only)
        : f_(f), loops_(loops), read_only_(std::move(read_only)) {}

    // Whether x (in loop lx, index into `loops`) and y (in loop ly) are one value: the same value
    // outside both, each loop's variable, or the same op (not a loop's carried value or result, a
    // load only of a read-only buffer) on operands that are one value.
    bool operator()(ir::ValueId x, ir::ValueId y, int lx, int ly);

private:
    const ir::Function &f_;
    const std::vector<ir::Loop> &loops_;
    std::function<bool(const ir::Op &)> read_only_;
    std::map<std::tuple<ir::ValueId, ir::ValueId, int, int>, bool> memo_;
};

}  // namespace tad::passes
