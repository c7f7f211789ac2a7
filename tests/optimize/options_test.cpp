// tad_generate's version 3 options and tad_optimize_report: every refusal before anything runs, by
// its exact text, and nothing written by a refused call.
#include <gtest/gtest.h>

#include <cstring>

#include "optimize_support.h"

using namespace tad;
using namespace tad::test;

namespace {

// tad_generate with backend "llm" and `tweak` applied to otherwise valid options; its message.
std::string refusal(OptimizeRun &run, const std::function<void(tad_generate_options &)> &tweak) {
    tad_generate_options g;
    tad_generate_options_init(&g, TAD_GENERATE_OPTIONS_VERSION);
    g.backend = "llm";
    g.model = "m";
    g.api_key_env = kKeyEnv;
    tweak(g);
    char *id = nullptr;
    const int status = tad_generate(run.session(), &g, &id);
    EXPECT_EQ(status, TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(id, nullptr);
    return tad_error_last();
}

TEST(OptimizeOptions, EachBadOptionIsRefusedByName) {
    OptimizeRun run(square_forward());
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.model = nullptr; }), "tad_generate: no model given");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.provider = "mistral"; }),
              "tad_generate: unknown provider 'mistral' (available: openai, anthropic)");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.parallel = 17; }),
              "tad_generate: parallel must be from 1 to 16");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.parallel = -1; }),
              "tad_generate: max_iterations and parallel must not be negative");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.temperature = 2.5; }),
              "tad_generate: temperature must be from 0 to 2, got 2.5");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.temperature = -1; }),
              "tad_generate: temperature must be a finite number, not negative");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.reasoning_effort = "extreme"; }),
              "tad_generate: unknown reasoning effort 'extreme' (available: low, medium, high)");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.max_cost_usd = 5; }),
              "tad_generate: a cost budget needs the prices per million input and output tokens");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.max_tokens = -1; }),
              "tad_generate: max_tokens and max_output_tokens must not be negative");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.wall_clock_s = -3; }),
              "tad_generate: wall_clock_s must be a positive number of seconds, got -3");
    EXPECT_EQ(refusal(run, [](tad_generate_options &g) { g.base_url = "file:///etc/passwd"; }),
              "tad_generate: base URL 'file:///etc/passwd' is not http:// or https://");
    EXPECT_EQ(run.snapshots().size(), 0u);
    EXPECT_FALSE(fs::exists(fs::join(run.work_dir(), "llm")));
}

TEST(OptimizeOptions, AnUnsetKeyVariableIsRefusedBeforeAnythingRuns) {
    OptimizeRun run(square_forward());
    unsetenv(kKeyEnv);
    EXPECT_EQ(refusal(run, [](tad_generate_options &) {}),
              "tad_generate: the environment variable TAD_TEST_LLM_KEY (api_key_env) holding the API key is not set");
    setenv(kKeyEnv, "", 1);
    EXPECT_EQ(refusal(run, [](tad_generate_options &) {}),
              "tad_generate: the environment variable TAD_TEST_LLM_KEY (api_key_env) holding the API key is not set");
    EXPECT_EQ(run.snapshots().size(), 0u);
    EXPECT_FALSE(fs::exists(fs::join(run.work_dir(), "llm")));
}

// A caller built against the version 2 header has no model field: backend "llm" is refused for it,
// reading nothing past its struct.
TEST(OptimizeOptions, AVersionTwoStructReadsAsNoModel) {
    OptimizeRun run(square_forward());
    struct GenerateV2 {
        unsigned int version;
        const char *backend, *dims_json, *launch_json, *loops;
        unsigned char guard[64];
    } g;
    std::memset(&g, 0xab, sizeof g);
    ASSERT_EQ(tad_generate_options_init(reinterpret_cast<tad_generate_options *>(&g), 2), TAD_OK);
    g.backend = "llm";
    char *id = nullptr;
    EXPECT_EQ(tad_generate(run.session(), reinterpret_cast<tad_generate_options *>(&g), &id), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_generate: no model given");
    for (unsigned char c : g.guard) EXPECT_EQ(c, 0xab);
}

TEST(OptimizeOptions, TheReportIsThereOnlyAfterARun) {
    OptimizeRun run(square_forward());
    char *out = nullptr;
    EXPECT_EQ(tad_optimize_report(run.session(), nullptr, &out), TAD_ERR_STATE);
    EXPECT_STREQ(tad_error_last(),
                 "tad_optimize_report: no optimization yet (call tad_generate with backend \"llm\" first)");
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(tad_optimize_report(run.session(), "html", &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_optimize_report: unknown format 'html' (available: markdown, json)");
    EXPECT_EQ(tad_optimize_report(run.session(), "json", nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_optimize_report: out_report is NULL");
    EXPECT_EQ(tad_optimize_report(nullptr, "json", &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_optimize_report: session is NULL");
}

}  // namespace
