// Saving residuals: the forward launched with stores of values its backward would recompute
// (docs/saved-residuals.md), decided from the derivation of the file as written.
//
// Two residuals:
// - the logsumexp of an online-softmax loop that the closed form differentiates but whose forward
//   stores no logsumexp (passes::unsaved_logsumexps): label smoothing's cross entropy, kl_div, an
//   attention forward that stores O but not L. Their backward reruns the loop for the row
//   statistics, one more pass over the inputs; with m_T + log(l_T) saved per program (a value, or a
//   BLOCK_M row vector) it reads them back and skips the loop;
// - a contraction's accumulator whose value the backward needs (passes::unsaved_accumulators: a
//   matmul's activation epilogue), which it would get by running the whole K loop again: saved
//   where the kernel stores its output, into a buffer laid out like that output's tensor, and read
//   back under the output's mask (passes/off_mask.h).
//
// The file's source gets the stores (frontend/residual_stores.h); each trace gets, per launch of a
// kernel with a store, its buffer: a temporary of one float32 (float64 in a launch with a float64
// tensor) per program of the recorded grid, times the row vector's length, or, for an accumulator,
// as many as the output's tensor spans from the argument's first element, bound to the new
// parameter (the launcher allocates the same at run time). The chains are derived again from both;
// the stores are kept only where the derived backward reads every one back (a parameter with
// final_of), which the closed form's proof (online_softmax.h) decides, and loses no variant on tile
// coordinates. TAD_SAVE_RESIDUALS=off keeps the file as written.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "frontend/kernel_file.h"
#include "support/json.h"

namespace tad::driver {

struct Residuals {
    frontend::KernelFile kf;  // the file with the stores
    std::vector<Json> traces;  // the traces with their buffers, in the order given
    std::vector<Chain> chains;  // derived from those by the caller's Derive
    std::string report;  // a line per store: what it saves, where
};

// The chains of a file and its traces, as the caller derives them (one per trace, or, for a
// module of launch nodes, one per node).
using Derive = std::function<std::vector<Chain>(const frontend::KernelFile &, const std::vector<JsonRef> &)>;

// `chains` derived from `kf` and `traces` by `derive`; nullopt when no launch has a residual to
// save, or (with a line in `report` saying why) when the stores cannot be placed, the derivation
// with them fails, or the backward derived with them reads one of them not back or no longer runs on
// tile coordinates.
std::optional<Residuals> save_residuals(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                        const std::vector<Chain> &chains, const Derive &derive, std::string *report);

// "kernel.TAD_SAVED_<k>..." for each residual parameter of the file's copies of `forward`'s kernels,
// sorted: which residuals a file (a forward with stores, a generated module) carries.
std::vector<std::string> residual_params(const ast::File &file, const frontend::KernelFile &forward);

}  // namespace tad::driver
