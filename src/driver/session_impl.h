// The session's state and the helpers its operations share (session.cpp, export.cpp).
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "ad/reverse.h"
#include "driver/session.h"
#include "driver/trace_request.h"
#include "frontend/kernel_file.h"
#include "runtime/worker.h"
#include "store/store.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::driver {

struct Session::Impl {
    SessionOptions opts;
    store::Store store;
    std::unique_ptr<Worker> worker, cpu_worker;
    std::optional<frontend::KernelFile> forward;
    std::string forward_path;  // absolute
    std::string forward_source;
    // The candidate this session made or rolled back to last: other processes sharing the work
    // directory move `current` on disk, and verify must check this session's candidate.
    std::optional<std::string> own_current;
    PairProvider pairs = retrieved_pairs();
    std::string optimize_markdown, optimize_json;  // the last optimization's report

    explicit Impl(SessionOptions o) : opts(std::move(o)), store(store::Store::open(opts.work_dir)) {}

    Worker &get_worker() {
        if (!worker) {
            WorkerOptions w;
            const char *env = std::getenv("TAD_PYTHON");
            w.python = !opts.python.empty() ? opts.python : (env && *env ? env : "python3");
            w.device = opts.device_index;
            w.startup_timeout_s = opts.startup_timeout_s;
            w.request_timeout_s = opts.worker_timeout_s;
            w.memory_limit_bytes = static_cast<uint64_t>(opts.worker_memory_mb) << 20;
            w.log_path = fs::join(opts.work_dir, "worker.log");
            worker = std::make_unique<Worker>(w);
        }
        return *worker;
    }

    // The CPU tier's worker: the stand-in triton runs the generated module's launches on the
    // interpreter, so where the session's worker is a GPU one, a second one runs in cpu mode.
    Worker &get_cpu_worker() {
        Worker &w = get_worker();
        w.start();
        if (w.hello().at("mode").str() == "cpu") return w;
        if (!cpu_worker) {
            WorkerOptions o = w.options();
            o.mode = "cpu";
            o.log_path = fs::join(opts.work_dir, "worker-cpu.log");
            cpu_worker = std::make_unique<Worker>(o);
        }
        return *cpu_worker;
    }

    ProgressFn progress(const std::string &stage) {
        if (!opts.progress) return {};
        return [this, stage](const std::string &m, double f) { return opts.progress(stage, m, f); };
    }

    void report(const std::string &stage, const std::string &message) {
        if (opts.progress && !opts.progress(stage, message, -1)) fail(TAD_ERR_CANCELLED, stage + ": cancelled");
    }

    const frontend::KernelFile &need_forward(const char *what) const {
        if (!forward) fail(TAD_ERR_STATE, std::string(what) + ": no forward file loaded (call tad_load_forward first)");
        return *forward;
    }

    std::optional<std::string> current() const { return own_current ? own_current : store.current(); }

    std::string need_current(const char *what) const {
        auto id = current();
        if (!id) fail(TAD_ERR_STATE, std::string(what) + ": no candidate yet (call tad_generate first)");
        return *id;
    }

    // The file the worker imports for a snapshot: the forward path while it still holds the
    // snapshot's source, otherwise the snapshot's own copy, once its content hash is checked (load).
    std::string import_path(const std::string &id) const {
        if (fs::exists(forward_path) && fs::read_file(forward_path) == forward_source) return forward_path;
        store.load(id);
        return fs::join(fs::join(fs::join(store.work_dir(), "snapshots"), id), "forward.py");
    }

    // The dtypes to check or time: the caller's list, else the file's DTYPES, else float32 and
    // float16 (a forward that does not compile for float16, `tl.exp` of a half tile, says so).
    std::string dtypes_csv(const std::string &given, const std::string &file) {
        if (!given.empty()) return given;
        Json args = Json::object();
        args.set("file", file);
        Json info = get_worker().request("info", std::move(args));
        if (!info.has("dtypes") || info.at("dtypes").is_null()) return "";
        std::string csv;
        for (size_t i = 0; i < info.at("dtypes").size(); ++i) csv += (i ? "," : "") + info.at("dtypes")[i].str();
        return csv;
    }

    Json dims_list(const std::string &dims_json, const std::string &file) {
        if (!dims_json.empty()) {
            Json d = Json::parse(dims_json, "dims");
            if (d.is_object()) {
                Json l = Json::array();
                l.push_copy(d);
                return l;
            }
            return d;
        }
        Json args = Json::object();
        args.set("file", file);
        Json info = get_worker().request("info", std::move(args));
        return Json::copy(info.at("sweep"));
    }

    // The trace of a further SWEEP entry on the meta device: enough to tell whether it is a new
    // specialization (pipeline.h: new_specialization) without allocating its tensors (a SWEEP's
    // largest entry took 25 of generate's 27 s). None where make_args or the stub cannot run there
    // (data read on the host, `.item()`): the entry is then traced as it is.
    Json probe_entry(const frontend::KernelFile &kf, JsonRef dims) {
        try {
            return get_worker().request("trace", trace_request(forward_path, kf.stub, dims, false, true),
                                        progress("trace"));
        } catch (const WorkerError &) {
            return Json();
        }
    }

    // The trace of a further SWEEP entry, for its specializations and launches; none (an invalid
    // Json) for an optional entry ("required": false) that runs out of memory.
    Json trace_entry(const frontend::KernelFile &kf, JsonRef dims) {
        try {
            return get_worker().request("trace", trace_request(forward_path, kf.stub, dims, false), progress("trace"));
        } catch (const WorkerError &e) {
            const bool optional = dims.get("required").is_bool() && !dims.get("required").boolean();
            if (!optional || e.kind() != "oom") throw;
        }
        return Json();
    }
};

// The candidate's loops policy by name; TAD_ERR_INVALID_ARGUMENT naming `fn` for another.
inline ad::LoopPolicy loop_policy(const std::string &name, const char *fn) {
    if (name == "recompute") return ad::LoopPolicy::Recompute;
    if (name == "tape") return ad::LoopPolicy::Tape;
    if (name.empty() || name == "auto") return ad::LoopPolicy::Auto;
    fail(TAD_ERR_INVALID_ARGUMENT,
         std::string(fn) + ": unknown loops policy '" + name + "' (available: recompute, tape, auto)");
}

// `csv` ("" : float32 and float16) as the request's "dtypes" list.
inline void push_dtypes(JsonRef args, const std::string &csv) {
    JsonRef dtypes = args.set_array("dtypes");
    std::string d = csv.empty() ? "float32,float16" : csv;
    for (size_t s = 0, e; s <= d.size(); s = e + 1) {
        e = d.find(',', s);
        if (e == std::string::npos) e = d.size();
        if (e > s) dtypes.push(d.substr(s, e - s));
    }
}

}  // namespace tad::driver
