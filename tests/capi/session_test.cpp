// The C ABI's checks on a live session: NULL out pointers and bad options fail before the session
// is asked anything, and a fresh session directory has no snapshots to list or roll back to.
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <string>

#include "tad.h"
#include "temp_dir.h"

namespace {

class CApiSession : public ::testing::Test {
protected:
    void SetUp() override {
        tad_session_options o = TAD_SESSION_OPTIONS_INIT;
        std::string work = dir_.path() + "/work";
        o.work_dir = work.c_str();
        ASSERT_EQ(tad_session_new(&o, &s_), TAD_OK) << tad_error_last();
        ASSERT_NE(s_, nullptr);
    }
    void TearDown() override { tad_session_free(s_); }

    TempDir dir_;
    tad_session *s_ = nullptr;
};

}  // namespace

TEST_F(CApiSession, NullArgumentsAreNamed) {
    EXPECT_EQ(tad_load_forward(s_, nullptr, "x = 1\n"), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_load_forward: path is NULL");
    EXPECT_EQ(tad_candidate_source(s_, nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_candidate_source: out_source is NULL");
    EXPECT_EQ(tad_verify(s_, nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_verify: out_report is NULL");
    EXPECT_EQ(tad_bench(s_, nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_bench: out_report is NULL");
    EXPECT_EQ(tad_rollback(s_, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_rollback: id is NULL");
    EXPECT_EQ(tad_snapshot_list(s_, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_snapshot_list: out_json is NULL");
}

TEST_F(CApiSession, UnsupportedOptionsVersions) {
    char *out = nullptr;
    tad_generate_options g = TAD_GENERATE_OPTIONS_INIT;
    g.version = 0;
    EXPECT_EQ(tad_generate(s_, &g, &out), TAD_ERR_INVALID_ARGUMENT);
    const std::string library = tad_version();
    EXPECT_EQ(tad_error_last(),
              "tad_generate: unsupported options version 0 (libtad " + library + " knows versions 1 to 3)");
    tad_verify_options v = TAD_VERIFY_OPTIONS_INIT;
    v.version = 99;
    EXPECT_EQ(tad_verify(s_, &v, &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_verify: unsupported options version 99 (libtad " + library + " knows version 1)");
    tad_bench_options b = TAD_BENCH_OPTIONS_INIT;
    b.version = TAD_BENCH_OPTIONS_VERSION + 1;
    EXPECT_EQ(tad_bench(s_, &b, &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_bench: unsupported options version 2 (libtad " + library + " knows version 1)");
    EXPECT_EQ(out, nullptr);
}

// A caller built against version 1 passes a struct that ends before `loops`: it is accepted and
// nothing past its end is read (an exactly sized heap block, so sanitizer builds would catch it).
TEST_F(CApiSession, VersionOneGenerateOptionsStillWork) {
    struct V1 {
        unsigned int version;
        const char *backend, *dims_json, *launch_json;
    };
    auto *g = static_cast<V1 *>(std::malloc(sizeof(V1)));
    *g = V1{1, nullptr, nullptr, nullptr};
    char *out = nullptr;
    EXPECT_EQ(tad_generate(s_, reinterpret_cast<tad_generate_options *>(g), &out), TAD_ERR_STATE);
    EXPECT_STREQ(tad_error_last(), "tad_generate: no forward file loaded (call tad_load_forward first)");
    std::free(g);
}

// What follows a version 1 struct is not `loops`: a caller's next variable, here a policy that
// does not exist, is never read (the launch record, read after the policy, fails instead). Version
// 2 reads it.
TEST_F(CApiSession, VersionOneGenerateOptionsAreReadUpToTheirEnd) {
    ASSERT_EQ(tad_load_forward(s_, TAD_SOURCE_DIR "/examples/gelu.py", nullptr), TAD_OK) << tad_error_last();
    struct {
        unsigned int version;
        const char *backend, *dims_json, *launch_json;
        const char *next;
    } g = {1, nullptr, nullptr, "not json", "no such policy"};
    char *out = nullptr;
    EXPECT_EQ(tad_generate(s_, reinterpret_cast<tad_generate_options *>(&g), &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "launch record: invalid JSON near byte 0");
    g.version = 2;
    EXPECT_EQ(tad_generate(s_, reinterpret_cast<tad_generate_options *>(&g), &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(),
                 "tad_generate: unknown loops policy 'no such policy' (available: recompute, tape, auto)");
    EXPECT_EQ(out, nullptr);
}

TEST_F(CApiSession, NegativeOptionValues) {
    char *out = nullptr;
    tad_verify_options v = TAD_VERIFY_OPTIONS_INIT;
    v.max_elements = -1;
    EXPECT_EQ(tad_verify(s_, &v, &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_verify: max_elements must not be negative");
    tad_bench_options b = TAD_BENCH_OPTIONS_INIT;
    b.reps = -5;
    EXPECT_EQ(tad_bench(s_, &b, &out), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_bench: reps must not be negative");
}

TEST_F(CApiSession, FreshDirectoryHasNoSnapshots) {
    char *list = nullptr;
    ASSERT_EQ(tad_snapshot_list(s_, &list), TAD_OK) << tad_error_last();
    ASSERT_NE(list, nullptr);
    std::string text = list;
    tad_string_free(list);
    text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n'; }), text.end());
    EXPECT_EQ(text, "[]");

    EXPECT_EQ(tad_rollback(s_, "9999-00000000"), TAD_ERR_NOT_FOUND);
    EXPECT_STREQ(tad_error_last(), "unknown snapshot '9999-00000000'");
}
