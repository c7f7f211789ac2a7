#include "handle.h"

#include <climits>
#include <cstdio>
#include <memory>

#include "errors.h"
#include "terminal.h"

namespace tad_cli {

namespace {

// "[verify] 3/8 M=4096 N=1024 float16": the message already counts the steps, so the fraction
// would only repeat it.
int print_progress(const char *stage, const char *message, double, void *payload) {
    std::FILE *out = static_cast<std::FILE *>(payload);
    std::fprintf(out, "[%s] %s\n", printable(stage, 40).c_str(), printable(message, 400).c_str());
    std::fflush(out);
    return 0;
}

struct StringFree {
    void operator()(char *s) const { tad_string_free(s); }
};

// Runs a call that returns a string through `char **out` and takes ownership of it.
template <typename Call> std::string take(int *status, Call &&call) {
    char *raw = nullptr;
    *status = call(&raw);
    std::unique_ptr<char, StringFree> owned(raw);
    return raw ? raw : "";
}

}  // namespace

Session::Session(const Args &args) : Session(args, args.value("--work-dir")) {}

Session::Session(const Args &args, const std::string &work_dir) {
    tad_session_options o = TAD_SESSION_OPTIONS_INIT;
    std::string python = args.value("--python");
    o.work_dir = work_dir.empty() ? nullptr : work_dir.c_str();
    o.python = python.empty() ? nullptr : python.c_str();
    o.device_index = static_cast<int>(args.integer("--device", 0, 0, INT_MAX));
    o.worker_timeout_s = args.seconds("--timeout", 0);
    o.worker_memory_mb = args.integer("--worker-memory", 0, 1, LLONG_MAX);
    if (!args.has("--quiet")) {
        o.progress = print_progress;
        o.progress_payload = stderr;
    }
    check(tad_session_new(&o, &s_));
}

void Session::load(const std::string &path) { check(tad_load_forward(s_, path.c_str(), nullptr)); }

std::string Session::generate(const std::string &dims_json, const std::string &launch_json, const std::string &loops) {
    tad_generate_options o = TAD_GENERATE_OPTIONS_INIT;
    o.loops = loops.empty() ? nullptr : loops.c_str();
    o.dims_json = dims_json.empty() ? nullptr : dims_json.c_str();
    o.launch_json = launch_json.empty() ? nullptr : launch_json.c_str();
    int status = TAD_OK;
    std::string id = take(&status, [&](char **out) { return tad_generate(s_, &o, out); });
    check(status);
    return id;
}

std::string Session::generate(const tad_generate_options &opts) {
    int status = TAD_OK;
    std::string id = take(&status, [&](char **out) { return tad_generate(s_, &opts, out); });
    check(status);
    return id;
}

std::string Session::optimize_report(const char *format) {
    int status = TAD_OK;
    std::string report = take(&status, [&](char **out) { return tad_optimize_report(s_, format, out); });
    return status == TAD_OK ? report : "";
}

std::string Session::source(const std::string &id) {
    int status = TAD_OK;
    std::string src = take(&status, [&](char **out) { return tad_candidate_source(s_, id.c_str(), out); });
    check(status);
    return src;
}

std::string Session::explain(const std::string &id) {
    int status = TAD_OK;
    std::string text = take(&status, [&](char **out) { return tad_candidate_explain(s_, id.c_str(), out); });
    check(status);
    return text;
}

Verified Session::verify(const tad_verify_options &opts) {
    Verified v{TAD_OK, "", ""};
    v.report = take(&v.status, [&](char **out) { return tad_verify(s_, &opts, out); });
    if (v.status == TAD_ERR_MISMATCH)
        v.message = tad_error_last();
    else
        check(v.status);
    return v;
}

std::string Session::bench(const tad_bench_options &opts) {
    int status = TAD_OK;
    std::string report = take(&status, [&](char **out) { return tad_bench(s_, &opts, out); });
    check(status);
    return report;
}

std::string Session::export_kernels(const tad_export_options &opts) {
    int status = TAD_OK;
    std::string report = take(&status, [&](char **out) { return tad_export(s_, &opts, out); });
    check(status);
    return report;
}

void Session::rollback(const std::string &id) { check(tad_rollback(s_, id.c_str())); }

std::string Session::snapshot_list() {
    int status = TAD_OK;
    std::string list = take(&status, [&](char **out) { return tad_snapshot_list(s_, out); });
    check(status);
    return list;
}

std::string Session::retrieve(const tad_retrieve_options &opts) {
    int status = TAD_OK;
    std::string report = take(&status, [&](char **out) { return tad_retrieve(s_, &opts, out); });
    check(status);
    return report;
}

std::string dataset_list(const tad_retrieve_options &opts) {
    int status = TAD_OK;
    std::string list = take(&status, [&](char **out) { return tad_dataset_list(&opts, out); });
    check(status);
    return list;
}

std::string dataset_import(const std::string &source_dir, const std::string &dataset_dir) {
    int status = TAD_OK;
    std::string report = take(&status, [&](char **out) {
        return tad_dataset_import(source_dir.c_str(), dataset_dir.empty() ? nullptr : dataset_dir.c_str(), out);
    });
    check(status);
    return report;
}

}  // namespace tad_cli
