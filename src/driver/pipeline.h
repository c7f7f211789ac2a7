// The pass pipeline: from a forward file and trace records to the derivation, its plans and the
// generated module. Pure (no worker, no disk): generate and the CPU oracle both call it, so a
// candidate can always be recomputed from its forward source and traces.
//
// derive_chain() is the one function that orders every stage, as Halide's Lower.cpp does (stage
// names in quotes):
//   "lower" -> "cse"                                    per launch
//   "flow" (src/flow)                                   across launches: specs, shared shadows, copies
//   "access" (passes/access.h)                          per launch: how its gradient writes are shared
//   "writes" (src/schedule) -> reverse mode             per launch and variant
//   forward mode                                        per launch
// and every kernel the two modes derive (backward, tape sizing, tangent) goes on through
//   "ad" (as built) -> "cse" -> "dce" -> "drop-unused-params" -> ir::verify
// emit_backward_module() then derives the file again with residual stores where its forward stores
// too little for the backward (driver/residuals.h), and emits the module of whichever it keeps.
// With TAD_DUMP_IR=1 it prints the IR (or the decision) after each stage to stderr, headed
// "// ---- <stage>: <function>"; TAD_DUMP_IR=<stage>[,<stage>...] prints only those stages.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "ir/ir.h"
#include "plan/derivation.h"
#include "plan/plan.h"
#include "support/json.h"

namespace tad::driver {

// What the pipeline derived for one launch of a traced call.
struct Derived {
    std::string kernel;  // the forward kernel
    std::vector<frontend::ArgBinding> bindings;  // its arguments in this trace
    ir::Function forward;  // after CSE
    ad::GradSpec spec;  // the gradients that flow through this launch
    std::map<std::string, plan::TensorRef> tensors;  // pointer parameter -> tensor of the call
    // The backward kernels of this trace's static branches; no variants when no gradient flows
    // through the launch.
    plan::Specialization specialization;
    plan::Tangent tangent;  // forward mode, when gradient flows through the launch
    std::string access;  // the access analysis of its gradient writes, printed (passes/access.h)
    // Pointer parameter -> the first launch, this one or a later one, that writes its tensor.
    std::map<std::string, size_t> saved_before;
};

// The derivatives of a traced call: its launches in forward order.
struct Chain {
    std::vector<Derived> launches;
    std::set<plan::TensorRef> shared;
    std::map<plan::TensorRef, size_t> first_writer;  // flow::Flow::first_writer
    std::map<int, int> aliases;  // output j -> the stub input it is (updated in place and returned)
};

// `loops`: how loops with nonlinear carried state are reversed (ad::LoopPolicy).
// `tag` goes into the names of the kernels it derives (the launch nodes' "_launch<k>").
Chain derive_chain(const frontend::KernelFile &kf, JsonRef trace, ad::LoopPolicy loops = ad::LoopPolicy::Auto,
                   const std::string &tag = "");

// One derivation over the chains of several traces of a stub (one per specialization of its static
// branches); `first` is the trace whose launches name the temporaries. Refuses traces that launch
// other kernels or pass them other buffers.
plan::Derivation merge(const frontend::KernelFile &kf, const std::vector<Chain> &chains, JsonRef first);

// The generated module covering every specialization among `traces`; for a stub whose torch code
// computes from the grad inputs (has_torch_code), each launch its own node (launch_nodes.h).
// `explain`, if given, receives the access analysis of every launch (explain()).
std::string emit_backward_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                 ad::LoopPolicy loops = ad::LoopPolicy::Auto, std::string *explain = nullptr);

// How each launch's backward writes its gradients, per chain: "launch 0 _k:" then the access
// analysis (passes::print), indented.
std::string explain(const std::vector<Chain> &chains);

// Whether the kernels lowered for `trace` are specialized on constexpr values (static `if`s,
// unrolled loops, values baked in): then each combination of those values needs its own backward.
bool has_specializations(const frontend::KernelFile &kf, JsonRef trace);

// Whether `trace` specializes the kernels on other values, or launches other kernels, than every
// trace in `seen`.
bool new_specialization(const frontend::KernelFile &kf, JsonRef trace, const std::vector<JsonRef> &seen);

}  // namespace tad::driver
