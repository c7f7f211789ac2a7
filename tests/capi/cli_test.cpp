// The `tad` program: usage errors, exit codes and the commands that need no pipeline. It runs the
// binary the build made next to the library, as a user would.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_tad.h"
#include "tad.h"
#include "temp_dir.h"

namespace {

void expect_usage_error(const std::vector<std::string> &args, const std::string &message) {
    Outcome r = run_tad(args);
    EXPECT_EQ(r.code, 2) << args.at(0);
    EXPECT_EQ(r.err, "tad: error: " + message + " (see 'tad help')\n");
    EXPECT_EQ(r.out, "");
}

}  // namespace

TEST(Cli, VersionIsTheLibrarys) {
    Outcome r = run_tad({"--version"});
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out, std::string("tad ") + tad_version() + "\n");
    EXPECT_EQ(run_tad({"verify", "--version"}).out, r.out);
}

TEST(Cli, Help) {
    for (const char *h : {"help", "--help", "-h"}) {
        Outcome r = run_tad({h});
        EXPECT_EQ(r.code, 0) << h;
        EXPECT_EQ(r.out.rfind("usage: tad [options] COMMAND [ARGS]\n", 0), 0u) << h;
        EXPECT_NE(r.out.find("rollback ID"), std::string::npos);
    }
}

TEST(Cli, UsageErrorsExitWithTwo) {
    expect_usage_error({}, "no command given");
    expect_usage_error({"frobnicate"}, "unknown command 'frobnicate'");
    expect_usage_error({"verify"}, "'verify' needs FILE");
    expect_usage_error({"rollback"}, "'rollback' needs ID");
    expect_usage_error({"verify", "a.py", "b.py"}, "unexpected argument 'b.py'");
    expect_usage_error({"snapshots", "extra"}, "unexpected argument 'extra'");
    expect_usage_error({"verify", "a.py", "--frob"}, "unknown option '--frob'");
    expect_usage_error({"verify", "a.py", "--reps", "3"}, "'verify' does not take --reps");
    expect_usage_error({"bench", "a.py", "--cpu"}, "'bench' does not take --cpu");
    expect_usage_error({"generate", "a.py", "--dims"}, "--dims needs a value");
    expect_usage_error({"verify", "a.py", "--cpu=1"}, "--cpu takes no value");
    expect_usage_error({"bench", "a.py", "--reps", "0"}, "--reps: expected an integer from 1 to 2147483647, got '0'");
    expect_usage_error({"snapshots", "--device", "x"}, "--device: expected an integer from 0 to 2147483647, got 'x'");
    expect_usage_error({"snapshots", "--timeout=-3"}, "--timeout: expected a positive number of seconds, got '-3'");
    const std::string dims_msg =
        "--dims: expected a JSON object such as '{\"M\": 4, \"N\": 64}' or a non-empty list of "
        "them";
    expect_usage_error({"verify", "a.py", "--dims", "[1, 2]"}, dims_msg);
    expect_usage_error({"verify", "a.py", "--dims", "[]"}, dims_msg);
    expect_usage_error({"run", "a.py", "--dims={M: 4}"}, dims_msg);
}

TEST(Cli, MissingForwardFileIsAnInputError) {
    TempDir dir;
    Outcome r = run_tad({"generate", dir.path() + "/missing.py", "--work-dir", dir.path() + "/w", "-q"});
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err.rfind("tad: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("missing.py"), std::string::npos) << r.err;
}

TEST(Cli, SnapshotsOfAFreshDirectory) {
    TempDir dir;
    Outcome r = run_tad({"snapshots", "--work-dir", dir.path()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "no snapshots\n");
    r = run_tad({"snapshots", "--json", "--work-dir=" + dir.path()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, 1), "[");
    EXPECT_EQ(r.out.find('{'), std::string::npos) << r.out;
}

TEST(Cli, RollbackToAnUnknownIdIsAnInputError) {
    TempDir dir;
    Outcome r = run_tad({"--work-dir", dir.path(), "rollback", "9999-00000000"});
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "tad: error: unknown snapshot '9999-00000000'\n");
}
