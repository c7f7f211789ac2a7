// A launch plan (src/plan) executed on the tile-IR interpreter: the CPU oracle's executor. It
// follows the plan exactly as the emitted launcher does, so that the oracle checks what the
// generated module runs; only the buffers' initial contents (Alloc) are the caller's to choose.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "frontend/lower.h"
#include "interp/interp.h"
#include "plan/plan.h"

namespace tad::verify {

// A forward launch as recorded: what the plan's arguments are bound from.
struct Recorded {
    std::vector<frontend::ArgBinding> bindings;  // its arguments
    std::map<std::string, interp::ArgValue> args;  // by parameter name, buffers of the memory
    std::array<int64_t, 3> grid{1, 1, 1};
    std::vector<ir::Constexpr> constexprs;  // the forward kernel's, with their values
};

// A plan symbol's value in a recorded launch (guards, trip counts, coverage): an integer scalar, an
// integer constexpr, or `num_programs(k)`; false when the launch records no such integer.
bool symbol_value(const Recorded &r, const std::string &name, int64_t *out);

// (launch, pointer parameter) -> the buffer holding that tensor as the launch saw it.
using SavedCopies = std::map<std::pair<size_t, std::string>, int>;

// Runs the forward launches in order on `mem`, taking the plans' snapshots (a copy of launch k's
// tensor before launch m overwrites it) on the way.
SavedCopies run_forward(const std::vector<ir::Function> &kernels, const std::vector<Recorded> &launches,
                        const std::vector<plan::Snapshot> &snapshots, interp::Memory &mem);

class PlanRunner {
public:
    // Returns the buffer a shadow starts as (-1 for Init::Absent).
    using Allocate = std::function<int(const plan::Alloc &)>;

    PlanRunner(const ast::File &module, const std::vector<Recorded> &launches, const SavedCopies &saved,
               interp::Memory &mem, Allocate allocate)
        : module_(module), launches_(launches), saved_(saved), mem_(mem), allocate_(std::move(allocate)) {}

    void run(const plan::Plan &p);
    const std::map<plan::TensorRef, int> &shadows() const { return shadows_; }
    // Whether a re-gridded run's partial, or a Covered shadow, with this cover needs no zero fill on
    // this launch (as the run sees it: a remapped branch's box; the tensor's layout is the caller's):
    // such buffers start as `poison`, which an element the runs leave unwritten carries into the
    // gradient. Unset: every partial starts zeroed, a shadow as the caller allocated it.
    using Covered = std::function<bool(const passes::Coverage &, const Recorded &, const plan::TensorRef &)>;
    void poison_covered(Covered covered, double poison) {
        covered_ = std::move(covered);
        poison_ = poison;
    }

private:
    const ast::File &module_;
    std::vector<Recorded> launches_;  // a remapped branch's launch runs on its box (plan.h)
    const SavedCopies &saved_;
    interp::Memory &mem_;
    Allocate allocate_;
    Covered covered_;
    double poison_ = 0;
    std::map<plan::TensorRef, int> shadows_;
    std::map<plan::TensorRef, int> partials_;  // the running re-gridded kernel's partial buffers
    int hits_ = -1;  // the running branch's Arg::Hits buffer
    std::map<std::string, int> stashes_;  // the running branch's stashes (Arg::Stash), by parameter
    // Poisoned stashes of branch b on the launch (plan.h: Branch::stashes).
    void allocate_stashes(const plan::Branch &b, const Recorded &r);

    struct Call;  // one kernel's bindings and arguments while they are assembled
    void alloc(const plan::Alloc &a);
    // The branch of step `s` that applies; `box`: the grid a remapped one runs on.
    const plan::Branch &choose(const plan::Step &s, std::array<int64_t, 3> *box) const;
    int64_t size_tape(const plan::Plan &p, size_t launch, const plan::Run &sizing);
    // Runs one kernel on the launch's grid; `need`: the TapeNeed buffer of a sizing kernel.
    // `index`: the run's index in `branch_` (-1: the tape sizing kernel).
    void launch(const plan::Plan &p, size_t launch, const plan::Run &r, int64_t tape_stride, int need, int index = -1);
    // Before run `index`: its Covered shadows (Alloc::run) poisoned where its cover holds on the call.
    void poison_run_covered(int index, const std::vector<frontend::ArgBinding> &bind,
                            const std::array<int64_t, 3> &grid);
    const plan::Branch *branch_ = nullptr;  // the running branch
    // A re-gridded run (plan.h): its extra arguments, its partial buffers before it, their sums after.
    void bind_regrid(const plan::Arg &a, const ir::Param &param, const ir::Function &fn, int64_t grid, Call &c);
    void allocate_partials(const plan::Run &run, size_t launch, int64_t programs);
    void sum_partials(const plan::Run &run);
};

}  // namespace tad::verify
