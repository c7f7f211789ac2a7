// `tad` killed while user code runs (a make_args that never returns) leaves no worker behind:
// SIGINT, SIGTERM and SIGHUP through its handlers, SIGKILL through the parent-death signal.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "spawn_tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

// A forward whose make_args starts a subprocess, records both pids, and then never returns.
const std::string kLooping = std::string(kDoubleForward) + R"(
import os
import subprocess
import time


def make_args(dims):
    pids = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids")
    child = subprocess.Popen(["sleep", "300"])
    with open(pids + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.rename(pids + ".tmp", pids)
    while True:
        time.sleep(0.05)
)";

struct Killed {
    int status = 0;
    pid_t worker = -1, grandchild = -1;
};

// Runs `tad generate` on the looping forward, waits until make_args runs, sends `sig` to tad.
Killed kill_tad_in_user_code(int sig) {
    TempDir dir;
    write_text(dir.path() + "/looping.py", kLooping);
    pid_t tad = spawn_tad(
        {"generate", dir.path() + "/looping.py", "--dims", R"({"n": 8})", "--work-dir", dir.path() + "/w", "-q"},
        dir.path() + "/tad");
    Killed k;
    auto t0 = Clock::now();
    while (access((dir.path() + "/pids").c_str(), F_OK) != 0 && seconds_since(t0) < 120) {
        if (waitpid(tad, &k.status, WNOHANG) == tad) {
            ADD_FAILURE() << "tad ended first: " << read_text(dir.path() + "/tad.err");
            return k;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::istringstream pids(read_text(dir.path() + "/pids"));
    pids >> k.worker >> k.grandchild;
    kill(tad, sig);
    waitpid(tad, &k.status, 0);
    return k;
}

void expect_no_worker_left(int sig, bool grandchild_too) {
    Killed k = kill_tad_in_user_code(sig);
    ASSERT_GT(k.worker, 0) << "make_args never ran";
    EXPECT_TRUE(WIFSIGNALED(k.status) && WTERMSIG(k.status) == sig) << "tad did not die of signal " << sig;
    EXPECT_TRUE(gone_within(k.worker, 2)) << "worker " << k.worker << " outlived tad (signal " << sig << ")";
    if (grandchild_too) {
        EXPECT_TRUE(gone_within(k.grandchild, 2)) << "what user code started outlived tad (signal " << sig << ")";
    }
    kill(k.worker, SIGKILL);  // whatever the outcome, nothing of the test stays behind
    kill(k.grandchild, SIGKILL);
}

}  // namespace

TEST(CliSignals, SigintKillsTheWorkerGroup) {
    REQUIRE_TORCH();
    expect_no_worker_left(SIGINT, true);
}

TEST(CliSignals, SigtermKillsTheWorkerGroup) {
    REQUIRE_TORCH();
    expect_no_worker_left(SIGTERM, true);
}

TEST(CliSignals, SighupKillsTheWorkerGroup) {
    REQUIRE_TORCH();
    expect_no_worker_left(SIGHUP, true);
}

// SIGKILL cannot be handled: the kernel's parent-death signal takes the worker. What user code
// started may outlive it (docs/worker-protocol.md, "Lifetime").
TEST(CliSignals, SigkillTakesTheWorker) {
    REQUIRE_TORCH();
    expect_no_worker_left(SIGKILL, false);
}
