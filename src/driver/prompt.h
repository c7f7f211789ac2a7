// The optimizer's prompt (docs/llm.md, "The prompt"): what a model is shown and asked.
#pragma once

#include <string>
#include <vector>

#include "driver/optimize_options.h"
#include "llm/provider.h"

namespace tad::driver {

struct PromptInput {
    std::string forward_path, forward_source;
    std::string stub;  // the stub's name
    // The module to improve: the best verified one; empty when there is none yet (the compiler
    // refused the kernel, or its backward failed verification: `best_note` says which).
    std::string best_source, best_id;
    bool best_verified = false;  // false: the compiler's module, which fails verification
    std::string best_note;  // how the best was checked, or why there is none
    std::string measurements;  // the best's bench results as a Markdown table; empty: not timed
    std::vector<RetrievedPair> pairs;
    std::vector<std::string> rejections;  // "<candidate>: <reason>", this run's so far
    std::vector<std::string> interface;  // the lines the module must keep (module_interface.h)
};

llm::Prompt build_prompt(const PromptInput &in);

}  // namespace tad::driver
