// The LLM optimizer: tad_generate with backend "llm" (docs/llm.md). Phases:
//   derive    the compiler's backward, verified (and timed on a GPU): the baseline. Where the
//             compiler refuses the kernel, the first round asks the model for the first backward.
//   schedule  each round sends `parallel` requests at once; the prompt (prompt.h) holds the forward,
//             the current best backward, its measurements, the retrieved pairs and the rejections
//             so far. A reply is a whole module or a unified diff against the best one; it must
//             parse, pass emit::module_fault's checks and keep the module's interface.
//   certify   the candidate (a snapshot, made current for the trial) is verified across the SWEEP
//             (the dot-product test included), then benchmarked; it stays current only when it
//             beats the best by kMinSpeedup, else the session rolls back to the best. The first
//             reply of a round to win ends the round; the requests still out are cancelled.
// Without a GPU, certify verifies on the CPU interpreter and times nothing: no candidate is made
// current for being faster (none is shown to be); a verified one is kept as a snapshot, and becomes
// current only where there is no verified backward at all (the compiler refused).
#pragma once

#include <string>

#include "driver/session.h"

namespace tad::driver {

// A candidate must be this much faster (best time / its time, over the cases both ran) to win.
constexpr double kMinSpeedup = 1.02;

// Runs the optimization for the loaded forward and returns the best snapshot's id (current on
// return). Its report goes to Session::set_optimize_report and <work_dir>/llm/<run>/report.{md,json}.
// Fails (the session's current candidate left as before the call) on invalid options (checked
// before anything runs: provider, model, the key's variable unset or empty, budgets; and TAD_ERR_IO
// where libcurl cannot be loaded), on
// cancellation, when the compiler fails for another reason than refusing the kernel, and with
// TAD_ERR_UNSUPPORTED when the compiler refused and no model candidate passed verification.
std::string optimize(Session &s, const GenerateOptions &opts);

}  // namespace tad::driver
