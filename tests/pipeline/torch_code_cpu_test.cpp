// Torch code in the stub (tests/pipeline/data/torch_code/). Where it computes an output or a kernel
// argument from the grad inputs, the stub runs under autograd and each launch is its own autograd
// node (docs/stub-autograd.md): the files generate and their whole stub matches finite differences
// of the whole stub, while forward mode is declared unsupported; what a node cannot do yet is
// refused. Views, index tables and allocations keep the single-Function module.
#include <gtest/gtest.h>

#include "cpu_session.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

std::string data(const std::string &file) {
    return std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/torch_code/" + file + ".py";
}

// Generates `file` and runs the CPU tier on it; returns the module.
std::string generate_and_verify(const std::string &file, Json *report, bool *passed) {
    fs::TempDir dir;
    auto s = cpu_session(dir, data(file));
    const std::string id = s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    *report = Json::parse(s->verify(v, passed), "report");
    return fs::read_file(dir.path() + "/snapshots/" + id + "/backward.py");
}

class TorchCodeDifferentiated : public ::testing::TestWithParam<const char *> {};

TEST_P(TorchCodeDifferentiated, EachLaunchANodeAndTheWholeStubMatchesFiniteDifferences) {
    REQUIRE_TORCH();
    Json report;
    bool passed = false;
    const std::string module = generate_and_verify(GetParam(), &report, &passed);
    EXPECT_NE(module.find("class _LaunchFunction(torch.autograd.Function):"), std::string::npos);
    EXPECT_NE(module.find("    with _capturing_nodes(_NODES):\n        return "), std::string::npos);
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    ASSERT_GE(results.size(), 1u);
    for (size_t i = 0; i < results.size(); ++i) {
        JsonRef stub = results[i].at("stub");
        EXPECT_EQ(stub.at("status").str(), "pass") << stub.dump(true);
        EXPECT_EQ(stub.at("dtype").str(), "float64");
        ASSERT_GE(stub.at("grads").size(), 1u);
        for (size_t g = 0; g < stub.at("grads").size(); ++g) EXPECT_TRUE(stub.at("grads")[g].at("ok").boolean());
        // Forward mode is declared unsupported, and the dot-product test says it skipped.
        EXPECT_EQ(stub.at("dot_product").at("skipped").str(),
                  "forward mode is not generated for a stub whose torch code computes from its grad inputs (each "
                  "launch is its own autograd node)")
            << stub.dump(true);
        EXPECT_EQ(results[i].at("plan").str().rfind("skipped: ", 0), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Data, TorchCodeDifferentiated,
                         ::testing::Values("sum_output", "logsumexp_added", "copy_untouched", "cat_outputs",
                                           "sorted_input", "between_launches"));

// Two launches of one kernel that get alike views share one node (and pass: generate_and_verify).
TEST(TorchCodeDifferentiated, TwoLaunchesOfOneKernelShareTheirNode) {
    REQUIRE_TORCH();
    Json report;
    bool passed = false;
    const std::string module = generate_and_verify("cat_outputs", &report, &passed);
    for (const char *name : {"def square_bwd_launch0(", "def squares_joined_launch0_backward(",
                             "_NODES = (\n    _Node(\"square\", squares_joined_launch0_backward, (\"X\", \"Y\"), "
                             "(\"Y\",), (\"X\",), (\"X\",), ()),\n)\n"})
        EXPECT_NE(module.find(name), std::string::npos) << name << "\n" << module;
    EXPECT_EQ(module.find("launch1"), std::string::npos) << module;
}

// A launch's backward that doubles its gradient: the whole-stub check, the only one that runs the
// launch nodes, fails the case.
TEST(TorchCodeDifferentiated, AWrongLaunchBackwardFails) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, data("sum_output"));
    const std::string id = s->generate(GenerateOptions{});
    const std::string path = dir.path() + "/snapshots/" + id + "/backward.py";
    std::string source = fs::read_file(path);
    const std::string returned = "return (_as_dtype(d_X, X), None)";
    const size_t at = source.find(returned);
    ASSERT_NE(at, std::string::npos) << source;
    fs::write_file_atomic(path, source.replace(at, returned.size(), "return (_as_dtype(2 * d_X, X), None)"));
    VerifyOptions v;
    v.cpu = true;
    bool passed = true;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_FALSE(passed);
    JsonRef entry = report.at("results")[0];
    EXPECT_EQ(entry.at("status").str(), "fail") << entry.dump(true);
    EXPECT_EQ(entry.at("message").str().rfind("whole stub: gradient of 'x' disagrees with finite differences of the "
                                              "stub: max rel err ",
                                              0),
              0u)
        << entry.at("message").str();
}

// What stays unsound is refused with the launch and the views named.
TEST(TorchCodeRefused, TwoViewsOfOneWrittenBuffer) {
    REQUIRE_TORCH();
    tad::test::expect_refused(
        data("two_views_written"),
        "stub 'halves_summed': launch 0 of 'square_and_double' gets two different views of one buffer, 'Y' "
        "and 'Z', and writes one of them; as its own autograd node, a launch whose stub has torch code on "
        "grad-input values must get one view per buffer it writes (index within the kernel instead)");
}

// The one-launch stub's refusals keep their texts, naming the launch's node.
TEST(TorchCodeRefused, ALaunchThatOverwritesAGradientCarryingBufferWithConstants) {
    REQUIRE_TORCH();
    tad::test::expect_refused(data("overwrite_requires_grad"),
                              "stub 'sin_then_filled_launch0': launch 0 of 'fill' overwrites stub input 'Y', which "
                              "carries gradient, with values that do not depend on the grad inputs");
}

// Views of the grad input and of the output, and an index table torch builds from no grad input,
// carry no gradient of their own: the file keeps the single-Function module and matches finite
// differences.
TEST(TorchCodeAllowed, ViewsAndTablesMatchFiniteDifferences) {
    REQUIRE_TORCH();
    Json report;
    bool passed = false;
    const std::string module = generate_and_verify("views_and_tables", &report, &passed);
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(module.find("_LaunchFunction"), std::string::npos);
}

}  // namespace
