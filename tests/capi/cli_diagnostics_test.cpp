// A failure in user code, seen from the `tad` program: which part failed, where, and where the full
// traceback went.
#include <gtest/gtest.h>

#include <string>

#include "spawn_tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

// A forward whose make_args fails in a helper: the error names make_args and the helper's line.
const std::string kFailing = std::string(kDoubleForward) + R"(

def sizes(dims):
    return dims["size"]


def make_args(dims):
    return (torch.zeros(sizes(dims)),), {}
)";

}  // namespace

// A failure in user code says which part failed and where; the full traceback is in worker.log.
TEST(CliDiagnostics, FailingMakeArgsSaysWhereAndLogsTheTraceback) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string forward = dir.path() + "/failing.py", work = dir.path() + "/w";
    write_text(forward, kFailing);
    EXPECT_EQ(run_tad({"generate", forward, "--dims", R"({"n": 8})", "--work-dir", work, "-q"}, dir.path() + "/tad"),
              4);
    EXPECT_EQ(read_text(dir.path() + "/tad.err"), "tad: error: exception: make_args raised KeyError: 'size' (at " +
                                                      forward + ":22); traceback in " + work + "/worker.log\n");
    std::string log = read_text(work + "/worker.log");
    EXPECT_NE(log.find("Traceback (most recent call last):"), std::string::npos) << log;
    EXPECT_NE(log.find("line 26, in make_args"), std::string::npos) << log;
}
