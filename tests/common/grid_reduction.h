// TAD_GRID_REDUCTION for one scope: tests that show a mode ask for it, whatever the default.
#pragma once

#include <cstdlib>

namespace tad::testing {

class GridReduction {
public:
    explicit GridReduction(const char *mode) { setenv("TAD_GRID_REDUCTION", mode, 1); }
    ~GridReduction() { unsetenv("TAD_GRID_REDUCTION"); }
    GridReduction(const GridReduction &) = delete;
    GridReduction &operator=(const GridReduction &) = delete;
};

}  // namespace tad::testing
