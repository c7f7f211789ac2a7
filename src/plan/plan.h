// The launch plan: how a generated backward, or tangent computation, runs, as data.
//
// A stub's call launches forward kernels in order, each recorded with its grid, scalar arguments,
// options and tensors. A plan is the ordered list of what runs afterwards over the tensors of that
// call: shadow buffers to allocate (one per tensor, shared by every launch that touches it), then,
// per forward launch, the kernel of the launch's specialization and variant, run on the recorded
// grid with each parameter bound to where it comes from; then what is returned. It also lists the
// copies the forward must save before a launch overwrites what a derivative reads.
//
// Every executor consumes the same plan: the Python emitter prints it as the generated launcher
// (src/emit), the CPU oracle runs it on the interpreter (src/verify), and a CUDA driver-API executor
// will launch it. Nothing about how a backward runs is decided outside the plan builders below.
//
// Semantics of running a plan on recorded launches:
// - `prologue` allocations happen first, in order; a shadow is then reached by its tensor.
// - `steps` run in order. A step belongs to forward launch `launch`: its cases are tried in order,
//   the first whose key equals the launch's constexpr values is taken (none matching is an error:
//   the module was not generated for these values); within it, the first branch whose guards hold
//   (each named pair of recorded scalars equal) is taken, a remapped branch only where the
//   launch's programs map one to one onto a box of its tile coordinates (Branch::remap), which
//   then stands for the launch's grid. A branch sizes its tape (when it has a
//   sizing kernel), allocates its shadows, then runs its kernels in order on the launch's grid and
//   options (after allocating its stashes, Branch::stashes).
//   A transposed run (`transposed_axis` >= 0) replaces the grid's size along that axis by `trips`,
//   evaluated on the launch's recorded scalars and constexprs (none: the run is skipped); a widened
//   one passes constexpr `widened`, and evaluates `trips` with it, as `width` times its value.
//   A re-gridded run (`regrid_axes` not empty) replaces the grid's sizes along those axes by a
//   number of programs P the executor chooses along the first (1 <= P <= G, G the product of the
//   replaced sizes; G + P must stay below 2**31: the kernel counts in int32) and one along the
//   others; its `partials` are float32 (float64 for
//   float64) zero buffers of P rows, each row as long as the tensor's shadow's storage, allocated
//   before the run (uninitialised where the partial's cover holds and no grid size is 0: every
//   program writes its whole row; two partials of one tensor are refused when the plan is built); after it, each partial's rows are summed in order (row 0 first: the same result
//   every run) and added into the shadow (a Partials shadow becomes that sum).
// - `results` say what the caller gets back: the backward returns, per stub input, the gradient
//   in the input's dtype (or nothing); forward mode returns, per output, its tangent.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "passes/passes.h"
#include "passes/stash.h"
#include "plan/derivation.h"

namespace tad::plan {

enum class Mode {
    Backward,  // reverse mode: gradients of the inputs from the gradients of the outputs
    Tangent,  // forward mode: tangents of the outputs from tangents of the grad inputs
};

// A kernel a plan runs.
struct Kernel {
    enum Role { Backward, TapeSizing, Tangent } role = Backward;
    ir::Function fn;
    std::string forward;  // the forward kernel it derives from
    Key key;  // the specialization it serves
    // Backward: how each gradient buffer is written (parameter -> plain stores or atomics).
    std::map<std::string, passes::GradWrite> writes;
    std::string sized;  // TapeSizing: the backward kernel whose tape it sizes
    std::optional<Regrid> regrid;  // Backward: re-gridded by passes::regrid
    int transposed_axis = -1;  // Backward: written by passes::transpose_loops, summing over this axis
    int split_axis = -1;  // Backward: one of passes::split_loops' kernels, its loops shared along this axis
};

// Where one kernel argument comes from when the plan runs (one per kernel parameter, in order;
// constexprs always come from the recorded launch's value of the same name).
struct Arg {
    enum Kind {
        Scalar,  // the recorded launch's scalar argument `name`
        Tensor,  // the tensor bound to the recorded launch's pointer parameter `name`, as it is now
        Saved,  // that tensor as the launch saw it: the copy taken before launch `before`
        Shadow,  // the shadow buffer of `tensor`
        Tape,  // the step's scratch tape: float32, `TapeStride` elements per program
        TapeStride,  // the tape's elements per program: the largest `TapeNeed` of the sizing kernel
        TapeNeed,  // the sizing kernel's output: int64, one element per program
        GridSize,  // a re-gridded or transposed run: the recorded grid's size along `axis`
        Partial,  // a re-gridded run: the partial buffer of `tensor`'s shadow
        PartialStride,  // a re-gridded run: the elements of one row of that partial buffer
        // The branch's int32 word per program of the recorded grid (passes/fold_scatter.h),
        // uninitialised: the kernel that folds a scatter writes every program's, the scatter kernel
        // run after it reads them.
        Hits,
        // The branch's stash `name` (passes/stash.h), uninitialised: the rest stores every program's
        // tile, the transposed kernels run after it load them.
        Stash,
    } kind = Scalar;
    std::string name;  // Scalar, Tensor, Saved: the recorded launch's argument; Stash: the stash
    TensorRef tensor;  // Tensor, Saved, Shadow, Partial, PartialStride
    size_t before = 0;  // Saved
    int axis = -1;  // GridSize
};

// How a shadow buffer starts. Buffers are laid out as their tensor (same shape and strides) unless
// said otherwise.
enum class Init {
    Absent,  // no buffer yet: a later step's branch allocates it
    // Backward.
    Cotangent,  // a float32 (float64 for float64) copy of output `index`'s incoming gradient (zeros
    // when there is none): later launches' backwards add to it
    Incoming,  // output `index`'s incoming gradient, in the output's dtype and strides (zeros
    // when there is none): read by one launch
    Accumulator,  // zeros, float32 (float64 for float64): atomic adds
    Zeros,  // zeros in the tensor's dtype: plain stores that may cover nothing
    // The tensor's dtype, uninitialised where `cover` holds on launch `launch` (plain stores reach
    // every element: covers() below), else zeros. With `run` >= 0 the cover is that run's instead
    // (see Alloc::run): uninitialised until the run, then zero-filled just before it unless it holds.
    Covered,
    // float32 (float64 for float64): the sum of a re-gridded run's partial rows, when nothing else
    // in the branch writes the shadow: no buffer until that run, then the sum laid out as the tensor
    Partials,
    // Forward mode.
    Tangent,  // grad input `index`'s tangent from the caller (position in GRAD_INPUTS; -1: a
    // zero tangent), in the input's dtype; a private copy when `written`
    ZeroTangent,  // zeros in the tensor's dtype
};

struct Alloc {
    TensorRef tensor;
    Init init = Init::Absent;
    int index = -1;  // Cotangent, Incoming: the output; Tangent: the grad input (see Init)
    std::optional<passes::Coverage> cover;  // Covered
    // Covered: -1, `cover` names the recorded launch's values and grid; >= 0, the branch's run of
    // that index, the first to touch the buffer: its kernel's parameters and constexprs as the run
    // passes them (a widened or retiled block size included) and its grid (a transposed kernel's).
    int run = -1;
    bool wide = false;  // Covered, Zeros: float32 (float64 for float64) instead of the tensor's dtype
    bool written = false;  // Tangent
    // The recorded launch parameter the tensor is reached through (temporaries in forward mode).
    size_t launch = 0;
    std::string param;
};

// One kernel launch on the step's recorded grid and options.
struct Run {
    int kernel = -1;  // index into Plan::kernels
    std::vector<Arg> args;
    std::vector<int> regrid_axes;  // not empty: the grid axes whose sizes the executor replaces (see above)
    std::vector<TensorRef> partials;  // re-gridded: partial buffers, summed into their shadows after the run
    // Per partial, what the run writes of each row when that can be every element of the tensor:
    // where covers() holds on the tensor's shape and strides, the partial needs no zero fill.
    std::vector<std::optional<passes::Coverage>> partial_covers;
    int transposed_axis = -1;  // >= 0: the grid axis whose size is `trips` (see above)
    passes::TripCount trips;
    // The kernel takes constexpr `widening.name` widened from the recorded value by the factor
    // passes::widen_factor computes at the launch's block sizes (and `trips` is evaluated with that
    // value): a transposed kernel proved independent of it (passes/widen.h).
    passes::Widening widening;
    // Block sizes set where they divide the work exactly (passes/widen.h: free_tiles): constexpr
    // `name` becomes `target` when value · count = target · count', count being the run's grid size
    // along `axis`, or (axis -1) the G its GridSize argument receives, which becomes count'. The
    // Python module applies the targets to launches of 16-bit tensors only (module_runtime.py's
    // _default_targets); the CPU oracle to every launch, so that its tier runs the retiled kernels,
    // and it runs a tile without a target at twice or half its value.
    std::vector<passes::FreeTile> tiles;
};

// A buffer a branch allocates for its stash `param` (passes/stash.h): the product of `dims` (the
// launch's constexprs, literals) elements per program of the grid, of `like`'s element type where
// it has one, else float32 (float64 when the first output is float64). Uninitialised: the rest
// stores every element before the kernels that load them run.
struct StashBuffer {
    std::string param;
    std::vector<std::string> dims;
    std::optional<TensorRef> like;
};

struct Branch {
    Guards guards;  // empty: always
    // The branch's kernels derive from the forward on its tile coordinates: it applies only where
    // remap->box() holds for the launch, and then runs on that box as the launch's grid (every
    // grid size below, num_programs in its guards included, is the box's).
    std::optional<passes::ProgramMap> remap;
    std::optional<Run> sizing;  // the tape sizing kernel, run first
    std::vector<Alloc> allocs;  // shadows this branch allocates, in parameter order
    std::vector<StashBuffer> stashes;  // allocated before its runs
    std::vector<Run> runs;
};

// Whether some run of the branch takes an Arg::Hits buffer (the executor then allocates one).
bool takes_hits(const Branch &b);

struct Case {
    Key key;
    std::vector<Branch> branches;
    std::vector<Precondition> preconditions = {};  // the specialization's: checked before the branches
};

struct Step {
    size_t launch = 0;  // the forward launch
    std::string kernel;  // its forward kernel
    std::vector<Case> cases;
};

struct Result {
    bool present = false;
    TensorRef tensor;  // the tensor whose shadow is returned
};

// Before forward launch `before`, copy the tensor of launch `launch`'s pointer parameter `param`
// (a later launch when `launch` > `before` is impossible: copies are of launches up to `before`).
struct Snapshot {
    size_t before = 0, launch = 0;
    std::string param;
    bool operator<(const Snapshot &o) const {
        return std::tie(before, launch, param) < std::tie(o.before, o.launch, o.param);
    }
};

struct Plan {
    Mode mode = Mode::Backward;
    size_t num_inputs = 0, num_outputs = 0;
    std::vector<int> grad_inputs;  // stub parameter indices, in GRAD_INPUTS order
    std::vector<std::string> launched;  // the forward kernels, in launch order
    std::vector<std::pair<size_t, std::string>> temps;  // as Derivation::temps
    std::map<int, int> aliases;  // as Derivation::aliases
    std::vector<Kernel> kernels;
    std::vector<Alloc> prologue;
    std::vector<Step> steps;
    std::vector<Result> results;  // Backward: per stub input; Tangent: per output
    std::vector<Snapshot> snapshots;  // sorted
};

// The backward: shared shadows first, then the launches last to first.
Plan backward(const Derivation &d);

// Forward mode: every tangent buffer first, then the launches in the forward's order. Only for a
// derivation whose every specialization has a tangent kernel (tangent_unsupported() is "").
Plan tangent(const Derivation &d);

// Why `d` has no forward mode ("" when it has one).
std::string tangent_unsupported(const Derivation &d);

// Deterministic text form (tests).
std::string print(const Plan &p);

// The dims of `fn`'s largest tile (by its traced sizes): a constexpr's name where one names the
// dim, else the number. A re-gridded run's program count depends on its element count at the
// launch (module_runtime.py's _regrid_programs); empty for a kernel of scalars.
std::vector<std::string> largest_tile(const ir::Function &fn);

// The value of a plan symbol (guards, trip counts, coverage, tiles) in a launch on `grid`: a number
// ("4"), `num_programs(k)` (the grid's size along k), `a//b` (both symbols, truncated, b > 0), or
// a name, whose integer value `named` gives (a recorded scalar or constexpr). False where it knows
// no value: every executor reads symbols the same way.
bool launch_symbol(const std::string &name, const std::array<int64_t, 3> &grid,
                   const std::function<bool(const std::string &, int64_t *)> &named, int64_t *out);

// Whether plain stores with coverage `c` reach every element of a tensor of this shape and these
// strides (in elements), with the symbols' values from `value`: the guards hold and the digits'
// (coefficient, size) pairs above size 1 are the tensor's (stride, size) pairs above size 1, once
// runs of digits that make one larger digit (coefficient c·n after (c, n)) are merged. False
// where `value` does not know a symbol. The emitted launcher's _covered_buffer checks the same.
bool covers(const passes::Coverage &c, const std::function<bool(const std::string &, int64_t *)> &value,
            const std::vector<int64_t> &shape, const std::vector<int64_t> &stride);

}  // namespace tad::plan
