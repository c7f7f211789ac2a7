// `tad optimize FILE`: its usage errors, and one run against the scripted server that prints the
// report and the best snapshot's id.
#include <gtest/gtest.h>

#include "../optimize/optimize_support.h"
#include "run_tad.h"

using namespace tad;
using namespace tad::test;

namespace {

TEST(CliOptimize, UsageErrors) {
    Outcome r = run_tad({"optimize", "f.py"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "tad: error: optimize needs --model (see 'tad help')\n");
    r = run_tad({"optimize", "f.py", "--model", "m", "--temperature", "3"});
    EXPECT_EQ(r.err, "tad: error: --temperature: expected a number from 0 to 2, got '3' (see 'tad help')\n");
    r = run_tad({"optimize", "f.py", "--model", "m", "--parallel", "0"});
    EXPECT_EQ(r.err, "tad: error: --parallel: expected an integer from 1 to 16, got '0' (see 'tad help')\n");
    r = run_tad({"generate", "f.py", "--model", "m"});
    EXPECT_EQ(r.err, "tad: error: 'generate' does not take --model (see 'tad help')\n");
}

TEST(CliOptimize, PrintsTheReportAndTheBestId) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());  // the forward file and the key's variable
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = 2.0 * t2\n");
    FakeLlm server(replies({reply(fenced("python", module))}));
    const std::string work = fs::join(server.dir(), "work"), saved = fs::join(server.dir(), "report.md");
    Outcome r = run_tad({"optimize", run.forward_path(), "--model", "fake-model", "--base-url", server.url("/v1"),
                         "--api-key-env", kKeyEnv, "--iterations", "1", "--work-dir", work, "--report", saved, "-q",
                         "--python", kPython});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("# tad optimize: square (" + run.forward_path() + ")\n", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("| model | "), std::string::npos);
    EXPECT_NE(r.out.find(" | verified | "), std::string::npos) << r.out;
    const size_t best = r.out.rfind("\nbest: ");
    ASSERT_NE(best, std::string::npos);
    const std::string id = r.out.substr(best + 7, r.out.size() - best - 8);
    EXPECT_EQ(fs::read_file(fs::join(work, "current")), id + "\n");
    EXPECT_EQ(fs::read_file(saved) + "\nbest: " + id + "\n", r.out);
}

}  // namespace
