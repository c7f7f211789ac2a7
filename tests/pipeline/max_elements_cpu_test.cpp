// The CPU tier's size limit is applied before make_args allocates anything, and optional SWEEP
// entries that do not fit are skipped, never failed (tests/pipeline/data/huge_sweep.py).
#include <gtest/gtest.h>

#include "cpu_session.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;

TEST(MaxElements, HugeEntriesAreSkippedBeforeTheyAreAllocated) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, "tests/pipeline/data/huge_sweep.py");
    s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    JsonRef results = report.at("results");
    ASSERT_EQ(results.size(), 3u) << report.dump(true);
    EXPECT_EQ(results[0].at("status").str(), "pass");
    EXPECT_EQ(results[1].at("status").str(), "skipped");
    EXPECT_EQ(results[1].at("message").str(),
              "1099511627776 input elements exceed the CPU interpreter's limit of 1048576");
    EXPECT_EQ(results[2].at("status").str(), "skipped");
    const std::string oom = results[2].at("message").str();
    EXPECT_EQ(oom.rfind("optional entry: oom: make_args raised RuntimeError: ", 0), 0u) << oom;
    EXPECT_NE(oom.find("can't allocate memory"), std::string::npos) << oom;
}
