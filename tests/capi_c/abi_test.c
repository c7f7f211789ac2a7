/* The C ABI from C: tad.h must compile as strict C99 (-std=c99 -pedantic -Werror) and its calls
 * must behave as documented without a pipeline. Prints "N passed, M failed"; exits non-zero on
 * failure. */
#include <stdio.h>
#include <string.h>

#include "tad.h"

static int passed_count = 0;
static int failed_count = 0;

static void check(int ok, const char *what, int line) {
    if (ok) {
        passed_count++;
    } else {
        failed_count++;
        fprintf(stderr, "abi_test.c:%d: FAILED: %s (last error: \"%s\")\n", line, what, tad_error_last());
    }
}
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __LINE__)
#define CHECK_MSG(text) CHECK(strcmp(tad_error_last(), (text)) == 0)

static void test_version(void) {
    char want[64];
    sprintf(want, "%d.%d.%d", TAD_VERSION_MAJOR, TAD_VERSION_MINOR, TAD_VERSION_PATCH);
    CHECK(strcmp(tad_version(), want) == 0);
    CHECK(strcmp(tad_status_name(TAD_ERR_NO_GPU), "TAD_ERR_NO_GPU") == 0);
    CHECK(strcmp(tad_status_name(12345), "TAD_UNKNOWN_STATUS") == 0);
}

static void test_options(void) {
    tad_session_options s = TAD_SESSION_OPTIONS_INIT;
    tad_generate_options g = TAD_GENERATE_OPTIONS_INIT;
    tad_verify_options v = TAD_VERIFY_OPTIONS_INIT;
    tad_bench_options b = TAD_BENCH_OPTIONS_INIT;
    tad_session_options s2;
    tad_verify_options v2;
    memset(&s2, 0xab, sizeof s2);
    memset(&v2, 0xab, sizeof v2);
    CHECK(s.version == TAD_SESSION_OPTIONS_VERSION && s.work_dir == NULL && s.progress == NULL);
    CHECK(g.version == TAD_GENERATE_OPTIONS_VERSION && g.backend == NULL && g.loops == NULL);
    CHECK(v.version == TAD_VERIFY_OPTIONS_VERSION && v.cpu == 0 && v.max_elements == 0);
    CHECK(b.version == TAD_BENCH_OPTIONS_VERSION && b.reps == 0);
    CHECK(tad_session_options_init(&s2, TAD_SESSION_OPTIONS_VERSION) == TAD_OK);
    CHECK(s2.version == s.version && s2.python == NULL && s2.device_index == 0 && s2.worker_timeout_s == 0.0 &&
          s2.progress_payload == NULL);
    CHECK(tad_verify_options_init(&v2, TAD_VERIFY_OPTIONS_VERSION) == TAD_OK);
    CHECK(v2.version == v.version && v2.dtypes == NULL && v2.seed == 0);
    CHECK(tad_generate_options_init(NULL, TAD_GENERATE_OPTIONS_VERSION) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_generate_options_init: opts is NULL");
}

/* tad_generate_options as a caller built against version 1 of it declares it (it ends before
 * `loops`), followed by bytes that must stay as they are. */
struct generate_options_v1 {
    unsigned int version;
    const char *backend;
    const char *dims_json;
    const char *launch_json;
};
struct guarded_v1 {
    struct generate_options_v1 opts;
    unsigned char guard[16];
};

static int all_bytes(const void *p, size_t n, unsigned char value) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++)
        if (b[i] != value) return 0;
    return 1;
}

static void test_versioned_init(void) {
    struct guarded_v1 old;
    tad_session_options s;
    tad_generate_options g;
    tad_verify_options v;
    tad_bench_options b;
    char want[160];
    memset(&old, 0xab, sizeof old);
    CHECK(tad_generate_options_init((tad_generate_options *)(void *)&old.opts, 1) == TAD_OK);
    CHECK(old.opts.version == 1 && old.opts.backend == NULL && old.opts.dims_json == NULL &&
          old.opts.launch_json == NULL);
    CHECK(all_bytes(old.guard, sizeof old.guard, 0xab));

    /* Each init with this header's version fills every field with its default. */
    memset(&s, 0xab, sizeof s);
    memset(&g, 0xab, sizeof g);
    memset(&v, 0xab, sizeof v);
    memset(&b, 0xab, sizeof b);
    CHECK(tad_session_options_init(&s, TAD_SESSION_OPTIONS_VERSION) == TAD_OK);
    CHECK(s.version == TAD_SESSION_OPTIONS_VERSION && s.work_dir == NULL && s.python == NULL && s.device_index == 0 &&
          s.worker_timeout_s == 0.0 && s.startup_timeout_s == 0.0 && s.progress == NULL && s.progress_payload == NULL &&
          s.worker_memory_mb == 0);
    CHECK(tad_generate_options_init(&g, TAD_GENERATE_OPTIONS_VERSION) == TAD_OK);
    CHECK(g.version == TAD_GENERATE_OPTIONS_VERSION && g.backend == NULL && g.dims_json == NULL &&
          g.launch_json == NULL && g.loops == NULL);
    CHECK(g.provider == NULL && g.model == NULL && g.base_url == NULL && g.api_key_env == NULL &&
          g.max_iterations == 0 && g.parallel == 0 && g.temperature == 0.0 && g.reasoning_effort == NULL &&
          g.wall_clock_s == 0.0 && g.max_tokens == 0 && g.max_cost_usd == 0.0 && g.usd_per_mtok_input == 0.0 &&
          g.usd_per_mtok_output == 0.0 && g.max_output_tokens == 0 && g.request_timeout_s == 0.0 &&
          g.max_retries == 0 && g.topk == 0);
    CHECK(tad_verify_options_init(&v, TAD_VERIFY_OPTIONS_VERSION) == TAD_OK);
    CHECK(v.version == TAD_VERIFY_OPTIONS_VERSION && v.cpu == 0 && v.dims_json == NULL && v.dtypes == NULL &&
          v.max_elements == 0 && v.seed == 0);
    CHECK(tad_bench_options_init(&b, TAD_BENCH_OPTIONS_VERSION) == TAD_OK);
    CHECK(b.version == TAD_BENCH_OPTIONS_VERSION && b.dims_json == NULL && b.dtypes == NULL && b.reps == 0);

    /* Version 0 and versions newer than the library's fail and write nothing. */
    memset(&g, 0xab, sizeof g);
    CHECK(tad_generate_options_init(&g, 0) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(want, "tad_generate_options_init: unsupported options version 0 (libtad %s knows versions 1 to 3)",
            tad_version());
    CHECK_MSG(want);
    CHECK(tad_generate_options_init(&g, TAD_GENERATE_OPTIONS_VERSION + 1) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(want, "tad_generate_options_init: unsupported options version 4 (libtad %s knows versions 1 to 3)",
            tad_version());
    CHECK_MSG(want);
    CHECK(all_bytes(&g, sizeof g, 0xab));
    memset(&s, 0xab, sizeof s);
    CHECK(tad_session_options_init(&s, 0) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(want, "tad_session_options_init: unsupported options version 0 (libtad %s knows versions 1 to 2)",
            tad_version());
    CHECK_MSG(want);
    CHECK(all_bytes(&s, sizeof s, 0xab));
    memset(&v, 0xab, sizeof v);
    CHECK(tad_verify_options_init(&v, 2) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(want, "tad_verify_options_init: unsupported options version 2 (libtad %s knows version 1)", tad_version());
    CHECK_MSG(want);
    CHECK(all_bytes(&v, sizeof v, 0xab));
    memset(&b, 0xab, sizeof b);
    CHECK(tad_bench_options_init(&b, 7) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(want, "tad_bench_options_init: unsupported options version 7 (libtad %s knows version 1)", tad_version());
    CHECK_MSG(want);
    CHECK(all_bytes(&b, sizeof b, 0xab));
}

static void test_null_arguments(void) {
    tad_session *session = NULL;
    tad_session_options bad = TAD_SESSION_OPTIONS_INIT;
    char sentinel = 0;
    char *out = &sentinel;
    char message[128];
    bad.version = 0;
    CHECK(tad_session_new(&bad, &session) == TAD_ERR_INVALID_ARGUMENT);
    sprintf(message, "tad_session_new: unsupported options version 0 (libtad %s knows versions 1 to 2)", tad_version());
    CHECK_MSG(message);
    CHECK(session == NULL);
    CHECK(tad_session_new(NULL, NULL) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_session_new: out is NULL");
    CHECK(tad_verify(NULL, NULL, &out) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_verify: session is NULL");
    CHECK(out == NULL);
    CHECK(tad_load_forward(NULL, "f.py", NULL) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_load_forward: session is NULL");
    tad_session_free(NULL);
    tad_string_free(NULL);
}

static void test_error_last(void) {
    tad_bench_options b;
    CHECK(tad_error_last() != NULL);
    CHECK(tad_rollback(NULL, "x") == TAD_ERR_INVALID_ARGUMENT);
    CHECK(tad_bench_options_init(&b, TAD_BENCH_OPTIONS_VERSION) == TAD_OK);
    CHECK_MSG("tad_rollback: session is NULL"); /* a success keeps the last failure's message */
}

static void test_reports(void) {
    const char *report =
        "{\"kind\":\"verify\",\"passed\":true,\"results\":[{\"grads\":"
        "[{\"name\":\"x\",\"max_rel_err\":0.25}]}],\"summary\":{\"total\":3}}";
    int passed = -1;
    double value = -1;
    CHECK(tad_report_passed(report, &passed) == TAD_OK && passed == 1);
    CHECK(tad_report_number(report, "summary.total", &value) == TAD_OK && value == 3.0);
    CHECK(tad_report_number(report, "results.0.grads.0.max_rel_err", &value) == TAD_OK && value == 0.25);
    CHECK(tad_report_number(report, "summary.max_rel_err", &value) == TAD_ERR_NOT_FOUND);
    CHECK_MSG("key 'summary.max_rel_err' not in report");
    CHECK(value == 0.25);
    CHECK(tad_report_number(report, "kind", &value) == TAD_ERR_INVALID_ARGUMENT);
    CHECK(tad_report_passed("not json", &passed) == TAD_ERR_INVALID_ARGUMENT);
}

/* Retrieval from C: options, argument checks, the state error, then one query over the repository's
 * dataset (the session directory and the index cache under the build tree). */
static void test_retrieve(void) {
    tad_retrieve_options r = TAD_RETRIEVE_OPTIONS_INIT;
    tad_retrieve_options r2;
    tad_session_options so = TAD_SESSION_OPTIONS_INIT;
    tad_session *session = NULL;
    char sentinel = 0;
    char *out = &sentinel;
    memset(&r2, 0xab, sizeof r2);
    CHECK(r.version == TAD_RETRIEVE_OPTIONS_VERSION && r.topk == 0 && r.min_sim == 0.0 && r.exclude == NULL &&
          r.dataset_dir == NULL && r.cache_dir == NULL);
    CHECK(tad_retrieve_options_init(&r2, TAD_RETRIEVE_OPTIONS_VERSION) == TAD_OK);
    CHECK(r2.version == r.version && r2.topk == 0 && r2.exclude == NULL && r2.cache_dir == NULL);
    CHECK(tad_retrieve(NULL, &r, &out) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_retrieve: session is NULL");
    CHECK(out == NULL);
    CHECK(tad_dataset_list(&r, NULL) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_dataset_list: out_json is NULL");
    CHECK(tad_dataset_import(NULL, NULL, &out) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_dataset_import: source_dir is NULL");

    so.work_dir = TAD_BINARY_DIR "/capi_c_work";
    CHECK(tad_session_new(&so, &session) == TAD_OK);
    CHECK(tad_retrieve(session, NULL, &out) == TAD_ERR_STATE);
    CHECK_MSG("tad_retrieve: no forward file loaded (call tad_load_forward first)");
    CHECK(tad_load_forward(session, TAD_SOURCE_DIR "/examples/layernorm.py", NULL) == TAD_OK);
    r.topk = -1;
    CHECK(tad_retrieve(session, &r, &out) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_retrieve: topk must not be negative");
    r.topk = 2;
    r.min_sim = 1.5;
    CHECK(tad_retrieve(session, &r, &out) == TAD_ERR_INVALID_ARGUMENT);
    CHECK_MSG("tad_retrieve: min_sim must be between -1 and 1, got 1.5");
    r.min_sim = 0.0;
    r.exclude = "rmsnorm\nnothing";
    r.dataset_dir = TAD_SOURCE_DIR "/dataset";
    r.cache_dir = TAD_BINARY_DIR "/capi_c_retrieve_cache";
    CHECK(tad_retrieve(session, &r, &out) == TAD_OK);
    CHECK(out != NULL && strstr(out, "\"kind\":\"retrieve\"") != NULL);
    CHECK(out != NULL && strstr(out, "\"rank\":2") != NULL && strstr(out, "\"rank\":3") == NULL);
    CHECK(out != NULL && strstr(out, "rmsnorm.py") == NULL);
    CHECK(out != NULL && strstr(out, "\"family\":\"norm\"") != NULL);
    tad_string_free(out);
    r.dataset_dir = TAD_BINARY_DIR "/no-such-dataset";
    CHECK(tad_retrieve(session, &r, &out) == TAD_ERR_IO);
    CHECK_MSG(TAD_BINARY_DIR "/no-such-dataset: dataset directory not found");
    tad_session_free(session);
}

int main(void) {
    test_version();
    test_options();
    test_versioned_init();
    test_null_arguments();
    test_error_last();
    test_reports();
    test_retrieve();
    printf("%d passed, %d failed\n", passed_count, failed_count);
    return failed_count == 0 ? 0 : 1;
}
