// Bounded inputs, seen from the `tad` program: what would never end or not fit is refused at once,
// JSON must be one value, and text from files and user code reaches the terminal escaped and cut.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "spawn_tad.h"
#include "tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

const std::string kDouble = kDoubleForward;

struct Outcome {
    int code;  // -1: killed after 30 s (it waited for input that never came)
    std::string out, err;
};

Outcome run(const std::vector<std::string> &args, const std::string &prefix) {
    const pid_t pid = spawn_tad(args, prefix);
    Outcome r{-1, "", ""};
    if (gone_within(pid, 30)) {
        int status = 0;
        waitpid(pid, &status, 0);
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    } else {
        ::kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    r.out = read_text(prefix + ".out");
    r.err = read_text(prefix + ".err");
    return r;
}

}  // namespace

// A FIFO (nobody writing it), /dev/zero and a file over TAD_MAX_FORWARD_BYTES as the forward file.
TEST(CliBounds, ForwardFileThatIsNotABoundedRegularFileIsRefusedAtOnce) {
    TempDir dir;
    const std::string fifo = dir.path() + "/fifo.py", big = dir.path() + "/big.py", w = dir.path() + "/w";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    Outcome r = run({"generate", fifo, "--work-dir", w, "-q"}, dir.path() + "/fifo");
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "tad: error: " + fifo + ": cannot read file: a FIFO, not a regular file\n");
    r = run({"generate", "/dev/zero", "--work-dir", w, "-q"}, dir.path() + "/zero");
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "tad: error: /dev/zero: cannot read file: a character device, not a regular file\n");
    write_text(big, std::string(TAD_MAX_FORWARD_BYTES + 1, '#'));
    r = run({"generate", big, "--work-dir", w, "-q"}, dir.path() + "/big");
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "tad: error: " + big + ": cannot read file: 16777217 bytes, over the limit of 16777216\n");
}

// The same for --launch, whose limit is 256 MiB (docs/cli.md).
TEST(CliBounds, LaunchFileThatIsNotARegularFileIsRefusedAtOnce) {
    TempDir dir;
    const std::string forward = dir.path() + "/double.py", fifo = dir.path() + "/trace.json";
    write_text(forward, kDouble);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string &launch : {fifo, std::string("/dev/zero")}) {
        Outcome r = run({"generate", forward, "--launch", launch, "--work-dir", dir.path() + "/w", "-q"},
                        dir.path() + "/launch");
        EXPECT_EQ(r.code, 3) << launch;
        EXPECT_EQ(r.err, "tad: error: --launch: cannot read '" + launch + "': not a regular file\n");
    }
}

// JSON followed by anything but white space is refused, from the command line and from a file.
TEST(CliBounds, JsonWithTrailingTextIsRefused) {
    TempDir dir;
    const std::string forward = dir.path() + "/double.py", launch = dir.path() + "/trace.json";
    write_text(forward, kDouble);
    write_text(launch, "{\"stub\": \"double\"}\n}");
    Outcome r =
        run({"generate", forward, "--launch", launch, "--work-dir", dir.path() + "/w", "-q"}, dir.path() + "/launch");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "tad: error: launch record: text after the JSON value at byte 19\n");
    r = run({"generate", forward, "--dims", "{\"n\": 8} x", "--work-dir", dir.path() + "/w", "-q"},
            dir.path() + "/dims");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err,
              "tad: error: --dims: expected a JSON object such as '{\"M\": 4, \"N\": 64}' or a non-empty list of "
              "them (see 'tad help')\n");
}

// A file name and an error message holding terminal escape sequences, the message 20000 bytes long:
// progress lines and the error show the escapes spelled out, and the error is cut in its middle
// (its end, where it says where it failed, stays).
TEST(CliBounds, TextFromUserCodeIsEscapedAndCut) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string forward = dir.path() + "/f\x1b[2J.py", w = dir.path() + "/w";
    write_text(forward, std::string(kDouble) +
                            "\n\ndef make_args(dims):\n"
                            "    raise ValueError('\\x1b]0;pwned\\x07' + 'k' * 20000)\n");
    Outcome r = run({"generate", forward, "--dims", "{\"n\": 8}", "--work-dir", w}, dir.path() + "/tad");
    EXPECT_EQ(r.code, 4);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err.substr(0, 300);
    EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("[trace] importing " + dir.path() + "/f\\x1b[2J.py\n"), std::string::npos) << r.err;
    const std::string head = "tad: error: exception: make_args raised ValueError: \\x1b]0;pwned\\x07kkk";
    const size_t at = r.err.find(head);
    ASSERT_NE(at, std::string::npos) << r.err.substr(0, 2000);
    const std::string error = r.err.substr(at);
    EXPECT_LT(error.size(), 8100u);
    EXPECT_NE(error.find("k...["), std::string::npos);
    EXPECT_NE(error.find(" bytes cut]...k"), std::string::npos);
    const std::string tail = "k (at " + dir.path() + "/f\\x1b[2J.py:22); traceback in " + w + "/worker.log\n";
    EXPECT_EQ(error.substr(error.size() - tail.size()), tail);
}

// --worker-memory (tad_session_options.worker_memory_mb) limits the worker's host memory: an
// allocation past it fails in user code, reported as running out of memory.
TEST(CliBounds, WorkerMemoryLimitIsEnforced) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string forward = dir.path() + "/hog.py", w = dir.path() + "/w";
    write_text(forward, std::string(kDouble) +
                            "\n\ndef make_args(dims):\n"
                            "    return (torch.empty(1 << 30),), {}  # 4 GiB, never touched\n");
    Outcome r = run({"generate", forward, "--dims", "{}", "--work-dir", w, "-q", "--worker-memory", "1024"},
                    dir.path() + "/tad");
    EXPECT_EQ(r.code, 4);
    EXPECT_EQ(r.err.rfind("tad: error: oom: make_args raised RuntimeError: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("can't allocate memory: you tried to allocate 4294967296 bytes"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" (at " + forward + ":22); traceback in " + w + "/worker.log\n"), std::string::npos) << r.err;
}
