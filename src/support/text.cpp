#include "support/text.h"

namespace tad {

std::string join(const std::vector<std::string> &items, const std::string &sep) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
    return s;
}

}  // namespace tad
