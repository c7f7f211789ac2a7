// Pieces of the generated module shared by module.cpp, launcher.cpp and jvp_module.cpp.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "emit/emit.h"
#include "support/text.h"

namespace tad::emit::detail {

using ::tad::join;
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

// `def <stub>_backward(launches, temps, <stub params>, outs, out_layouts, grads)`: follows the
// backward plan and returns one gradient (or None) per stub parameter.
struct Launcher {
    std::string name;
    std::string source;
    // Per launch whose snapshots only some of its backward's branches read: the Python function
    // (defined in `tests`) that tells, from the recorded launches, whether the branch taken reads them.
    std::map<size_t, std::string> snapshot_tests;
    std::string tests;
    std::set<std::string> inputs;  // stub parameters it reads (the Function saves them)
    std::set<int> outputs;  // outputs whose values it reads
    std::set<int> temps;  // temporaries it reads or takes the layout of
};

Launcher emit_launcher(const frontend::KernelFile &kf, const plan::Plan &p);

// The name the module calls the stub by: its own, or `_stub_<name>` for a stub named like an entry
// point of the module (forward, jvp) or like one of its own parameters (which the Function's and the
// launchers' parameters of that name would shadow), whose copy is renamed so.
std::string stub_callable(const frontend::StubInfo &stub);

// The module's header (its imports, `from __future__` first) and the forward file's copy; `p`
// names the launched kernels in the header.
std::string module_head(const frontend::KernelFile &kf, const plan::Plan &p);

// The backward kernels of plan `p`, each wrapped in _fit_shared_memory.
std::string backward_kernels(const frontend::KernelFile &kf, const plan::Plan &p);

// The Python dict `{m: ((k, "p"), ...), ...}` of a plan's snapshots: what the recorder copies
// before launch m.
// `tests`: per launch, the function that tells whether its snapshots are read (Launcher); its entries
// take it as a third element.
std::string snapshot_table(const std::vector<plan::Snapshot> &snapshots,
                           const std::map<size_t, std::string> &tests = {});

// A plan step as Python: its comment and `a = launches[k].args` line, then per case the `if` /
// `elif` on the case's key (none for a kernel specialized on nothing) and `body(case, indent)`
// printing the case; then an `else` that raises RuntimeError(f"<missing(shown, names)>") for
// constexpr values no case has (`shown`: each key name with its value, `names`: the key names).
// `otherwise` (not empty): the `else` body instead, for values no case serves.
void write_step(std::ostream &os, const plan::Step &s, const std::string &launches, const std::string &args,
                const std::function<void(const plan::Case &, const std::string &)> &body,
                const std::function<std::string(const std::string &, const std::string &)> &missing,
                const std::string &otherwise = "");

// The forward-mode section (see emit_module).
std::string emit_jvp_section(const frontend::KernelFile &kf, const plan::Plan *tangent, const std::string &why);

}  // namespace tad::emit::detail
