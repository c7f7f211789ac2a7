// What the LLM optimizer (tad_generate with backend "llm", optimize.h) is configured with, and the
// interface through which it receives retrieved (forward, backward) pairs for its prompt.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "llm/budget.h"
#include "llm/provider.h"
#include "llm/retry.h"

namespace tad::driver {

// A known forward with its verified backward, shown to the model as an example.
struct RetrievedPair {
    std::string path;  // where the pair lives (a dataset entry), for the prompt and the report
    std::string forward_source, backward_source;
    double similarity = 0;  // in [0, 1]; 1: the same features
};

// The top-k pairs for a forward file, most similar first (at most `topk`). Empty when retrieval has
// nothing; throws tad::Error when it fails.
using PairProvider = std::function<std::vector<RetrievedPair>(const std::string &forward_path,
                                                              const std::string &forward_source, int topk)>;

struct OptimizeOptions {
    llm::ChatSettings chat;  // provider, model, base URL, temperature, reasoning effort, output limit
    std::string api_key_env;  // the variable holding the key; empty: the provider's default
    llm::BudgetLimits budget;
    llm::RetryPolicy retry;
    double request_timeout_s = 300;  // one attempt of one request
    int max_iterations = 4;  // rounds of requests after the baseline
    int parallel = 1;  // requests per round, sent at once
    double wall_clock_s = 1800;  // the whole optimization; checked between steps
    int topk = 4;  // retrieved pairs in the prompt
};

// The provider the sessions use: src/retrieve over the default dataset (docs/retrieval.md), the
// forward itself left out, each entry with the backward its sidecar names or `tad dataset build`
// verified.
PairProvider retrieved_pairs();

}  // namespace tad::driver
