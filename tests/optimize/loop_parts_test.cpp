// The optimizer's parts that are pure functions: a module's interface, the comparison of bench
// reports, the prompt, the report's Markdown.
#include <gtest/gtest.h>

#include <cmath>

#include "driver/bench_score.h"
#include "driver/module_interface.h"
#include "driver/optimize_report.h"
#include "driver/prompt.h"
#include "frontend/parser.h"

using namespace tad;
using namespace tad::driver;

namespace {

std::vector<std::string> interface_of(const std::string &source) {
    return module_interface(frontend::parse_source("m.py", source));
}

TEST(ModuleInterface, PublicNamesWithTheirParameters) {
    EXPECT_EQ(interface_of("import torch\n"
                           "X, _y = 1, 2\n"
                           "N: int = 3\n"
                           "M: int\n"
                           "def f(a, b=1, *args, c, d=2, **kw): pass\n"
                           "def g(a, /, b): pass\n"
                           "def h(*, k): pass\n"
                           "def _private(x): pass\n"
                           "class Fn: pass\n"
                           "class _Hidden: pass\n"
                           "X = 4\n"),
              (std::vector<std::string>{"X =", "N =", "def f(a, b=..., *args, c, d=..., **kw)", "def g(a, /, b)",
                                        "def h(*, k)", "class Fn"}));
}

TEST(ModuleInterface, ChangesAreNamed) {
    const std::vector<std::string> base{"def forward(*args, **kwargs)", "GRAD_INPUTS =", "def jvp(*args)"};
    EXPECT_EQ(interface_change(base, {"GRAD_INPUTS =", "def jvp(*args)", "def forward(*args, **kwargs)", "NEW ="}), "");
    EXPECT_EQ(interface_change(base, {"def forward(x)", "GRAD_INPUTS =", "def jvp(*args)"}),
              "it changes 'def forward(*args, **kwargs)' to 'def forward(x)'");
    EXPECT_EQ(interface_change(base, {"def forward(*args, **kwargs)", "def jvp(*args)"}),
              "it no longer defines 'GRAD_INPUTS ='");
}

Json bench(const std::string &results) {
    return Json::parse("{\"kind\": \"bench\", \"results\": " + results + "}", "bench");
}

TEST(BenchScore, ComparesOnTheCasesTheBestRan) {
    Json best = bench(R"([{"dims": {"n": 1}, "dtype": "float32", "status": "ok", "bwd_ms": 2.0},
                          {"dims": {"n": 2}, "dtype": "float32", "status": "ok", "bwd_ms": 8.0},
                          {"dims": {"n": 3}, "dtype": "float32", "status": "skipped", "bwd_ms": null}])");
    Json faster = bench(R"([{"dims": {"n": 1}, "dtype": "float32", "status": "ok", "bwd_ms": 1.0},
                            {"dims": {"n": 2}, "dtype": "float32", "status": "ok", "bwd_ms": 8.0},
                            {"dims": {"n": 3}, "dtype": "float32", "status": "ok", "bwd_ms": 1.0}])");
    std::map<std::string, double> b = case_times(best), f = case_times(faster);
    EXPECT_EQ(b.size(), 2u);
    EXPECT_DOUBLE_EQ(*geomean(b), 4.0);
    std::string why;
    EXPECT_DOUBLE_EQ(*speedup_over(b, f, &why), std::sqrt(2.0));  // 2x on one case, 1x on the other
    Json broken = bench(R"([{"dims": {"n": 1}, "dtype": "float32", "status": "ok", "bwd_ms": 0.5},
                            {"dims": {"n": 2}, "dtype": "float32", "status": "error", "bwd_ms": null}])");
    EXPECT_FALSE(speedup_over(b, case_times(broken), &why));
    EXPECT_EQ(why, "it did not run the case {\"n\":2} float32");
    EXPECT_FALSE(speedup_over({}, f, &why));
    EXPECT_EQ(why, "no case ran");
    EXPECT_FALSE(geomean({}));
    EXPECT_EQ(bench_table(best).rfind("| dims | dtype | fwd ms | bwd ms | reference bwd ms | status |\n", 0), 0u);
    EXPECT_NE(bench_table(best).find("| {\"n\":2} | float32 |  | 8.0000 |  | ok |"), std::string::npos)
        << bench_table(best);
}

TEST(Prompt, HoldsWhatTheModelNeeds) {
    PromptInput in;
    in.forward_path = "/src/f.py";
    in.forward_source = "FORWARD SOURCE\n";
    in.stub = "f";
    in.best_source = "BEST MODULE\n";
    in.best_id = "0001-aaaaaaaa";
    in.best_verified = true;
    in.best_note = "verified on the GPU and timed";
    in.measurements = "| table |\n";
    in.pairs = {{"dataset/norms/layernorm.py", "PAIR FORWARD\n", "PAIR BACKWARD\n", 0.875}};
    in.rejections = {"round 1, candidate 1: too slow"};
    in.interface = {"def forward(*args, **kwargs)"};
    llm::Prompt p = build_prompt(in);
    EXPECT_NE(p.system.find("Triton"), std::string::npos);
    for (const char *want :
         {"Make the backward of the stub `f` faster", "## Forward file (/src/f.py)\n\n```python\nFORWARD SOURCE\n```",
          "(snapshot 0001-aaaaaaaa)\n\n```python\nBEST MODULE\n```", "## Its measurements (milliseconds)\n\n| table |",
          "### dataset/norms/layernorm.py (similarity 0.875)", "PAIR BACKWARD", "- round 1, candidate 1: too slow",
          "- `def forward(*args, **kwargs)`", "```diff"})
        EXPECT_NE(p.user.find(want), std::string::npos) << want << "\n" << p.user;
    in.pairs.clear();
    in.measurements.clear();
    p = build_prompt(in);
    EXPECT_EQ(p.user.find("Known forward/backward pairs"), std::string::npos);
    EXPECT_NE(p.user.find("It has not been timed (no GPU)."), std::string::npos);
    in.best_verified = false;
    in.best_note = "the compiler's backward fails verification: X";
    EXPECT_NE(build_prompt(in).user.find("is wrong: the compiler's backward fails verification: X. Fix it"),
              std::string::npos);
    in.best_source.clear();
    in.best_note = "tad's compiler refused it: Y";
    EXPECT_NE(build_prompt(in).user.find("Write the backward module for the stub `f` of the forward file below. "
                                         "tad's compiler refused it: Y"),
              std::string::npos);
}

TEST(OptimizeReport, MarkdownHasOneRowPerCandidate) {
    RunRecord r;
    r.stub = "f";
    r.forward_path = "/src/f.py";
    r.provider = "openai";
    r.model = "m";
    r.base_url = "http://x/v1";
    r.mode = "gpu";
    r.max_iterations = r.rounds = r.parallel = 1;
    r.best = r.baseline = "0001-aaaaaaaa";
    r.stopped = "max iterations (1)";
    CandidateRecord base;
    base.origin = "compiler";
    base.index = 1;
    base.id = "0001-aaaaaaaa";
    base.verdict = "baseline";
    base.bwd_ms = 0.05;
    CandidateRecord c;
    c.round = c.index = 1;
    c.origin = "model";
    c.form = "patch";
    c.verdict = "rejected";
    c.reason = "not faster | at all\nreally";
    c.bwd_ms = 0.06;
    c.speedup = 0.8333;
    c.input_tokens = 10;
    c.output_tokens = 20;
    r.candidates = {base, c};
    const std::string md = report_markdown(r);
    EXPECT_NE(md.find("| 0 | 1 | compiler | 0001-aaaaaaaa |  | baseline | 0.0500 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| 1 | 1 | model |  | patch | rejected | 0.0600 | 0.833x |"), std::string::npos) << md;
    EXPECT_NE(md.find("| 10/20 | not faster / at all really |"), std::string::npos) << md;
    Json j = report_json(r);
    EXPECT_EQ(j.at("candidates").size(), 2u);
    EXPECT_FALSE(j.at("candidates")[0].has("request"));
    EXPECT_EQ(j.at("candidates")[1].at("request").at("output_tokens").integer(), 20);
    EXPECT_TRUE(j.at("cost_usd").is_null());
}

}  // namespace
