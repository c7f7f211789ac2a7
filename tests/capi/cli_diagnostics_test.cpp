// A failure in user code, seen from the `tad` program: which part failed, where, and where the full
// traceback went.
#include <gtest/gtest.h>

#include <string>

#include "spawn_tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

// A forward whose make_args fails in a helper: the error names make_args and the helper's line.
const char kFailing[] = R"(import torch
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


def sizes(dims):
    return dims["size"]


def make_args(dims):
    return (torch.zeros(sizes(dims)),), {}
)";

}  // namespace

// A failure in user code says which part failed and where; the full traceback is in worker.log.
TEST(CliDiagnostics, FailingMakeArgsSaysWhereAndLogsTheTraceback) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string forward = dir.path() + "/failing.py", work = dir.path() + "/w";
    write_text(forward, kFailing);
    EXPECT_EQ(run_tad({"generate", forward, "--dims", R"({"n": 8})", "--work-dir", work, "-q"}, dir.path() + "/tad"),
              4);
    EXPECT_EQ(read_text(dir.path() + "/tad.err"), "tad: error: exception: make_args raised KeyError: 'size' (at " +
                                                      forward + ":22); traceback in " + work + "/worker.log\n");
    std::string log = read_text(work + "/worker.log");
    EXPECT_NE(log.find("Traceback (most recent call last):"), std::string::npos) << log;
    EXPECT_NE(log.find("line 26, in make_args"), std::string::npos) << log;
}
