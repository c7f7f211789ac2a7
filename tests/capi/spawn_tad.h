// Running the `tad` program as a separate process for the fault and concurrency tests: started with
// fork/exec (so a test may signal it), its output in files, the worker on Debian's CPU torch.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tad_test {

inline const char kPython[] = "/usr/bin/python3";

// A forward file's kernel and stub, y = 2x, without make_args: each test adds its own.
inline constexpr char kDoubleForward[] = R"(import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _double(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, 2.0 * tl.load(X + offs, mask=offs < n), mask=offs < n)


@tad.autodiff(grad_inputs=("x",))
def double(x):
    y = torch.empty_like(x)
    _double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y
)";

inline bool torch_available() {
    static const bool ok = std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
    return ok;
}

#define REQUIRE_TORCH()               \
    if (!tad_test::torch_available()) \
    GTEST_SKIP() << "[SKIP] " << tad_test::kPython << " cannot import torch (apt-get install python3-torch)"

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline std::string read_text(const std::string &path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline void write_text(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

// Running, and not a zombie waiting for a parent to reap it.
inline bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    return std::getline(stat, text) && text.find(") Z") == std::string::npos;
}

inline bool gone_within(pid_t pid, double seconds) {
    auto t0 = Clock::now();
    while (running(pid) && seconds_since(t0) < seconds) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !running(pid);
}

// Starts `tad args...` with the worker's interpreter set, its output in `out_prefix`.out/.err.
inline pid_t spawn_tad(const std::vector<std::string> &args, const std::string &out_prefix) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TAD_PYTHON", kPython, 1);
        int out = open((out_prefix + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open((out_prefix + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, 1);
        dup2(err, 2);
        std::string tad = std::string(TAD_BINARY_DIR) + "/tad";
        std::vector<char *> argv{const_cast<char *>(tad.c_str())};
        for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(tad.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

// Runs `tad args...` to its end: its exit code, or -1 when a signal ended it.
inline int run_tad(const std::vector<std::string> &args, const std::string &out_prefix) {
    int status = 0;
    waitpid(spawn_tad(args, out_prefix), &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tad_test
