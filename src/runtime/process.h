// A child process in its own process group, talking over stdin/stdout pipes, line by line.
// Used for the Python worker; kept free of protocol details so that it can be tested with /bin/sh.
// The child does not outlive us: its group is killed by the destructor, by kill_all_groups()
// (child_groups.h, from a host's signal handler) and at exit(); on Linux the kernel kills the child when we die of a
// signal (docs/worker-protocol.md, "Lifetime").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tad {

struct ProcessOptions {
    std::vector<std::string> argv;  // argv[0] is searched on PATH when it has no '/'
    std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
    std::string stderr_path;  // the child's stderr is appended there; empty: inherited
    uint64_t data_limit_bytes = 0;  // the child's RLIMIT_DATA (heap, private writable mappings); 0: ours
};

struct ExitStatus {
    int code = -1;  // exit code, or -1 when a signal ended the child
    int signal = 0;  // the signal that ended it, or 0
    std::string describe() const;  // "code 1" or "signal 9"
};

class Process {
public:
    // Starts the child; a tad::Error (TAD_ERR_WORKER) when it cannot be started, exec included.
    explicit Process(const ProcessOptions &options);
    // Kills the whole group and reaps the child if it is still there.
    ~Process();
    Process(const Process &) = delete;
    Process &operator=(const Process &) = delete;

    pid_t pid() const { return pid_; }

    enum class Io { ok, timeout, closed };
    // Writes `line` and a newline. `closed`: the child no longer reads (it exited).
    Io write_line(const std::string &line, double timeout_s);
    // Reads up to the next newline (not included). `closed`: end of output, the child is gone.
    Io read_line(std::string &line, double timeout_s);

    // The exit status once the child has ended, without waiting.
    std::optional<ExitStatus> exited();
    // Waits up to `timeout_s` for the child to end, then kills the group; the exit status.
    ExitStatus wait(double timeout_s);
    // SIGKILL to the whole process group, then reaps the child.
    void kill();

private:
    void reap();  // waits for the child and records its status

    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    std::string buffer_;  // read but not yet returned
    std::optional<ExitStatus> status_;
};

}  // namespace tad
