// The CPU tier's whole-stub check: the worker runs the emitted module and the stub with every launch
// on the interpreter (tad_interpret) and compares the module's gradients with central differences
// of the whole stub. It sees what the plan oracle does not: the module's Python launcher, and the
// stub's own torch code.
#include <gtest/gtest.h>

#include "cpu_session.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

const char *kChain = "tests/pipeline/data/chain.py";

Json verify_cpu(Session &s, bool *passed) {
    VerifyOptions v;
    v.cpu = true;
    return Json::parse(s.verify(v, passed), "report");
}

TEST(WholeStub, ChecksEveryCaseAgainstFiniteDifferencesOfTheStub) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, kChain);
    s->generate(GenerateOptions{});
    bool passed = false;
    Json report = verify_cpu(*s, &passed);
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    ASSERT_EQ(results.size(), 2u);
    for (size_t i = 0; i < results.size(); ++i) {
        JsonRef stub = results[i].at("stub");
        EXPECT_EQ(stub.at("status").str(), "pass") << stub.dump(true);
        EXPECT_EQ(stub.at("reference").str(), "finite differences");
        EXPECT_EQ(stub.at("dtype").str(), "float64");
        ASSERT_EQ(stub.at("grads").size(), 2u);
        EXPECT_EQ(stub.at("grads")[0].at("name").str(), "x");
        EXPECT_EQ(stub.at("grads")[1].at("name").str(), "w");
        EXPECT_TRUE(stub.at("dot_product").at("ok").boolean()) << stub.dump(true);
    }
}

// Inputs next to a kink: the first step of both finite-difference checks (the plan oracle's and the
// whole stub's) crosses it, a smaller one does not; the gradient passes. Doubled, it fails.
TEST(WholeStub, StepsAcrossAKinkAreRetriedSmaller) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, "tests/pipeline/data/near_kinks.py");
    std::string id = s->generate(GenerateOptions{});
    bool passed = false;
    Json report = verify_cpu(*s, &passed);
    EXPECT_TRUE(passed) << report.dump(true);
    std::string path = dir.path() + "/snapshots/" + id + "/backward.py";
    std::string source = fs::read_file(path);
    const std::string returned = "return (_as_dtype(d_x, x),";
    size_t at = source.find(returned);
    ASSERT_NE(at, std::string::npos) << source;
    fs::write_file_atomic(path, source.replace(at, returned.size(), "return (_as_dtype(1.001 * d_x, x),"));
    report = verify_cpu(*s, &passed);
    EXPECT_FALSE(passed) << report.dump(true);
    EXPECT_EQ(report.at("results")[0].at("stub").at("status").str(), "fail") << report.dump(true);
}

// A launcher that doubles one gradient: the kernels are right, so the plan oracle passes; the
// whole-stub check, which runs the module as Python does, fails the case.
TEST(WholeStub, CatchesAWrongLauncher) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, kChain);
    std::string id = s->generate(GenerateOptions{});
    std::string path = dir.path() + "/snapshots/" + id + "/backward.py";
    std::string source = fs::read_file(path);
    const std::string returned = "return (_as_dtype(d_x, x), ";
    size_t at = source.find(returned);
    ASSERT_NE(at, std::string::npos) << source;
    fs::write_file_atomic(path, source.replace(at, returned.size(), "return (_as_dtype(2 * d_x, x), "));
    bool passed = true;
    Json report = verify_cpu(*s, &passed);
    EXPECT_FALSE(passed);
    JsonRef entry = report.at("results")[0];
    EXPECT_EQ(entry.at("status").str(), "fail");
    EXPECT_EQ(entry.at("method").str(), "finite_differences");
    EXPECT_TRUE(entry.at("grads")[0].at("ok").boolean()) << "the plan oracle runs the kernels, not the launcher";
    EXPECT_EQ(entry.at("message").str().rfind("whole stub: gradient of 'x' disagrees with finite differences of the "
                                              "stub: max rel err ",
                                              0),
              0u)
        << entry.at("message").str();
    EXPECT_EQ(entry.at("stub").at("status").str(), "fail");
}

}  // namespace
