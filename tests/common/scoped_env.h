// An environment variable set for one scope (TAD_GRID_REDUCTION, TAD_TRANSPOSE): tests that show a
// mode ask for it, whatever the default; the previous value comes back after.
#pragma once

#include <cstdlib>
#include <string>

namespace tad::testing {

class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : name_(name) {
        const char *old = std::getenv(name);
        had_ = old != nullptr;
        if (had_) old_ = old;
        setenv(name, value, 1);
    }
    ~ScopedEnv() { had_ ? setenv(name_.c_str(), old_.c_str(), 1) : unsetenv(name_.c_str()); }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
    std::string name_, old_;
    bool had_ = false;
};

}  // namespace tad::testing
