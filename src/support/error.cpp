#include "support/error.h"

namespace tad {

std::string where(const std::string &path, int line, int col1) {
    return path + ":" + std::to_string(line) + ":" + std::to_string(col1);
}

void fail(int status, const std::string &message) { throw Error(status, message); }

}  // namespace tad
