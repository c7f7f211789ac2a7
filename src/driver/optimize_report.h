// The optimizer's record of a run and its report, as JSON and Markdown (docs/reports.md, "Optimize
// report").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/json.h"

namespace tad::driver {

// One candidate: the compiler's baseline (round 0) or a model's reply.
struct CandidateRecord {
    int round = 0;  // 0: the baseline
    int index = 0;  // 1-based within its round
    std::string origin;  // "compiler" or "model"
    std::optional<std::string> id;  // its snapshot; none when the reply held no module
    std::string form;  // "module" or "patch"; "" for the compiler's and for replies without code
    // "baseline", "accepted", "rejected", "verified" (passed on the CPU tier, untimed: kept, not made
    // current), "skipped" (its round was won first), "failed" (the request got no reply)
    std::string verdict;
    std::string reason;  // why rejected, skipped or failed; how accepted
    std::optional<double> max_rel_err;  // the verify report's
    std::optional<double> bwd_ms;  // geometric mean of bwd_ms over the bench's ok cases
    std::optional<double> speedup;  // the best's time over its own, on the cases both ran
    double certify_s = 0;  // verify + bench
    // The request (model candidates)
    int log_seq = 0;  // its files: requests/<seq>-request.json, -response.json
    int attempts = 0, retries = 0;
    int64_t input_tokens = 0, output_tokens = 0;
    double request_s = 0;
};

struct RunRecord {
    std::string run_dir;
    std::string forward_path, stub;
    std::string provider, model, base_url;
    std::string mode = "gpu";  // "gpu", or "cpu" where there is no GPU
    std::string no_gpu;  // why not, in cpu mode
    std::string compiler_refusal;  // the compiler's message when it refused the kernel
    std::string retrieval;  // the pairs shown to the model ("2 pairs: PATH, PATH"), "off", or "failed: why"
    std::optional<std::string> baseline, best;
    std::string stopped;  // why the run ended
    std::string error;  // the failure that ended the run, when it failed
    int rounds = 0, max_iterations = 0, parallel = 0;
    int requests = 0, retries = 0;
    int64_t input_tokens = 0, output_tokens = 0;
    std::optional<double> cost_usd;  // with prices
    double seconds = 0;
    std::vector<CandidateRecord> candidates;
};

Json report_json(const RunRecord &run);
std::string report_markdown(const RunRecord &run);

}  // namespace tad::driver
