// Loads through pointers that are not a parameter plus offsets: chosen by tl.where, or carried out
// of a loop. Each must carry its gradient in both modes, or be refused with its location; before
// pointer_base followed them, both passing files lost a load's gradient silently.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::Refused;
using tad::test::torch_available;

namespace {

class PointerCpu : public ::testing::TestWithParam<const char *> {};

// Finite differences and the dot-product test, both on every SWEEP entry.
TEST_P(PointerCpu, BothModesMatchFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string("tests/pipeline/data/pointers/") + GetParam() + ".py");
    s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    ASSERT_EQ(results.size(), 2u);
    for (size_t i = 0; i < results.size(); ++i)
        EXPECT_TRUE(results[i].at("dot_product").at("ok").boolean()) << results[i].dump();
}

INSTANTIATE_TEST_SUITE_P(Data, PointerCpu, ::testing::Values("where_pointer", "pointer_after_loop"),
                         [](const auto &info) { return std::string(info.param); });

class PointerRefused : public ::testing::TestWithParam<Refused> {};

TEST_P(PointerRefused, AtTheLoad) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    tad::test::expect_refused(std::string("tests/pipeline/data/pointers/") + GetParam().file + ".py",
                              GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Data, PointerRefused,
    ::testing::Values(
        Refused{"where_two_buffers",
                "where_two_buffers.py:14:9: unsupported construct 'load' through a pointer computed by 'where'"},
        Refused{
            "loop_switches_buffer",
            "loop_switches_buffer.py:16:13: unsupported construct 'load' through a pointer computed by 'loop_arg'"}),
    [](const auto &info) { return std::string(info.param.file); });

}  // namespace
