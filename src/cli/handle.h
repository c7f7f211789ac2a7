// The CLI's view of a tad_session: each call either succeeds or throws Failure with the library's
// message, and strings the library allocates are copied and freed at once.
#pragma once

#include <string>

#include "args.h"
#include "tad.h"

namespace tad_cli {

// The outcome of tad_verify: TAD_OK or TAD_ERR_MISMATCH, both with a report.
struct Verified {
    int status;
    std::string report;
    std::string message;  // tad_error_last() when the status is TAD_ERR_MISMATCH
};

class Session {
public:
    // Opens the session with the common options (--work-dir, --python, --device, --timeout);
    // progress lines go to stderr unless -q.
    explicit Session(const Args &args);
    // The same with its own session directory (`tad dataset` keeps one per entry).
    Session(const Args &args, const std::string &work_dir);
    ~Session() { tad_session_free(s_); }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    void load(const std::string &path);
    std::string generate(const std::string &dims_json, const std::string &launch_json, const std::string &loops);
    // tad_generate with the caller's options (backend "llm"); the best snapshot's id.
    std::string generate(const tad_generate_options &opts);
    // The last optimization's report ("markdown" or "json"); "" when there is none.
    std::string optimize_report(const char *format);
    std::string source(const std::string &id);
    std::string explain(const std::string &id);
    // Other statuses than TAD_OK and TAD_ERR_MISMATCH throw.
    Verified verify(const tad_verify_options &opts);
    std::string bench(const tad_bench_options &opts);
    std::string export_kernels(const tad_export_options &opts);
    void rollback(const std::string &id);
    std::string snapshot_list();
    std::string retrieve(const tad_retrieve_options &opts);

private:
    tad_session *s_ = nullptr;
};

// tad_dataset_list and tad_dataset_import, failures thrown as Failure.
std::string dataset_list(const tad_retrieve_options &opts);
std::string dataset_import(const std::string &source_dir, const std::string &dataset_dir);

}  // namespace tad_cli
