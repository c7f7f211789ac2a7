// The C ABI without a pipeline: version, status names, the thread-local error, options structs and
// the NULL-argument checks that every entry point makes before the session is touched.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "tad.h"

namespace {

int invalid_call() { return tad_session_options_init(nullptr, TAD_SESSION_OPTIONS_VERSION); }

std::string library() { return tad_version(); }

// Where version `v` of an options struct ends: the end of the last field it defines.
#define FIELD_END(type, field) (offsetof(type, field) + sizeof(type::field))

// `T` at the start of a buffer whose bytes are all 0xab, so that a write to any byte shows.
template <typename T> struct Guarded {
    Guarded() { std::memset(bytes, 0xab, sizeof bytes); }
    T *opts() { return reinterpret_cast<T *>(bytes); }
    // Whether every byte from `from` to the end of the buffer still holds 0xab.
    bool untouched_from(size_t from) const {
        for (size_t i = from; i < sizeof bytes; ++i)
            if (bytes[i] != 0xab) return false;
        return true;
    }
    alignas(T) unsigned char bytes[sizeof(T) + 32];
};

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
    ASSERT_EQ(tad_verify_options_init(&v, TAD_VERIFY_OPTIONS_VERSION), TAD_OK);
    tad_string_free(nullptr);
    EXPECT_STREQ(tad_error_last(), "tad_session_options_init: opts is NULL");
}

TEST(CApi, ErrorLastIsPerThread) {
    ASSERT_EQ(tad_bench_options_init(nullptr, TAD_BENCH_OPTIONS_VERSION), TAD_ERR_INVALID_ARGUMENT);
    std::thread([] {
        EXPECT_EQ(tad_generate_options_init(nullptr, TAD_GENERATE_OPTIONS_VERSION), TAD_ERR_INVALID_ARGUMENT);
    }).join();
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
    ASSERT_EQ(tad_session_options_init(&s, TAD_SESSION_OPTIONS_VERSION), TAD_OK);
    ASSERT_EQ(tad_generate_options_init(&g, TAD_GENERATE_OPTIONS_VERSION), TAD_OK);
    ASSERT_EQ(tad_verify_options_init(&v, TAD_VERIFY_OPTIONS_VERSION), TAD_OK);
    ASSERT_EQ(tad_bench_options_init(&b, TAD_BENCH_OPTIONS_VERSION), TAD_OK);
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
    EXPECT_EQ(s.worker_memory_mb, 0);
    EXPECT_EQ(g.version, static_cast<unsigned>(TAD_GENERATE_OPTIONS_VERSION));
    EXPECT_EQ(g.backend, nullptr);
    EXPECT_EQ(g.dims_json, nullptr);
    EXPECT_EQ(g.launch_json, nullptr);
    EXPECT_EQ(g.loops, nullptr);
    EXPECT_EQ(g.provider, nullptr);
    EXPECT_EQ(g.model, nullptr);
    EXPECT_EQ(g.base_url, nullptr);
    EXPECT_EQ(g.api_key_env, nullptr);
    EXPECT_EQ(g.max_iterations, 0);
    EXPECT_EQ(g.parallel, 0);
    EXPECT_EQ(g.temperature, 0.0);
    EXPECT_EQ(g.reasoning_effort, nullptr);
    EXPECT_EQ(g.wall_clock_s, 0.0);
    EXPECT_EQ(g.max_tokens, 0);
    EXPECT_EQ(g.max_cost_usd, 0.0);
    EXPECT_EQ(g.usd_per_mtok_input, 0.0);
    EXPECT_EQ(g.usd_per_mtok_output, 0.0);
    EXPECT_EQ(g.max_output_tokens, 0);
    EXPECT_EQ(g.request_timeout_s, 0.0);
    EXPECT_EQ(g.max_retries, 0);
    EXPECT_EQ(g.topk, 0);
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

// A caller built against a header whose tad_generate_options was version 1 has a struct that ends
// before `loops`: initialising it with version 1 writes its fields and nothing past them.
TEST(CApi, OptionsInitOfAnOlderVersionLeavesTheBytesPastItAlone) {
    struct GenerateV1 {
        unsigned int version;
        const char *backend;
        const char *dims_json;
        const char *launch_json;
        unsigned char guard[16];
    };
    static_assert(offsetof(GenerateV1, guard) == offsetof(tad_generate_options, loops), "v1 ends before loops");
    GenerateV1 g;
    std::memset(&g, 0xab, sizeof g);
    ASSERT_EQ(tad_generate_options_init(reinterpret_cast<tad_generate_options *>(&g), 1), TAD_OK) << tad_error_last();
    EXPECT_EQ(g.version, 1u);
    EXPECT_EQ(g.backend, nullptr);
    EXPECT_EQ(g.dims_json, nullptr);
    EXPECT_EQ(g.launch_json, nullptr);
    for (unsigned char c : g.guard) EXPECT_EQ(c, 0xab);
}

// Each init writes the fields of the version it is given, up to the end of the last one: never
// the struct's trailing padding or what follows it.
TEST(CApi, OptionsInitWritesNothingPastTheVersionsFields) {
    Guarded<tad_session_options> s;
    ASSERT_EQ(tad_session_options_init(s.opts(), 1), TAD_OK);
    EXPECT_EQ(s.opts()->progress_payload, nullptr);
    EXPECT_TRUE(s.untouched_from(FIELD_END(tad_session_options, progress_payload)));
    Guarded<tad_generate_options> g1, g2;
    ASSERT_EQ(tad_generate_options_init(g1.opts(), 1), TAD_OK);
    EXPECT_EQ(g1.opts()->launch_json, nullptr);
    EXPECT_TRUE(g1.untouched_from(FIELD_END(tad_generate_options, launch_json)));
    ASSERT_EQ(tad_generate_options_init(g2.opts(), 2), TAD_OK);
    EXPECT_EQ(g2.opts()->loops, nullptr);
    EXPECT_TRUE(g2.untouched_from(FIELD_END(tad_generate_options, loops)));
    Guarded<tad_generate_options> g3;
    ASSERT_EQ(tad_generate_options_init(g3.opts(), 3), TAD_OK);
    EXPECT_EQ(g3.opts()->topk, 0);
    EXPECT_EQ(g3.opts()->model, nullptr);
    EXPECT_TRUE(g3.untouched_from(FIELD_END(tad_generate_options, topk)));
    Guarded<tad_verify_options> v;
    ASSERT_EQ(tad_verify_options_init(v.opts(), 1), TAD_OK);
    EXPECT_EQ(v.opts()->seed, 0u);
    EXPECT_TRUE(v.untouched_from(FIELD_END(tad_verify_options, seed)));
    Guarded<tad_bench_options> b;
    ASSERT_EQ(tad_bench_options_init(b.opts(), 1), TAD_OK);
    EXPECT_EQ(b.opts()->reps, 0);
    EXPECT_TRUE(b.untouched_from(FIELD_END(tad_bench_options, reps)));
}

// Version 0 and versions newer than the library's fail, name the function, and write nothing.
TEST(CApi, OptionsInitRefusesUnknownVersions) {
    Guarded<tad_session_options> s;
    EXPECT_EQ(tad_session_options_init(s.opts(), 0), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_session_options_init: unsupported options version 0 (libtad " + library() +
                                    " knows versions 1 to 2)");
    EXPECT_EQ(tad_session_options_init(s.opts(), 3), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_session_options_init: unsupported options version 3 (libtad " + library() +
                                    " knows versions 1 to 2)");
    EXPECT_TRUE(s.untouched_from(0));
    Guarded<tad_generate_options> g;
    EXPECT_EQ(tad_generate_options_init(g.opts(), 0), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_generate_options_init: unsupported options version 0 (libtad " + library() +
                                    " knows versions 1 to 3)");
    EXPECT_EQ(tad_generate_options_init(g.opts(), 4), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_generate_options_init: unsupported options version 4 (libtad " + library() +
                                    " knows versions 1 to 3)");
    EXPECT_TRUE(g.untouched_from(0));
    Guarded<tad_verify_options> v;
    EXPECT_EQ(tad_verify_options_init(v.opts(), 4000000000u), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_verify_options_init: unsupported options version 4000000000 (libtad " + library() +
                                    " knows version 1)");
    EXPECT_TRUE(v.untouched_from(0));
    Guarded<tad_bench_options> b;
    EXPECT_EQ(tad_bench_options_init(b.opts(), TAD_BENCH_OPTIONS_VERSION + 1), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(),
              "tad_bench_options_init: unsupported options version 2 (libtad " + library() + " knows version 1)");
    EXPECT_TRUE(b.untouched_from(0));
}

TEST(CApi, SessionNewChecksItsArguments) {
    EXPECT_EQ(tad_session_new(nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: out is NULL");

    tad_session *s = reinterpret_cast<tad_session *>(&s);  // must be cleared on failure
    tad_session_options o = TAD_SESSION_OPTIONS_INIT;
    o.version = 0;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(),
              "tad_session_new: unsupported options version 0 (libtad " + library() + " knows versions 1 to 2)");
    EXPECT_EQ(s, nullptr);
    o.version = TAD_SESSION_OPTIONS_VERSION + 1;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(),
              "tad_session_new: unsupported options version 3 (libtad " + library() + " knows versions 1 to 2)");

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
    o.startup_timeout_s = 0;
    o.worker_memory_mb = -1;
    EXPECT_EQ(tad_session_new(&o, &s), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_session_new: worker_memory_mb must not be negative");
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
    expect(tad_candidate_explain(nullptr, nullptr, &out), "tad_candidate_explain: session is NULL");
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
