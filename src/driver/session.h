// The session: one forward file, its candidates and their reports, and the orchestration of
// generate / verify / bench over the pipeline, the worker and the store. The C ABI (src/capi) is a
// thin exception-catching layer over this class; the CLI and all bindings go through the C ABI.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "driver/optimize_options.h"
#include "frontend/kernel_file.h"
#include "retrieve/query.h"
#include "support/json.h"

namespace tad::driver {

struct SessionOptions {
    std::string work_dir = ".tad";
    std::string python;  // empty: $TAD_PYTHON, else "python3"
    int device_index = 0;
    double worker_timeout_s = 600;
    double startup_timeout_s = 120;
    long long worker_memory_mb = 0;  // the workers' RLIMIT_DATA; 0: none
    // (stage, message, fraction) -> false to cancel
    std::function<bool(const std::string &, const std::string &, double)> progress;
};

struct GenerateOptions {
    std::string backend = "ad";  // or "llm": the optimizer (optimize.h)
    std::string dims_json;  // empty: first SWEEP entry
    std::string launch_json;  // empty: trace with the worker
    std::string loops = "auto";  // or "recompute", "tape": ad::LoopPolicy
    OptimizeOptions llm;  // backend "llm" only
};

// A backward module written elsewhere (by a model), to be kept as a snapshot of the loaded forward.
struct CandidateDraft {
    std::string source;
    std::string label;
    std::optional<std::string> parent;
    std::string backend = "llm";
    std::string loops = "auto";
};

struct VerifyOptions {
    bool cpu = false;
    std::string dims_json;  // JSON list; empty: SWEEP
    std::string dtypes = "float32,float16";
    long long max_elements = 1 << 20;
    unsigned seed = 0;
};

struct BenchOptions {
    std::string dims_json;
    std::string dtypes = "float32,float16";
    int reps = 100;
};

// tad_export: the current candidate's backward compiled for the GPU (docs/aot.md).
struct ExportOptions {
    std::string out_dir;
    std::string dims_json;  // a JSON list of dims (or one); empty: SWEEP
    std::string dtypes;  // empty: the file's DTYPES, else float32,float16
};

class Session {
public:
    explicit Session(SessionOptions opts);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    void load_forward(const std::string &path, const std::optional<std::string> &source);
    std::string generate(const GenerateOptions &opts);  // new snapshot id
    std::string candidate_source(const std::string &id) const;  // "" id: current
    std::string candidate_explain(const std::string &id) const;  // "" id: current
    // Reports are JSON (docs/reports.md); `passed` is set from the report.
    std::string verify(const VerifyOptions &opts, bool *passed);
    std::string bench(const BenchOptions &opts);
    // Writes the export into opts.out_dir and returns its report (JSON, docs/reports.md).
    std::string export_kernels(const ExportOptions &opts);
    std::string snapshot(const std::string &label);
    void rollback(const std::string &id);
    std::string snapshot_list() const;
    // The dataset entries closest to the loaded forward (retrieve/query.h).
    std::string retrieve(const tad::retrieve::Options &opts) const;

    struct Impl;  // session_impl.h

    // The optimizer's view (optimize.h). The loaded forward (TAD_ERR_STATE "<what>: no forward file
    // loaded ..." without one), its absolute path and text.
    const frontend::KernelFile &forward(const char *what) const;
    const std::string &forward_path() const;
    const std::string &forward_source() const;
    // The candidate verify and bench use: this session's own, else the directory's `current`.
    std::optional<std::string> current_id() const;
    // Stores `draft` as a snapshot of the loaded forward without making it current; its id.
    std::string add_candidate(const CandidateDraft &draft);
    // No current candidate, as in a fresh work directory (restores a session that had none).
    void clear_current();
    const std::string &work_dir() const;
    // The progress callback; TAD_ERR_CANCELLED "<stage>: cancelled" when it asks to stop.
    void notify(const std::string &stage, const std::string &message, double fraction = -1);
    // The Markdown (or JSON, `json`) report of this session's last optimization; TAD_ERR_STATE
    // before any.
    std::string optimize_report(bool json) const;
    void set_optimize_report(std::string markdown, std::string json);
    // Where the optimizer's prompts get their retrieved pairs (default: retrieved_pairs()).
    void set_pair_provider(PairProvider pairs);
    const PairProvider &pair_provider() const;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace tad::driver
