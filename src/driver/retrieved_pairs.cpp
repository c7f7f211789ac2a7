#include "driver/optimize_options.h"

namespace tad::driver {

PairProvider retrieved_pairs() {
    return [](const std::string &, const std::string &, int) { return std::vector<RetrievedPair>{}; };
}

}  // namespace tad::driver
