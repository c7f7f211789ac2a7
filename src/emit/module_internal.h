// Pieces of the generated module shared by module.cpp and launcher.cpp.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "emit/emit.h"

namespace tad::emit::detail {

std::string join(const std::vector<std::string> &items);
std::string py_tuple(const std::vector<std::string> &items, bool quote);

// Names for the launcher's and the Function's locals that no stub parameter has (a stub may well
// take `a` or `out`).
class Names {
public:
    explicit Names(const std::vector<std::string> &params) : taken_(params.begin(), params.end()) {}
    std::string fresh(std::string n) {
        while (taken_.count(n)) n += "_";
        taken_.insert(n);
        return n;
    }

private:
    std::set<std::string> taken_;
};

// `def <stub>_backward(launches, temps, <stub params>, outs, out_layouts, grads)`: runs the backward
// of each launch, last to first, and returns one gradient (or None) per stub parameter.
struct Launcher {
    std::string name;
    std::string source;
    std::set<std::string> inputs;  // stub parameters it reads (the Function saves them)
    std::set<int> outputs;  // outputs whose values it reads
    std::set<int> temps;  // temporaries it reads or takes the layout of
    // (m, k, p): launch k's tensor argument p, saved before launch m overwrites it, is read as
    // `launches[k].pre["p"]`.
    std::set<std::tuple<size_t, size_t, std::string>> snapshots;
};

Launcher emit_launcher(const ModuleInput &in);

// The Python dict `{m: ((k, "p"), ...), ...}` of Launcher::snapshots: what the recorder copies
// before launch m.
std::string snapshot_table(const std::set<std::tuple<size_t, size_t, std::string>> &snapshots);

}  // namespace tad::emit::detail
