#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

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
