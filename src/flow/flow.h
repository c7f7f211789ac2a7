// The dataflow of a stub's launches: from what each launch reads and writes, where gradients flow.
//
// Launches are connected only through the tensors of the call (stub inputs, returned outputs and
// temporaries the stub passes between launches). Dependence is per launch: any tensor a launch
// writes depends on any it reads. The analysis answers three questions, each in its own function:
// 1. gradient_flow: which launches gradients flow through, and for each, which of its pointer
//    parameters need gradients (active reads) and carry cotangents (active, useful writes).
// 2. shared_shadows: which tensors' shadows are one buffer several launches add to (or zero, where a
//    launch overwrites contents that carry gradient), so that every launch uses atomics on them but
//    the first to write one where it writes before any reads (first_writers).
// 3. saved_copies: which tensor contents a derivative reads after a later launch overwrote them, so
//    that the forward saves a copy first.
// Programs that cannot be differentiated correctly this way are refused with TAD_ERR_UNSUPPORTED.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "passes/passes.h"
#include "plan/derivation.h"

namespace tad::flow {

using plan::TensorRef;

// One launch as the analysis sees it.
struct Launch {
    std::string kernel;
    const ir::Function *forward = nullptr;  // after CSE; its accesses are `mem`
    std::map<std::string, TensorRef> tensors;  // pointer parameter -> tensor of the call
    passes::MemoryParams mem;
};

// The stub's call as traced.
struct Call {
    std::string path, stub;  // for diagnostics
    std::vector<std::string> params;  // stub parameters, in order
    std::vector<std::string> grad_inputs;  // stub parameters that need gradients
    std::vector<int> output_inputs;  // per returned output: the stub input it is, or -1
    // Where the stub's torch code computed, from values that depend on the grad inputs, a returned
    // output (output index -> the autograd op) or a kernel argument (launch -> parameter -> op).
    std::map<int, std::string> torch_outputs;
    std::vector<std::map<std::string, std::string>> torch_args;
    // Whether the module saves the inputs the stub updates in place for the backward, as they are
    // after the forward (a launch node's module does not: its trace says "unsaved_inputs").
    bool saves_in_place = true;
};

struct Flow {
    std::vector<ad::GradSpec> specs;  // per launch; no wrt when no gradient flows through it
    std::set<TensorRef> active;  // tensors whose final contents depend on a grad input
    std::set<TensorRef> shared;
    // Shared shadows whose first access in the backward is a write by one launch (first_writers()):
    // tensor -> that launch.
    std::map<TensorRef, size_t> first_writer;
    std::map<int, int> aliases;  // output j -> the stub input it is (updated in place)
    bool saves_in_place = true;  // Call::saves_in_place
    // Per launch: pointer parameter -> the first launch, this one or a later one, that writes its tensor.
    std::vector<std::map<std::string, size_t>> saved_before;
};

// All three answers (the specs' loop policy is left at its default), after check_torch_code.
Flow analyze(const Call &call, const std::vector<Launch> &launches);

// Refuses a call whose torch code computes an output or a kernel argument from values that depend
// on the grad inputs: the single Function that analyze() serves differentiates the launches only,
// so that gradient would be lost. The driver gives such a stub a node per launch instead
// (driver/launch_nodes.h), whose one-launch traces carry no torch marks; this keeps any other path
// from deriving the single Function for it.
void check_torch_code(const Call &call, const std::vector<Launch> &launches);

// The parts, in the order analyze() runs them.
std::set<TensorRef> returned_tensors(const Call &call, const std::vector<Launch> &launches, Flow &f);
void gradient_flow(const Call &call, const std::vector<Launch> &launches, const std::set<TensorRef> &returned, Flow &f);
void shared_shadows(const std::vector<Launch> &launches, Flow &f);
// For each shared shadow (not an output's, not a stub input's that a launch writes) that the
// backward first touches with the contributions of one launch (the last in forward order that
// reads it for a gradient, through one parameter; no launch from that one on writes the tensor,
// whose backward would read the shadow first): that launch. Its backward may store there as into a fresh buffer (where its
// writes are disjoint: a zero-filled or covered float32 buffer that later launches add to) instead
// of adding atomically to a zero-filled one. Called by shared_shadows.
void first_writers(const std::vector<Launch> &launches, Flow &f);
void saved_copies(const std::vector<Launch> &launches, Flow &f);
// Each spec's `kept`: the buffers whose contents the backward finds as the launch left them (called
// by saved_copies).
void kept_buffers(const std::vector<Launch> &launches, Flow &f);

}  // namespace tad::flow
