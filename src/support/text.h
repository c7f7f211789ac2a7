// Small text helpers shared by the passes' reports and the emitters.
#pragma once

#include <string>
#include <vector>

namespace tad {

// The items with `sep` between them: join({"a", "b"}) == "a, b".
std::string join(const std::vector<std::string> &items, const std::string &sep = ", ");

}  // namespace tad
