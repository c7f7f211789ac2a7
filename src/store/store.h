// The session directory: every generated or snapshotted candidate with its sources and reports, and
// which one is current. Layout and crash guarantees are in docs/store.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tad::store {

// What a snapshot holds. kind is "generate" (made by generating a backward) or "snapshot" (saved
// explicitly). The *_json members are JSON text; absent ones are not written.
struct Candidate {
    std::string label;
    std::optional<std::string> parent;  // the snapshot this one was derived from
    std::string forward_path;
    std::string forward_source;
    std::string backend;
    std::string loops;  // how nonlinear loops were reversed: "recompute" (also when absent) or "tape"
    std::string kind;
    std::string backward_source;
    std::optional<std::string> launch_json;
    // How the backward's kernels write each gradient (passes/access.h), as `tad generate --explain`
    // prints it.
    std::optional<std::string> explain;
    std::optional<std::string> verify_json;
    std::optional<std::string> bench_json;
};

// A snapshot's meta.json plus which reports it has.
struct SnapshotInfo {
    std::string id;
    int64_t seq = 0;
    std::string label;
    std::string created;  // ISO 8601 UTC, e.g. "2025-01-31T12:00:00Z"
    std::optional<std::string> parent;
    std::string forward_path;
    std::string backend;
    std::string loops;
    std::string kind;
    std::string forward_hash;  // content_hash of forward.py; empty in snapshots made before it was kept
    bool has_verify = false;
    bool has_bench = false;
    std::optional<bool> passed;  // verify.json's top-level "passed", when it has one
};

class Store {
public:
    // Creates work_dir and its snapshots/ as needed; TAD_ERR_IO when they exist but are not
    // directories or `current` is not a regular file.
    static Store open(const std::string &work_dir);

    // Writes a new snapshot (all or nothing), makes it current (unless `make_current` is false: a
    // candidate kept for the record, such as an LLM's before it is checked) and returns its id,
    // "<seq>-<hash>". TAD_ERR_INVALID_ARGUMENT for an unknown kind or a *_json member that is not
    // JSON.
    std::string add(const Candidate &c, bool make_current = true);
    // TAD_ERR_NOT_FOUND "unknown snapshot '<id>'"; TAD_ERR_IO when its files are damaged, and
    // "<dir>/forward.py: does not match its content hash in meta.json (changed since the snapshot was
    // taken)" when the forward source is not the one stored: the worker would execute it.
    Candidate load(const std::string &id) const;
    // Replaces (or adds) the "verify" or "bench" report of snapshot `id`.
    void set_report(const std::string &id, const std::string &name, const std::string &json);

    // Complete snapshots, oldest first; ones with a missing or damaged meta.json are left out.
    std::vector<SnapshotInfo> list() const;
    // list() as a JSON array of meta objects with has_verify, has_bench and passed (or null).
    std::string list_json() const;

    // The current snapshot; none before the first add or when the named one no longer exists.
    std::optional<std::string> current() const;
    void set_current(const std::string &id);  // TAD_ERR_NOT_FOUND for an unknown id
    void clear_current();  // no current snapshot, as before the first add

    const std::string &work_dir() const { return work_dir_; }

private:
    explicit Store(std::string work_dir) : work_dir_(std::move(work_dir)) {}
    std::string snapshots_dir() const;
    std::string snapshot_dir(const std::string &id) const;  // throws NOT_FOUND unless it exists
    int64_t next_seq() const;

    std::string work_dir_;
};

}  // namespace tad::store
