// TAD_GRID_REDUCTION for one scope: the re-grid is off by default, and its tests ask for a mode.
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
