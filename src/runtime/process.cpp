#include "runtime/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "runtime/child_groups.h"
#include "support/error.h"

extern char **environ;

namespace tad {

namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
    int fd = -1;
    Fd() = default;
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    int release() {
        int f = fd;
        fd = -1;
        return f;
    }
};

std::string os_error(const std::string &what, int err) { return what + ": " + std::strerror(err); }

void make_pipe(Fd &read_end, Fd &write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail(TAD_ERR_WORKER, os_error("cannot create a pipe", errno));
    read_end.fd = fds[0];
    write_end.fd = fds[1];
}

std::string find_env(const std::vector<std::string> &env, const std::string &name) {
    for (const std::string &kv : env)
        if (kv.compare(0, name.size() + 1, name + "=") == 0) return kv.substr(name.size() + 1);
    return "";
}

std::vector<std::string> child_environment(const ProcessOptions &options) {
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e) {
        std::string kv(*e);
        std::string name = kv.substr(0, kv.find('='));
        bool replaced = false;
        for (const auto &[k, v] : options.env) replaced = replaced || k == name;
        if (!replaced) env.push_back(kv);
    }
    for (const auto &[k, v] : options.env) env.push_back(k + "=" + v);
    return env;
}

// execve needs a path; the PATH search happens here because execvp is not safe after fork in a
// multithreaded process.
std::string resolve_program(const std::string &name, const std::string &path_var) {
    if (name.find('/') != std::string::npos) return name;
    std::string path = path_var.empty() ? "/usr/local/bin:/usr/bin:/bin" : path_var;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        std::string dir = path.substr(start, end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        struct stat st;
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = end + 1;
    }
    fail(TAD_ERR_WORKER, "cannot start '" + name + "': not found on PATH");
}

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<long long>(0, std::min<long long>(INT_MAX, left.count() + 1)));
}

Clock::time_point deadline_after(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, 1e9)));
}

// Blocks SIGPIPE in this thread while writing to a pipe whose reader may be gone, and takes back a
// SIGPIPE that our write caused, so that neither the process nor other threads see it.
class SigpipeBlock {
public:
    SigpipeBlock() {
        sigemptyset(&set_);
        sigaddset(&set_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set_, &old_);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    void swallow() {
        if (was_pending_) return;
        struct timespec zero = {0, 0};
        while (sigtimedwait(&set_, nullptr, &zero) < 0 && errno == EINTR) {}
    }

private:
    sigset_t set_, old_;
    bool was_pending_ = false;
};

// Asks the kernel to SIGKILL the (just forked) child when the thread that forked it ends, which
// is when the process ends if that is the main thread: a host killed by SIGKILL (or any signal it
// does not handle) takes the worker with it. From another thread the worker would die with that
// thread, so there the pipe watch in the worker (tad_worker.py) and our exit paths must do.
// Async-signal-safe; false when the parent died before the request took effect.
bool die_with_parent(pid_t parent, bool forked_by_main_thread) {
#ifdef __linux__
    if (forked_by_main_thread && ::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) return ::getppid() == parent;
#endif
    (void)parent;
    (void)forked_by_main_thread;
    return true;
}

}  // namespace

std::string ExitStatus::describe() const {
    return signal ? "signal " + std::to_string(signal) : "code " + std::to_string(code);
}

Process::Process(const ProcessOptions &options) {
    if (options.argv.empty()) fail(TAD_ERR_INVALID_ARGUMENT, "no program to start");
    // Everything the child uses is prepared before fork: after it only async-signal-safe calls.
    std::vector<std::string> env = child_environment(options);
    std::string program = resolve_program(options.argv[0], find_env(env, "PATH"));
    std::vector<char *> argv, envp;
    for (const std::string &a : options.argv) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    for (std::string &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    Fd in_read, in_write, out_read, out_write, exec_read, exec_write, log;
    make_pipe(in_read, in_write);
    make_pipe(out_read, out_write);
    make_pipe(exec_read, exec_write);  // carries errno when exec fails; closed by a good exec
    if (!options.stderr_path.empty()) {
        log.fd = ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log.fd < 0) fail(TAD_ERR_IO, os_error("cannot open " + options.stderr_path, errno));
    }

    pid_t parent = ::getpid();
    bool main_thread = ::syscall(SYS_gettid) == parent;
    pid_t pid = ::fork();
    if (pid < 0) fail(TAD_ERR_WORKER, os_error("cannot fork", errno));
    if (pid == 0) {
        ::setpgid(0, 0);
        if (!die_with_parent(parent, main_thread)) ::_exit(127);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction dfl;
        std::memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        ::sigaction(SIGPIPE, &dfl, nullptr);
        ::dup2(in_read.fd, 0);
        ::dup2(out_write.fd, 1);
        if (log.fd >= 0) ::dup2(log.fd, 2);
        if (options.data_limit_bytes > 0) {
            const struct rlimit limit = {options.data_limit_bytes, options.data_limit_bytes};
            ::setrlimit(RLIMIT_DATA, &limit);
        }
#ifdef SYS_close_range
        // Descriptors the host program opened without O_CLOEXEC must not reach the worker.
        ::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
#endif
        ::execve(program.c_str(), argv.data(), envp.data());
        int err = errno;
        ssize_t ignored = ::write(exec_write.fd, &err, sizeof err);
        (void)ignored;
        ::_exit(127);
    }
    pid_ = pid;
    ::setpgid(pid, pid);  // also here: whichever of parent and child runs first sets it
    register_group(pid);
    exec_write.reset();
    int err = 0;
    ssize_t n;
    while ((n = ::read(exec_read.fd, &err, sizeof err)) < 0 && errno == EINTR) {}
    if (n == static_cast<ssize_t>(sizeof err)) {
        reap();
        fail(TAD_ERR_WORKER, os_error("cannot start '" + options.argv[0] + "'", err));
    }
    stdin_fd_ = in_write.release();
    stdout_fd_ = out_read.release();
    ::fcntl(stdin_fd_, F_SETFL, ::fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
}

Process::~Process() {
    kill();
    if (stdin_fd_ >= 0) ::close(stdin_fd_);
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

Process::Io Process::write_line(const std::string &line, double timeout_s) {
    if (stdin_fd_ < 0) return Io::closed;
    std::string data = line + "\n";
    auto deadline = deadline_after(timeout_s);
    SigpipeBlock sigpipe;
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(stdin_fd_, data.data() + done, data.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EPIPE) {
            sigpipe.swallow();
            return Io::closed;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            fail(TAD_ERR_WORKER, os_error("cannot write to the worker", errno));
        struct pollfd p = {stdin_fd_, POLLOUT, 0};
        int r = ::poll(&p, 1, remaining_ms(deadline));
        if (r < 0 && errno != EINTR) fail(TAD_ERR_WORKER, os_error("poll", errno));
        if (r == 0) return Io::timeout;
    }
    return Io::ok;
}

Process::Io Process::read_line(std::string &line, double timeout_s) {
    auto deadline = deadline_after(timeout_s);
    for (;;) {
        size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return Io::ok;
        }
        if (stdout_fd_ < 0) return Io::closed;
        struct pollfd p = {stdout_fd_, POLLIN, 0};
        int r = ::poll(&p, 1, remaining_ms(deadline));
        if (r < 0 && errno != EINTR) fail(TAD_ERR_WORKER, os_error("poll", errno));
        if (r == 0) return Io::timeout;
        if (r < 0) continue;
        char chunk[65536];
        ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
        if (n > 0) {
            buffer_.append(chunk, static_cast<size_t>(n));
        } else if (n == 0) {
            ::close(stdout_fd_);
            stdout_fd_ = -1;
        } else if (errno != EINTR && errno != EAGAIN) {
            fail(TAD_ERR_WORKER, os_error("cannot read from the worker", errno));
        }
    }
}

std::optional<ExitStatus> Process::exited() {
    if (!status_) {
        // WNOWAIT leaves the child a zombie, so its process group id stays ours to kill: whatever
        // it started (compilers, ...) goes with it.
        siginfo_t info;
        std::memset(&info, 0, sizeof info);
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) {
            ::kill(-pid_, SIGKILL);
            reap();
        }
    }
    return status_;
}

ExitStatus Process::wait(double timeout_s) {
    auto deadline = deadline_after(timeout_s);
    while (!exited() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill();
    return *status_;
}

void Process::kill() {
    if (status_) return;
    ::kill(-pid_, SIGKILL);
    reap();
}

void Process::reap() {
    unregister_group(pid_);
    int st = 0;
    pid_t r;
    while ((r = ::waitpid(pid_, &st, 0)) < 0 && errno == EINTR) {}
    ExitStatus s;
    if (r != pid_) {  // reaped elsewhere (SIGCHLD ignored by the host): the status is unknown
        status_ = s;
        return;
    }
    if (WIFSIGNALED(st))
        s.signal = WTERMSIG(st);
    else
        s.code = WEXITSTATUS(st);
    status_ = s;
}

}  // namespace tad
