// The C ABI without a pipeline: version, status names, the thread-local error, options structs and
// the NULL-argument checks that every entry point makes before the session is touched.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "tad.h"

namespace {

int invalid_call() { return tad_session_options_init(nullptr); }

}  // namespace

TEST(CApi, VersionMatchesHeaderMacros) {
    char want[64];
    std::snprintf(want, sizeof want, "%d.%d.%d", TAD_VERSION_MAJOR, TAD_VERSION_MINOR, TAD_VERSION_PATCH);
    EXPECT_STREQ(tad_version(), want);
}

TEST(CApi, StatusNames) {
    EXPECT_STREQ(tad_status_name(TAD_OK), "TAD_OK");
    EXPECT_STREQ(tad_status_name(TAD_ERR_INVALID_ARGUMENT), "TAD_ERR_INVALID_ARGUMENT");
    EXPECT_STREQ(tad_status_name(TAD_ERR_IO), "TAD_ERR_IO");
    EXPECT_STREQ(tad_status_name(TAD_ERR_SYNTAX), "TAD_ERR_SYNTAX");
    EXPECT_STREQ(tad_status_name(TAD_ERR_UNSUPPORTED), "TAD_ERR_UNSUPPORTED");
    EXPECT_STREQ(tad_status_name(TAD_ERR_NO_KERNEL), "TAD_ERR_NO_KERNEL");
    EXPECT_STREQ(tad_status_name(TAD_ERR_WORKER), "TAD_ERR_WORKER");
    EXPECT_STREQ(tad_status_name(TAD_ERR_TIMEOUT), "TAD_ERR_TIMEOUT");
    EXPECT_STREQ(tad_status_name(TAD_ERR_MISMATCH), "TAD_ERR_MISMATCH");
    EXPECT_STREQ(tad_status_name(TAD_ERR_NOT_FOUND), "TAD_ERR_NOT_FOUND");
    EXPECT_STREQ(tad_status_name(TAD_ERR_STATE), "TAD_ERR_STATE");
    EXPECT_STREQ(tad_status_name(TAD_ERR_CANCELLED), "TAD_ERR_CANCELLED");
    EXPECT_STREQ(tad_status_name(TAD_ERR_NO_GPU), "TAD_ERR_NO_GPU");
    EXPECT_STREQ(tad_status_name(TAD_ERR_INTERNAL), "TAD_ERR_INTERNAL");
    EXPECT_STREQ(tad_status_name(-13), "TAD_UNKNOWN_STATUS");
    EXPECT_STREQ(tad_status_name(1), "TAD_UNKNOWN_STATUS");
}

TEST(CApi, ErrorLastIsEmptyOnAFreshThread) {
    ASSERT_EQ(invalid_call(), TAD_ERR_INVALID_ARGUMENT);  // this thread has an error now
    std::string seen = "unset";
    std::thread([&] { seen = tad_error_last(); }).join();
    EXPECT_EQ(seen, "");
}

TEST(CApi, ErrorLastSurvivesSuccessfulCalls) {
    ASSERT_EQ(invalid_call(), TAD_ERR_INVALID_ARGUMENT);
    tad_verify_options v;
    ASSERT_EQ(tad_verify_options_init(&v), TAD_OK);
    tad_string_free(nullptr);
    EXPECT_STREQ(tad_error_last(), "tad_session_options_init: opts is NULL");
}

TEST(CApi, ErrorLastIsPerThread) {
    ASSERT_EQ(tad_bench_options_init(nullptr), TAD_ERR_INVALID_ARGUMENT);
    std::thread([] { EXPECT_EQ(tad_generate_options_init(nullptr), TAD_ERR_INVALID_ARGUMENT); }).join();
    EXPECT_STREQ(tad_error_last(), "tad_bench_options_init: opts is NULL");
}

TEST(CApi, OptionsInitFunctionsMatchMacros) {
    tad_session_options s;
    tad_generate_options g;
    tad_verify_options v;
    tad_bench_options b;
    // Garbage first, so that a function leaving a field alone is caught.
    std::memset(&s, 0xab, sizeof s);
    std::memset(&g, 0xab, sizeof g);
    std::memset(&v, 0xab, sizeof v);
    std::memset(&b, 0xab, sizeof b);
    ASSERT_EQ(tad_session_options_init(&s), TAD_OK);
    ASSERT_EQ(tad_generate_options_init(&g), TAD_OK);
    ASSERT_EQ(tad_verify_options_init(&v), TAD_OK);
    ASSERT_EQ(tad_bench_options_init(&b), TAD_OK);
    tad_session_options s0 = TAD_SESSION_OPTIONS_INIT;
    EXPECT_EQ(s.version, s0.version);
    EXPECT_EQ(s.version, static_cast<unsigned>(TAD_SESSION_OPTIONS_VERSION));
    EXPECT_EQ(s.work_dir, nullptr);
    EXPECT_EQ(s.python, nullptr);
    EXPECT_EQ(s.device_index, 0);
    EXPECT_EQ(s.worker_timeout_s, 0.0);
    EXPECT_EQ(s.startup_timeout_s, 0.0);
    EXPECT_EQ(s.progress, nullptr);
    EXPECT_EQ(s.progress_payload, nullptr);
    EXPECT_EQ(g.version, static_cast<unsigned>(TAD_GENERATE_OPTIONS_VERSION));
    EXPECT_EQ(g.backend, nullptr);
    EXPECT_EQ(g.dims_json, nullptr);
    EXPECT_EQ(g.launch_json, nullptr);
    EXPECT_EQ(g.loops, nullptr);
    EXPECT_EQ(v.version, static_cast<unsigned>(TAD_VERIFY_OPTIONS_VERSION));
    EXPECT_EQ(v.cpu, 0);
    EXPECT_EQ(v.dims_json, nullptr);
    EXPECT_EQ(v.dtypes, nullptr);
    EXPECT_EQ(v.max_elements, 0);
    EXPECT_EQ(v.seed, 0u);
    EXPECT_EQ(b.version, static_cast<unsigned>(TAD_BENCH_OPTIONS_VERSION));
    EXPECT_EQ(b.dims_json, nullptr);
    EXPECT_EQ(b.dtypes, nullptr);
    EXPECT_EQ(b.reps, 0);
}

TEST(CApi, SessionNewChecksItsArguments) {
    EXPECT_EQ(tad_session_new(nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: out is NULL");

    tad_session *s = reinterpret_cast<tad_session *>(&s);  // must be cleared on failure
    tad_session_options o = TAD_SESSION_OPTIONS_INIT;
    o.version = 0;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: unsupported options version 0");
    EXPECT_EQ(s, nullptr);
    o.version = TAD_SESSION_OPTIONS_VERSION + 1;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(tad_error_last()),
              "tad_session_new: unsupported options version " + std::to_string(TAD_SESSION_OPTIONS_VERSION + 1));

    o.version = TAD_SESSION_OPTIONS_VERSION;
    o.device_index = -1;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: device_index must not be negative");
    o.device_index = 0;
    o.worker_timeout_s = -1;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: worker_timeout_s must be a positive number of seconds, got -1");
    o.worker_timeout_s = 0;
    o.startup_timeout_s = std::numeric_limits<double>::infinity();
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: startup_timeout_s must be a positive number of seconds, got inf");
}

TEST(CApi, NullSessionIsAnInvalidArgumentNamingTheFunction) {
    // Every out pointer starts at a sentinel, so that a call that does not clear it is caught.
    char sentinel = 0;
    char *out = &sentinel;
    auto expect = [&](int status, const char *message) {
        EXPECT_EQ(status, TAD_ERR_INVALID_ARGUMENT) << message;
        EXPECT_STREQ(tad_error_last(), message);
        EXPECT_EQ(out, nullptr) << message;
        out = &sentinel;
    };
    expect(tad_generate(nullptr, nullptr, &out), "tad_generate: session is NULL");
    expect(tad_candidate_source(nullptr, nullptr, &out), "tad_candidate_source: session is NULL");
    expect(tad_verify(nullptr, nullptr, &out), "tad_verify: session is NULL");
    expect(tad_bench(nullptr, nullptr, &out), "tad_bench: session is NULL");
    expect(tad_snapshot(nullptr, "label", &out), "tad_snapshot: session is NULL");
    expect(tad_snapshot_list(nullptr, &out), "tad_snapshot_list: session is NULL");
    EXPECT_EQ(tad_load_forward(nullptr, "f.py", nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_load_forward: session is NULL");
    EXPECT_EQ(tad_rollback(nullptr, "0001-00000000"), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_rollback: session is NULL");
    tad_session_free(nullptr);
    tad_string_free(nullptr);
}
