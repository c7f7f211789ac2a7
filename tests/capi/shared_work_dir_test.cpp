// Several `tad` processes, and several sessions, on one work directory: every command succeeds,
// ids never collide, nothing is lost, and each session keeps to the candidate it made.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "spawn_tad.h"
#include "support/json.h"
#include "tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

const int kLanes = 4, kRuns = 6;

std::string prefix_of(const std::string &dir, int lane, int run) {
    return dir + "/" + std::to_string(lane) + "-" + std::to_string(run);
}

// One process of the test: kRuns commands in turn, generate then verify --cpu, each one's exit code
// in <prefix>.code.
pid_t start_lane(const std::string &dir, const std::string &work, int lane) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    const std::string gelu = std::string(TAD_SOURCE_DIR) + "/examples/gelu.py";
    for (int run = 0; run < kRuns; ++run) {
        std::vector<std::string> args{"generate", gelu, "--dims", R"({"n": 100})", "--work-dir", work, "-q"};
        if (run % 2)
            args = {"verify", gelu,         "--cpu", "--dims", R"({"n": 100})", "--dtypes", "float32",
                    "--json", "--work-dir", work,    "-q"};
        std::string prefix = prefix_of(dir, lane, run);
        write_text(prefix + ".code", std::to_string(run_tad(args, prefix)));
    }
    _exit(0);
}

}  // namespace

// 4 processes, each running 6 commands one after another (generate and verify --cpu in turn), on one
// work directory: every command succeeds, every snapshot is there under its own id, and each verify
// report lands on the snapshot its own command generated.
TEST(CliConcurrency, FourProcessesOfSixRunsShareOneWorkDir) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string work = dir.path() + "/w";
    std::vector<pid_t> lanes;
    for (int lane = 0; lane < kLanes; ++lane) lanes.push_back(start_lane(dir.path(), work, lane));
    for (pid_t pid : lanes) waitpid(pid, nullptr, 0);

    std::set<std::string> generated;
    for (int lane = 0; lane < kLanes; ++lane)
        for (int run = 0; run < kRuns; ++run) {
            std::string prefix = prefix_of(dir.path(), lane, run);
            EXPECT_EQ(read_text(prefix + ".code"), "0") << prefix << ": " << read_text(prefix + ".err");
            if (run % 2 == 0) generated.insert(read_text(prefix + ".out"));
        }
    EXPECT_EQ(generated.size(), static_cast<size_t>(kLanes * kRuns / 2));

    ASSERT_EQ(run_tad({"snapshots", "--json", "--work-dir", work}, dir.path() + "/list"), 0);
    tad::Json list = tad::Json::parse(read_text(dir.path() + "/list.out"), "tad snapshots --json");
    std::set<std::string> ids;
    std::set<int64_t> seqs;
    size_t verified = 0, passed = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        ids.insert(list[i].at("id").str());
        seqs.insert(list[i].at("seq").integer());
        verified += list[i].at("has_verify").boolean();
        passed += list[i].at("passed").is_bool() && list[i].at("passed").boolean();
    }
    EXPECT_EQ(ids.size(), static_cast<size_t>(kLanes * kRuns)) << list.dump(true);
    EXPECT_EQ(seqs.size(), static_cast<size_t>(kLanes * kRuns));
    for (const std::string &id : generated) EXPECT_EQ(ids.count(id.substr(0, id.size() - 1)), 1u) << id;
    EXPECT_EQ(verified, static_cast<size_t>(kLanes * kRuns / 2)) << list.dump(true);
    EXPECT_EQ(passed, verified);
}

namespace {

std::string generate_in(tad_session *s, const char *dims) {
    tad_generate_options g = TAD_GENERATE_OPTIONS_INIT;
    g.dims_json = dims;
    char *id = nullptr;
    EXPECT_EQ(tad_generate(s, &g, &id), TAD_OK) << tad_error_last();
    std::string text = id ? id : "";
    tad_string_free(id);
    return text;
}

}  // namespace

// Another session moving `current` on disk does not change what this one works on: its snapshot
// derives from its own candidate.
TEST(SharedWorkDir, EachSessionKeepsItsOwnCandidate) {
    REQUIRE_TORCH();
    TempDir dir;
    std::string work = dir.path() + "/w";
    tad_session_options o = TAD_SESSION_OPTIONS_INIT;
    o.work_dir = work.c_str();
    o.python = kPython;
    tad_session *a = nullptr, *b = nullptr;
    ASSERT_EQ(tad_session_new(&o, &a), TAD_OK) << tad_error_last();
    ASSERT_EQ(tad_session_new(&o, &b), TAD_OK) << tad_error_last();
    for (tad_session *s : {a, b})
        ASSERT_EQ(tad_load_forward(s, TAD_SOURCE_DIR "/examples/gelu.py", nullptr), TAD_OK) << tad_error_last();
    std::string mine = generate_in(a, R"({"n": 100})");
    std::string theirs = generate_in(b, R"({"n": 200})");
    EXPECT_NE(mine, theirs);
    char *snap = nullptr;
    ASSERT_EQ(tad_snapshot(a, "mine", &snap), TAD_OK) << tad_error_last();
    std::string snapshot = snap;
    tad_string_free(snap);
    char *list = nullptr;
    ASSERT_EQ(tad_snapshot_list(a, &list), TAD_OK) << tad_error_last();
    tad::Json snapshots = tad::Json::parse(list, "snapshot list");
    tad_string_free(list);
    std::string parent;
    for (size_t i = 0; i < snapshots.size(); ++i) {
        if (snapshots[i].at("id").str() == snapshot) parent = snapshots[i].at("parent").str();
    }
    EXPECT_EQ(parent, mine);
    tad_session_free(a);
    tad_session_free(b);
}
