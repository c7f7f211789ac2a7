// Torch code in the stub (tests/pipeline/data/torch_code/): where it computes an output or a kernel
// argument from the grad inputs, generating is refused (tad differentiates the launches only, and a
// gradient through that code would be lost); views, index tables and allocations are fine.
#include <gtest/gtest.h>

#include "cpu_session.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::Refused;
using tad::test::torch_available;

namespace {

const std::string kLost =
    "; tad differentiates the stub's kernel launches, not its torch code, so that gradient would be lost: ";

class TorchCodeRefused : public ::testing::TestWithParam<Refused> {};

TEST_P(TorchCodeRefused, WithTheOpAndWhereItsResultGoes) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    tad::test::expect_refused(std::string("tests/pipeline/data/torch_code/") + GetParam().file + ".py",
                              GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Data, TorchCodeRefused,
    ::testing::Values(
        Refused{"sum_output",
                "stub 'column_sum_of_squares' computes output 0 with torch code (SumBackward1) "
                "from values that depend on its grad inputs"},
        Refused{"logsumexp_added", "stub 'square_plus_logsumexp' computes output 0 with torch code (AddBackward0)"},
        Refused{"copy_untouched", "stub 'square_head_keep_tail' computes output 0 with torch code (CopySlices)"},
        Refused{"cat_outputs", "stub 'squares_joined' computes output 0 with torch code (CatBackward0)"},
        Refused{"sorted_input",
                "stub 'squares_of_sorted': launch 0 of 'square' reads 'X', which torch code "
                "(SortBackward0) computed from the grad inputs"}),
    [](const auto &info) { return std::string(info.param.file); });

TEST(TorchCodeRefused, MessageSaysWhatToDo) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    tad::test::expect_refused(
        "tests/pipeline/data/torch_code/sum_output.py",
        "(SumBackward1) from values that depend on its grad inputs" + kLost +
            "compute it in a kernel, or return what the kernel wrote and finish outside the stub");
    tad::test::expect_refused("tests/pipeline/data/torch_code/sorted_input.py",
                              "(SortBackward0) computed from the grad inputs" + kLost +
                                  "pass the tensors themselves (views of them are fine), or compute it in a kernel");
}

// Views of the grad input and of the output, and an index table torch builds from no grad input,
// carry no gradient of their own: the file generates and matches finite differences.
TEST(TorchCodeAllowed, ViewsAndTablesMatchFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/torch_code/views_and_tables.py");
    s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
}

}  // namespace
