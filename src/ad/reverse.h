// Reverse mode: from a forward kernel to a backward kernel with the same grid.
//
// Each backward program replays its forward program's computation (recompute, no tape), then walks
// the forward ops in reverse, accumulating adjoints with the rules table. Pointer parameters that
// need gradients get a shadow parameter (the gradient buffer) addressed exactly like the primal:
// a forward store to an output becomes a load of the output's gradient, a forward load of an input
// becomes a store (or a relaxed atomic add, see passes::plan_gradient_writes) into its gradient.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ad/shadow.h"  // shadow_name: the emitted module's docs name shadows as the backward does
#include "ir/ir.h"
#include "passes/passes.h"

namespace tad::ad {

// How a loop whose carried float state is nonlinear (a recurrence, an online softmax) is reversed.
// Recompute: for each iteration, last to first, rerun the loop up to it (O(T²) body evaluations, no
// memory). Tape: the replay stores the state at each iteration's start into scratch memory and the
// reverse loop reads it back (O(T), trips × state floats per program; see tape.h). Auto: recompute,
// then the tape for each top-level loop whose rerun is still in the backward after cleanup (a state
// the backward does not read, or a loop a closed form replaced, costs nothing to recompute and needs
// no tape) and whose trip count the host computes from the launch's integer arguments and
// constexprs (its tape is sized without a kernel or a host synchronization, so the backward can be
// captured in a CUDA graph).
enum class LoopPolicy { Recompute, Tape, Auto };

struct GradSpec {
    std::vector<std::string> wrt;  // pointer parameters whose gradients are wanted
    std::vector<std::string> outputs;  // pointer parameters that are differentiable outputs
    LoopPolicy loops = LoopPolicy::Recompute;
    // Under Auto, set by reverse(): the forward loops (by for_begin op index) whose rerun survived.
    std::vector<int> taped = {};
    // Outputs whose earlier contents also carry gradient (a buffer read, or written, before this
    // launch's stores, or by them: an in-place update). The reverse of a plain store zeroes the
    // cotangent it read, so that the overwritten value, whose adjoint the same shadow holds next,
    // gets none of it; atomic adds pass their cotangent on unchanged.
    std::vector<std::string> overwritten = {};
    // Outputs a program may write an element of twice (passes/rewrites.h): their stores' reverse
    // zeroes the cotangent it read too, and a loop storing to one is reversed last iteration first
    // (also where it carries no state), so that the last write's reverse reads the cotangent.
    std::vector<std::string> rewritten = {};
    // Outputs written once per program only where the launch's programs map one to one onto tile
    // coordinates (the forward on them, passes/remap_programs.h, proves it; a persistent kernel's
    // tiles): the backward runs on those coordinates or refuses (plan::Precondition::mapped).
    std::vector<std::string> mapped_once = {};
    // Pointer parameters whose buffer still holds, when the backward runs, what this launch stored:
    // an output or temporary, or an input the stub updates in place and returns (saved for the
    // backward after the forward), that no later launch writes and no other parameter points at. A
    // backward may load a value the forward saved there instead of recomputing it.
    std::vector<std::string> kept = {};
};

// Where a backward parameter comes from.
struct ParamOrigin {
    // Final: the buffer of forward parameter `primal` as the launch left it (ir::Param::final_of).
    // Tape: the float32 scratch buffer; TapeStride: its elements per program; TapeNeed: the sizing
    // kernel's int64 output, one element per program. Hits: the int32 word per program a scatter
    // fold leaves for its scatter kernel (passes/fold_scatter.h). Stash: the buffer of a value the
    // rest of a transposed backward stores for its transposed kernels (passes/stash.h).
    enum Kind { Primal, Shadow, Final, Tape, TapeStride, TapeNeed, Hits, Stash } kind = Primal;
    std::string primal;  // the forward parameter (itself, the one it shadows, or whose final buffer it is)
};

// The kernel the launcher runs first, when a loop is reversed from a tape, to size the tape.
struct TapeSizing {
    ir::Function fn;
    std::vector<ParamOrigin> origins;  // per fn.params
};

struct Backward {
    ir::Function fn;
    std::vector<ParamOrigin> origins;  // per fn.params (constexprs are the forward's)
    std::map<std::string, passes::GradWrite> writes;  // per wrt parameter that the kernel reads
    std::optional<TapeSizing> tape;  // set when some loop is reversed from a tape
};

// The passes a derived kernel goes through before it is checked and returned (passes::cleanup by
// default; the pipeline passes its own, which logs each stage).
using Cleanup = std::function<ir::Function(const ir::Function &)>;

// `plan` chooses store vs atomic per wrt parameter (passes::plan_gradient_writes on cse(fwd)).
Backward reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
                 const std::string &name, const Cleanup &cleanup = passes::cleanup);

}  // namespace tad::ad
