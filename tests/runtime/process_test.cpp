#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "runtime/child_groups.h"
#include "runtime/process.h"
#include "support/error.h"

using tad::Process;
using tad::ProcessOptions;

namespace {

ProcessOptions shell(const std::string &script) {
    ProcessOptions o;
    o.argv = {"/bin/sh", "-c", script};
    return o;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int open_fd_count() {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (readdir(d)) ++n;
    closedir(d);
    return n;
}

// A process that is gone, or a zombie waiting for init: either way it no longer runs.
bool process_gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return true;
    return text.find(") Z") != std::string::npos;
}

bool gone_within(pid_t pid, double seconds) {
    auto t0 = std::chrono::steady_clock::now();
    while (!process_gone(pid) && seconds_since(t0) < seconds)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return process_gone(pid);
}

// A forked host process that starts `script` as a Process and sends us the first line the script
// prints, then does what `then` says: "pause" (for a signal) or "exit" (exit() without destructors).
struct Host {
    pid_t pid = -1;
    std::string line;
};

Host start_host(const std::string &script, const std::string &then) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    Host h;
    h.pid = fork();
    if (h.pid == 0) {
        close(fds[0]);
        auto *p = new Process(shell(script));  // never destroyed: only the safeguards may kill it
        std::string line;
        if (p->read_line(line, 10) != Process::Io::ok) _exit(3);
        line += "\n";
        if (write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
        if (then == "exit") std::exit(0);
        for (;;) pause();
    }
    close(fds[1]);
    char buf[256];
    ssize_t n = read(fds[0], buf, sizeof buf);
    close(fds[0]);
    if (n > 0) h.line.assign(buf, static_cast<size_t>(n) - 1);
    return h;
}

}  // namespace

TEST(Process, EchoesLines) {
    Process p(shell("while read -r l; do echo \"got $l\"; done"));
    std::string line;
    ASSERT_EQ(p.write_line("one", 5), Process::Io::ok);
    ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
    EXPECT_EQ(line, "got one");
    ASSERT_EQ(p.write_line("two words", 5), Process::Io::ok);
    ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
    EXPECT_EQ(line, "got two words");
    EXPECT_FALSE(p.exited().has_value());
}

TEST(Process, LongLinesArriveWhole) {
    Process p(shell("cat"));
    std::string big(300000, 'x');  // larger than a pipe buffer both ways
    std::thread writer([&] { EXPECT_EQ(p.write_line(big, 10), Process::Io::ok); });
    std::string line;
    EXPECT_EQ(p.read_line(line, 10), Process::Io::ok);
    writer.join();
    EXPECT_EQ(line, big);
}

TEST(Process, ReadTimesOutAndKillEndsTheChild) {
    Process p(shell("sleep 30"));
    std::string line;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(p.read_line(line, 0.3), Process::Io::timeout);
    EXPECT_GE(seconds_since(t0), 0.25);
    EXPECT_LT(seconds_since(t0), 5);
    p.kill();
    ASSERT_TRUE(p.exited().has_value());
    EXPECT_EQ(p.exited()->signal, 9);
    EXPECT_EQ(p.exited()->describe(), "signal 9");
}

TEST(Process, KillTakesTheWholeGroup) {
    Process p(shell("sleep 300 & echo $!; wait"));
    std::string line;
    ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
    pid_t grandchild = std::stoi(line);
    EXPECT_FALSE(process_gone(grandchild));
    p.kill();
    auto t0 = std::chrono::steady_clock::now();
    while (!process_gone(grandchild) && seconds_since(t0) < 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(process_gone(grandchild));
}

TEST(Process, ReportsExitCode) {
    Process p(shell("echo bye; exit 3"));
    std::string line;
    ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
    EXPECT_EQ(line, "bye");
    EXPECT_EQ(p.read_line(line, 5), Process::Io::closed);
    tad::ExitStatus s = p.wait(5);
    EXPECT_EQ(s.code, 3);
    EXPECT_EQ(s.signal, 0);
    EXPECT_EQ(s.describe(), "code 3");
}

TEST(Process, ReportsDeathBySignal) {
    Process p(shell("kill -9 $$"));
    std::string line;
    EXPECT_EQ(p.read_line(line, 5), Process::Io::closed);
    EXPECT_EQ(p.wait(5).describe(), "signal 9");
}

TEST(Process, WritingToAnExitedChildIsNotFatal) {
    Process p(shell("exit 0"));
    p.wait(5);
    Process::Io io = Process::Io::ok;
    for (int i = 0; i < 100 && io == Process::Io::ok; ++i) io = p.write_line("into the void", 1);
    EXPECT_EQ(io, Process::Io::closed);  // EPIPE, and no SIGPIPE killed this test
}

TEST(Process, CannotStartAMissingProgram) {
    try {
        Process p({{"/nonexistent/tad-no-such-program"}, {}, ""});
        FAIL() << "started a missing program";
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_WORKER);
        EXPECT_STREQ(e.what(), "cannot start '/nonexistent/tad-no-such-program': No such file or directory");
    }
    try {
        Process p({{"tad-no-such-program"}, {}, ""});
        FAIL() << "started a missing program";
    } catch (const tad::Error &e) {
        EXPECT_STREQ(e.what(), "cannot start 'tad-no-such-program': not found on PATH");
    }
}

TEST(Process, PassesEnvironmentAndLogsStderr) {
    char path[] = "/tmp/tad-process-test-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    ProcessOptions o = shell("echo \"$TAD_TEST_VALUE\"; echo oops >&2");
    o.env = {{"TAD_TEST_VALUE", "42"}};
    o.stderr_path = path;
    {
        Process p(o);
        std::string line;
        ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
        EXPECT_EQ(line, "42");
        EXPECT_EQ(p.wait(5).code, 0);
    }
    std::ifstream log(path);
    std::stringstream text;
    text << log.rdbuf();
    EXPECT_EQ(text.str(), "oops\n");
    unlink(path);
}

TEST(Process, LeaksNoDescriptorsAndNoZombies) {
    int leaky = open("/dev/null", O_RDONLY);  // no O_CLOEXEC: must not reach the child
    ASSERT_GE(leaky, 0);
    std::string script = "test -e /proc/$$/fd/" + std::to_string(leaky) + " && echo leaked || echo clean";
    int before = open_fd_count();
    for (int i = 0; i < 10; ++i) {
        pid_t pid;
        {
            Process p(shell(script));
            pid = p.pid();
            std::string line;
            ASSERT_EQ(p.read_line(line, 5), Process::Io::ok);
            EXPECT_EQ(line, "clean");
        }
        EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
    }
    EXPECT_EQ(open_fd_count(), before);
    close(leaky);
}

TEST(Process, KillAllGroupsTakesEveryChildAndWhatItStarted) {
    Process a(shell("sleep 300 & echo $!; wait")), b(shell("sleep 300 & echo $!; wait"));
    std::string line_a, line_b;
    ASSERT_EQ(a.read_line(line_a, 5), Process::Io::ok);
    ASSERT_EQ(b.read_line(line_b, 5), Process::Io::ok);
    tad::kill_all_groups();
    EXPECT_TRUE(gone_within(std::stoi(line_a), 2));
    EXPECT_TRUE(gone_within(std::stoi(line_b), 2));
    EXPECT_EQ(a.wait(5).signal, SIGKILL);
    EXPECT_EQ(b.wait(5).signal, SIGKILL);
}

TEST(Process, ChildDiesWithAHostKilledBySigkill) {
    Host host = start_host("echo $$; exec sleep 300", "pause");
    ASSERT_GT(host.pid, 0);
    ASSERT_FALSE(host.line.empty());
    pid_t child = std::stoi(host.line);
    EXPECT_FALSE(process_gone(child));
    kill(host.pid, SIGKILL);
    waitpid(host.pid, nullptr, 0);
    EXPECT_TRUE(gone_within(child, 2));
    kill(child, SIGKILL);  // in case it outlived the host
}

TEST(Process, GroupOfAHostThatExitsIsKilledAtExit) {
    Host host = start_host("sleep 300 & echo $!; wait", "exit");
    ASSERT_GT(host.pid, 0);
    ASSERT_FALSE(host.line.empty());
    pid_t grandchild = std::stoi(host.line);
    int status = 0;
    waitpid(host.pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(gone_within(grandchild, 2));
    kill(grandchild, SIGKILL);
}

// The kernel's parent-death signal follows the thread that forked: a child started from a thread
// that has ended must live on.
TEST(Process, ChildStartedFromAnotherThreadOutlivesThatThread) {
    std::unique_ptr<Process> p;
    std::thread([&] { p = std::make_unique<Process>(shell("while read -r l; do echo \"got $l\"; done")); }).join();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::string line;
    ASSERT_EQ(p->write_line("ping", 5), Process::Io::ok);
    ASSERT_EQ(p->read_line(line, 5), Process::Io::ok);
    EXPECT_EQ(line, "got ping");
}
