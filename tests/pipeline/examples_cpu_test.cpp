// The CPU tier for every example: trace with Debian's CPU torch (recording stand-in for triton),
// generate the backward, re-parse it and check it on the interpreter against finite differences.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

class ExampleCpu : public ::testing::TestWithParam<const char *> {};

TEST_P(ExampleCpu, GeneratedBackwardMatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/examples/" + GetParam());
    Session &s = *session;
    s.generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    v.max_elements = 1 << 18;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    int checked = 0;
    for (size_t i = 0; i < results.size(); ++i) {
        std::string status = results[i].at("status").str();
        EXPECT_TRUE(status == "pass" || status == "skipped") << results[i].dump(true);
        if (status != "pass") continue;
        ++checked;
        JsonRef grads = results[i].at("grads");
        ASSERT_GT(grads.size(), 0u);
        for (size_t g = 0; g < grads.size(); ++g) EXPECT_LT(grads[g].at("max_rel_err").num(), 1e-5) << grads[g].dump();
    }
    EXPECT_GE(checked, 2) << "fewer than two SWEEP entries fit the CPU interpreter";
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleCpu, ::testing::Values("gelu.py", "softmax.py", "layernorm.py"),
                         [](const auto &info) {
                             std::string n = info.param;
                             return n.substr(0, n.find('.'));
                         });

// Reverse mode through loops: a LayerNorm whose row is processed in three accumulator loops.
TEST(LoopKernelCpu, LayerNormWithLoopsMatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session =
        cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/layernorm_loops.py");
    Session &s = *session;
    s.generate(GenerateOptions{});
    EXPECT_NE(s.candidate_source("").find("    for start in range(0, N, BLOCK):\n"), std::string::npos);
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    ASSERT_EQ(results.size(), 2u);
    for (size_t i = 0; i < results.size(); ++i) {
        ASSERT_EQ(results[i].at("status").str(), "pass") << results[i].dump(true);
        EXPECT_EQ(results[i].at("grads").size(), 3u);
    }
}

// Reverse mode through nested loops: accumulators two deep and per-row statistics in an outer loop
// over a program's rows (nested_loops.py); a nonlinear outer loop over time around an inner
// accumulator loop (nested_recurrence.py), which the tape policy tapes with its inner loop inside.
struct NestedCase {
    const char *file, *policy;
};
class NestedLoopsCpu : public ::testing::TestWithParam<NestedCase> {};

TEST_P(NestedLoopsCpu, MatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session = cpu_session(dir, std::string("tests/pipeline/data/") + GetParam().file + ".py");
    Session &s = *session;
    GenerateOptions g;
    g.loops = GetParam().policy;
    std::string src = s.candidate_source(s.generate(g));
    std::string kernel = src.substr(src.find("_fwd_bwd("));
    kernel = kernel.substr(0, kernel.find("\n\n\n"));
    EXPECT_NE(kernel.find("\n        for "), std::string::npos) << "no loop nested in a loop of the backward:\n"
                                                                << kernel;
    // Its time loop runs range(0, T) in every program: the tape is sized on the host.
    EXPECT_EQ(src.find("tape_stride = max(") != std::string::npos, std::string(GetParam().policy) == "tape") << src;
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("summary").at("passed").integer(), 2) << report.dump(true);
}

INSTANTIATE_TEST_SUITE_P(Data, NestedLoopsCpu,
                         ::testing::Values(NestedCase{"nested_loops", "recompute"},
                                           NestedCase{"nested_recurrence", "recompute"},
                                           NestedCase{"nested_recurrence", "tape"}),
                         [](const auto &info) { return std::string(info.param.file) + "_" + info.param.policy; });

// reshape, split / join, cumsum, an add-combiner associative_scan, argmax and libdevice math.
TEST(ShapeOpsCpu, MatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session =
        cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/shape_ops.py");
    Session &s = *session;
    s.generate(GenerateOptions{});
    std::string src = s.candidate_source("");
    for (const char *op : {"tl.reshape(", "tl.split(", "tl.join(", "tl.cumsum(", "reverse=True", "tl.argmax("})
        EXPECT_NE(src.find(op), std::string::npos) << op;
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("summary").at("passed").integer(), 2);
}

// `if` on run-time scalars: early return and a two-formula row choice (dynamic_if.py), and an `if`
// on the loop index and a loaded target inside a loop plus an ignore_index check (dynamic_if_loop.py).
class DynamicIfCpu : public ::testing::TestWithParam<const char *> {};

TEST_P(DynamicIfCpu, MatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session =
        cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/" + GetParam() + ".py");
    Session &s = *session;
    s.generate(GenerateOptions{});
    std::string src = s.candidate_source("");
    EXPECT_NE(src.find("tl.where("), std::string::npos) << src;
    // Rows that returned early write no output, so their input gradient must start at zero.
    if (std::string(GetParam()) == "dynamic_if") {
        EXPECT_NE(src.find("d_x = _zero_buffer(x)"), std::string::npos) << src;
    }
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("summary").at("passed").integer(), 2);
}

INSTANTIATE_TEST_SUITE_P(Data, DynamicIfCpu, ::testing::Values("dynamic_if", "dynamic_if_loop"),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
