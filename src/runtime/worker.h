// The Python worker (python/tad_worker.py) seen from C++: one process, JSON lines over pipes, as
// documented in docs/worker-protocol.md. Crashes, hangs and cancellation kill the process; the
// next request starts a fresh one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/error.h"
#include "support/json.h"

namespace tad {

class Process;

struct WorkerOptions {
    std::string python = "python3";
    std::string mode = "auto";  // "cpu" | "gpu" | "auto"
    int device = 0;  // CUDA device index
    double startup_timeout_s = 120;  // to import torch and triton and answer 'hello'
    double request_timeout_s = 600;  // limit of a request that names none
    std::string log_path;  // the worker's stderr, appended; empty: a temporary file
    // Before each request, a log grown past this many bytes moves to "<log_path>.1" (replacing an
    // older one) and starts empty; 0: unbounded.
    size_t log_limit_bytes = 16u << 20;
    uint64_t memory_limit_bytes = 0;  // the worker's RLIMIT_DATA (host heap); 0: none
    std::string python_dir;  // where tad_worker.py lives; empty: python_dir()
    std::vector<std::pair<std::string, std::string>> env;  // added to the worker's environment
};

// Called for each progress line; returning false cancels the request (TAD_ERR_CANCELLED).
using ProgressFn = std::function<bool(const std::string &message, double fraction)>;

// An error reply of the worker. what() is "<kind>: <message>".
class WorkerError : public Error {
public:
    WorkerError(int status, std::string kind, const std::string &message, std::string traceback)
        : Error(status, kind + ": " + message), kind_(std::move(kind)), traceback_(std::move(traceback)) {}
    const std::string &kind() const { return kind_; }
    const std::string &traceback() const { return traceback_; }

private:
    std::string kind_, traceback_;
};

class Worker {
public:
    explicit Worker(WorkerOptions options);
    ~Worker();  // asks the worker to shut down; kills it if it does not in a few seconds
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    // Starts the worker if none is running and greets it ('hello'). Errors as for request().
    void start();
    bool running() const { return process_ != nullptr; }
    const WorkerOptions &options() const { return options_; }
    // The 'hello' result of the running worker; an invalid ref when none runs.
    JsonRef hello() const { return hello_; }

    // Sends `cmd` with `args` (a JSON object) and returns the reply's result, starting a worker
    // first if none runs. timeout_s 0: options.request_timeout_s. Throws WorkerError for an error
    // reply (TAD_ERR_NO_GPU for kind no_gpu, else TAD_ERR_WORKER), and tad::Error with
    // TAD_ERR_TIMEOUT, TAD_ERR_WORKER (crash, garbage) or TAD_ERR_CANCELLED after killing it.
    Json request(const std::string &cmd, Json args = Json::object(), const ProgressFn &progress = {},
                 double timeout_s = 0);

    // Shuts the worker down (politely, then by force); the next request starts a new one.
    void stop();

    const std::string &log_path() const { return log_path_; }

private:
    Json exchange(const std::string &cmd, Json args, const ProgressFn &progress, double timeout_s);
    [[noreturn]] void abandon(int status, const std::string &message);
    [[noreturn]] void crashed(const std::string &cmd);

    WorkerOptions options_;
    std::string log_path_;
    bool own_log_ = false;
    std::unique_ptr<Process> process_;
    Json hello_;
    long long next_id_ = 0;
};

}  // namespace tad
