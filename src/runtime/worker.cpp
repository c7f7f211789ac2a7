#include "runtime/worker.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "runtime/process.h"
#include "runtime/python_dir.h"

namespace tad {

namespace {

using Clock = std::chrono::steady_clock;

const char *const kStartMarker = "=== tad worker starting ===";
const size_t kTailLines = 20;
const double kShutdownGrace_s = 5;

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

double seconds_left(Clock::time_point deadline) {
    return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// The last lines the current worker wrote to stderr (those after the newest start marker).
std::string stderr_tail(const std::string &path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return "";
    const std::streamoff window = 64 * 1024;
    std::streamoff size = in.tellg();
    in.seekg(size > window ? size - window : 0);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t marker = text.rfind(kStartMarker);
    std::istringstream rest(marker == std::string::npos ? text : text.substr(marker));
    std::vector<std::string> lines;
    for (std::string line; std::getline(rest, line);) lines.push_back(line);
    if (marker != std::string::npos) lines.erase(lines.begin());
    while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string::npos) lines.pop_back();
    std::string tail;
    for (size_t i = lines.size() > kTailLines ? lines.size() - kTailLines : 0; i < lines.size(); ++i)
        tail += (tail.empty() ? "" : "\n") + lines[i];
    return tail;
}

// The worker appends (O_APPEND): once the log is emptied its next line starts the fresh file. Called
// between requests, while the worker is idle.
void bound_log(const std::string &path, size_t limit) {
    struct stat st;
    if (limit == 0 || ::stat(path.c_str(), &st) != 0 || static_cast<size_t>(st.st_size) <= limit) return;
    {
        std::ifstream in(path, std::ios::binary);
        std::ofstream old(path + ".1", std::ios::binary | std::ios::trunc);
        old << in.rdbuf();
    }
    if (::truncate(path.c_str(), 0) != 0) fail(TAD_ERR_IO, "cannot empty the worker log " + path);
}

std::string temporary_log() {
    const char *tmp = ::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tad-worker-XXXXXX";
    int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) fail(TAD_ERR_IO, "cannot create a log file for the worker in " + pattern);
    ::close(fd);
    return pattern;
}

}  // namespace

Worker::Worker(WorkerOptions options) : options_(std::move(options)) {
    if (options_.log_path.empty()) {
        log_path_ = temporary_log();
        own_log_ = true;
    } else {
        log_path_ = options_.log_path;
    }
}

Worker::~Worker() {
    try {
        stop();
    } catch (const Error &) {
        // The process is gone either way (Process's destructor kills it); nothing to report to.
    }
    if (own_log_) {
        ::unlink(log_path_.c_str());
        ::unlink((log_path_ + ".1").c_str());
    }
}

void Worker::start() {
    if (process_) return;
    std::string dir = options_.python_dir.empty() ? python_dir() : options_.python_dir;
    bound_log(log_path_, options_.log_limit_bytes);
    {
        std::ofstream log(log_path_, std::ios::app);
        log << kStartMarker << "\n";
    }
    ProcessOptions p;
    p.argv = {options_.python, dir + "/tad_worker.py",         "--mode", options_.mode,
              "--device",      std::to_string(options_.device)};
    p.env = {{"PYTHONDONTWRITEBYTECODE", "1"},
             {"PYTHONUNBUFFERED", "1"},
             {"PYTHONFAULTHANDLER", "1"}};  // a crash in native code leaves a traceback on stderr
    p.env.insert(p.env.end(), options_.env.begin(), options_.env.end());
    p.stderr_path = log_path_;
    p.data_limit_bytes = options_.memory_limit_bytes;
    process_ = std::make_unique<Process>(p);
    try {
        hello_ = exchange("hello", Json::object(), {}, options_.startup_timeout_s);
    } catch (...) {
        process_.reset();
        throw;
    }
}

Json Worker::request(const std::string &cmd, Json args, const ProgressFn &progress, double timeout_s) {
    start();
    bound_log(log_path_, options_.log_limit_bytes);
    return exchange(cmd, std::move(args), progress, timeout_s > 0 ? timeout_s : options_.request_timeout_s);
}

Json Worker::exchange(const std::string &cmd, Json args, const ProgressFn &progress, double timeout_s) {
    if (!args.is_object()) fail(TAD_ERR_INVALID_ARGUMENT, "worker request arguments must be an object");
    long long id = ++next_id_;
    args.set("id", static_cast<int64_t>(id));
    args.set("cmd", cmd);
    auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    std::string timeout_message =
        "worker did not answer '" + cmd + "' within " + seconds_text(timeout_s) + " s; killed";

    switch (process_->write_line(args.dump(), seconds_left(deadline))) {
    case Process::Io::ok: break;
    case Process::Io::timeout: abandon(TAD_ERR_TIMEOUT, timeout_message);
    case Process::Io::closed: crashed(cmd);
    }
    for (;;) {
        std::string line;
        switch (process_->read_line(line, seconds_left(deadline))) {
        case Process::Io::ok: break;
        case Process::Io::timeout: abandon(TAD_ERR_TIMEOUT, timeout_message);
        case Process::Io::closed: crashed(cmd);
        }
        Json reply;
        try {
            reply = Json::parse(line, "worker reply");
        } catch (const Error &) {
            abandon(TAD_ERR_WORKER,
                    "worker wrote a line that is not JSON during '" + cmd + "': " + line.substr(0, 200) + "; killed");
        }
        if (!reply.is_object() || reply.int_or("id", -1) != id)
            abandon(TAD_ERR_WORKER,
                    "worker answered out of turn during '" + cmd + "': " + line.substr(0, 200) + "; killed");
        if (JsonRef p = reply.get("progress"); p.is_object()) {
            if (progress && !progress(p.str_or("message", ""), p.num_or("fraction", -1)))
                abandon(TAD_ERR_CANCELLED, "'" + cmd + "' was cancelled; worker killed");
            continue;
        }
        if (reply.bool_or("restart", false)) {
            // The worker found itself unusable (a poisoned CUDA context) and is exiting.
            process_->wait(kShutdownGrace_s);
            process_.reset();
            hello_ = Json();
        }
        if (reply.bool_or("ok", false)) return Json::copy(reply.get("result"));
        JsonRef error = reply.get("error");
        std::string kind = error.str_or("kind", "exception");
        std::string message = error.str_or("message", ""), traceback = error.str_or("traceback", "");
        // The worker wrote the traceback to its stderr: say where, unless that log dies with us.
        if (!traceback.empty() && !own_log_) message += "; traceback in " + log_path_;
        throw WorkerError(kind == "no_gpu" ? TAD_ERR_NO_GPU : TAD_ERR_WORKER, kind, message, traceback);
    }
}

void Worker::abandon(int status, const std::string &message) {
    process_.reset();
    hello_ = Json();
    fail(status, message);
}

void Worker::crashed(const std::string &cmd) {
    ExitStatus status = process_->wait(kShutdownGrace_s);
    process_.reset();
    hello_ = Json();
    std::string tail = stderr_tail(log_path_);
    fail(TAD_ERR_WORKER, "worker exited (" + status.describe() + ") during '" + cmd +
                             "'; last stderr: " + (tail.empty() ? "(none)" : tail));
}

void Worker::stop() {
    if (!process_) return;
    Json shutdown = Json::object();
    shutdown.set("id", static_cast<int64_t>(++next_id_));
    shutdown.set("cmd", "shutdown");
    if (process_->write_line(shutdown.dump(), kShutdownGrace_s) == Process::Io::ok) process_->wait(kShutdownGrace_s);
    process_.reset();
    hello_ = Json();
}

}  // namespace tad
