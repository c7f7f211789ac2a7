// `tad optimize FILE`: its usage errors, and one run against the scripted server that prints the
// report and the best snapshot's id.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>

#include "optimize_support.h"

using namespace tad;
using namespace tad::test;

namespace {

struct Outcome {
    int code = -1;
    std::string out, err;
};

std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

Outcome tad_cli(const std::vector<std::string> &args) {
    fs::TempDir tmp;
    std::string cmd = "TAD_PYTHON=" + std::string(kPython) + " " + quote(std::string(TAD_BINARY_DIR) + "/tad");
    for (const std::string &a : args) cmd += " " + quote(a);
    cmd += " 2>" + quote(tmp.path() + "/err");
    Outcome r;
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = fs::read_file(tmp.path() + "/err");
    return r;
}

TEST(CliOptimize, UsageErrors) {
    Outcome r = tad_cli({"optimize", "f.py"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "tad: error: optimize needs --model (see 'tad help')\n");
    r = tad_cli({"optimize", "f.py", "--model", "m", "--temperature", "3"});
    EXPECT_EQ(r.err, "tad: error: --temperature: expected a number from 0 to 2, got '3' (see 'tad help')\n");
    r = tad_cli({"optimize", "f.py", "--model", "m", "--parallel", "0"});
    EXPECT_EQ(r.err, "tad: error: --parallel: expected an integer from 1 to 16, got '0' (see 'tad help')\n");
    r = tad_cli({"generate", "f.py", "--model", "m"});
    EXPECT_EQ(r.err, "tad: error: 'generate' does not take --model (see 'tad help')\n");
}

TEST(CliOptimize, PrintsTheReportAndTheBestId) {
    REQUIRE_TORCH();
    OptimizeRun run(kSquareForward);  // the forward file and the key's variable
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = 2.0 * t2\n");
    FakeLlm server(replies({reply(fenced("python", module))}));
    const std::string work = fs::join(server.dir(), "work"), saved = fs::join(server.dir(), "report.md");
    Outcome r = tad_cli({"optimize", run.forward_path(), "--model", "fake-model", "--base-url", server.url("/v1"),
                         "--api-key-env", kKeyEnv, "--iterations", "1", "--work-dir", work, "--report", saved, "-q"});
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
