// Stubs that launch several kernels: the backward runs the launches in reverse, with one shadow
// buffer per tensor of the call (tests/pipeline/data/chain.py, dataset/layernorm_two_pass.py).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cpu_session.h"
#include "driver/pipeline.h"
#include "driver/session.h"
#include "frontend/parser.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::Refused;
using tad::test::torch_available;

namespace {

// Verifies the session's candidate on the CPU tier; the report, after expecting it to pass.
Json expect_cpu_pass(Session &s) {
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    return report;
}

TEST(ChainCpu, FourLaunchesMatchFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/chain.py");
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    // fill_scale reads no differentiated tensor: it has no backward.
    EXPECT_EQ(src.find("def fill_scale_bwd"), std::string::npos);
    EXPECT_LT(src.find("    # launch 3: finish\n"), src.find("    # launch 1: squash\n"));
    EXPECT_EQ(expect_cpu_pass(*s).at("summary").at("passed").integer(), 2);
}

TEST(ChainCpu, InPlaceUpdatesMatchFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/inplace_chain.py");
    s->generate(GenerateOptions{});
    EXPECT_EQ(expect_cpu_pass(*s).at("summary").at("passed").integer(), 2);
}

// Mutation patterns (tests/pipeline/data/mutation/): stores that overwrite a buffer in the same
// launch (twice at one address, once per loop iteration at one address), an out= stub input
// updated and returned, a scratch temp cleared after its last use. Each must match finite
// differences: the overwritten values get no gradient.
class MutationCpu : public ::testing::TestWithParam<const char *> {};

TEST_P(MutationCpu, MatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/mutation/" + GetParam() + ".py");
    s->generate(GenerateOptions{});
    expect_cpu_pass(*s);
}

INSTANTIATE_TEST_SUITE_P(Data, MutationCpu,
                         ::testing::Values("double_store", "loop_store", "out_param", "clear_after_use"),
                         [](const auto &info) { return std::string(info.param); });

// Reading back what the launch itself wrote, through another parameter, after an atomic add or in a
// later loop iteration, and returning a grad input unchanged: refused, each with its reason.
class MutationRefused : public ::testing::TestWithParam<Refused> {};

TEST_P(MutationRefused, WithItsReason) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    tad::test::expect_refused(std::string("tests/pipeline/data/mutation/") + GetParam().file + ".py",
                              GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Data, MutationRefused,
                         ::testing::Values(Refused{"alias_reread",
                                                   "may read temporary buffer 0 back after writing it ("},
                                           Refused{"atomic_reread_out", "may read output 1 back after writing it ("},
                                           Refused{"loop_reread2", "may read output 0 back after writing it ("},
                                           Refused{"return_input", "returns its input 'x' unchanged (output 1)"}),
                         [](const auto &info) { return std::string(info.param.file); });

// Generates the module of tests/pipeline/data/<data>.py and runs tests/pipeline/<script> on it
// (fake kernels, no GPU); its output.
std::string run_launcher_check(const std::string &data, const std::string &script) {
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/" + data + ".py");
    std::string module = fs::join(dir.path(), data + "_bwd.py");
    fs::write_file_atomic(module, s->candidate_source(s->generate(GenerateOptions{})));
    std::string cmd = "PYTHONPATH=" + std::string(TAD_SOURCE_DIR) + "/src/runtime/python/standin " + kPython + " " +
                      TAD_SOURCE_DIR + "/tests/pipeline/" + script + " " + module + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return "popen failed";
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    int rc = pclose(p);
    return rc == 0 ? out : out + "\n(exit status " + std::to_string(rc) + ")";
}

TEST(ChainCpu, LauncherSharesShadowsAndSavesIntermediates) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    std::string out = run_launcher_check("chain", "chain_check.py");
    EXPECT_NE(out.find("chain launcher ok"), std::string::npos) << out;
}

TEST(ChainCpu, LauncherSavesOverwrittenBuffersAndMarksInputsDirty) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    std::string out = run_launcher_check("inplace_chain", "inplace_check.py");
    EXPECT_NE(out.find("in-place launcher ok"), std::string::npos) << out;
}

// A trace of `launches` (JSON) over one input x (16 floats) and one output.
Json trace_of(const std::string &launches, const std::string &temps = "[]") {
    return Json::parse(R"({"stub": "f", "inputs": [{"name": "x", "index": 0, "kind": "tensor", "dtype": "float32",
        "shape": [16], "stride": [1]}], "outputs": [{"index": 0, "kind": "tensor", "dtype": "float32", "shape": [16],
        "stride": [1]}], "temps": )" +
                           temps + R"(, "launches": )" + launches + "}",
                       "trace");
}

std::string launch(const std::string &kernel, const std::string &from, const std::string &to) {
    return R"({"kernel": ")" + kernel + R"(", "grid": [1, 1, 1], "options": {}, "args": [
        {"name": "A", "kind": "tensor", "ref": )" +
           from + R"(, "offset": 0, "dtype": "float32"},
        {"name": "B", "kind": "tensor", "ref": )" +
           to + R"(, "offset": 0, "dtype": "float32"},
        {"name": "N", "kind": "int", "value": 16}]})";
}

const char *kTwoKernels = R"(import triton
import triton.language as tl

import tad


@triton.jit
def first(A, B, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(B + offs, tl.exp(tl.load(A + offs)))


@triton.jit
def second(A, B, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(B + offs, tl.sin(tl.load(A + offs)))


@tad.autodiff(grad_inputs=("x",))
def f(x):
    y = x.new_empty(x.shape)
    first[(1,)](x, y, N=16)
    second[(1,)](x, y, N=16)
    return y
)";

std::string module_of(const Json &trace) {
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source("k.py", kTwoKernels));
    return emit_backward_module(kf, {trace});
}

std::string error_of(const Json &trace, const char *source = kTwoKernels) {
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source("k.py", source));
    try {
        emit_backward_module(kf, {trace});
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_UNSUPPORTED) << e.what();
        return e.what();
    }
    return "";
}

TEST(Chain, ABufferOverwrittenByALaterLaunchPassesNoGradientToItsEarlierContents) {
    Json t = trace_of("[" + launch("first", R"({"input": 0})", R"({"output": 0})") + ", " +
                      launch("second", R"({"input": 0})", R"({"output": 0})") + "]");
    std::string py = module_of(t);
    // second's backward reads y's cotangent, then zeroes it: first's backward sees none.
    size_t first = py.find("def first_bwd"), second = py.find("def second_bwd"), end = py.find("def f_backward");
    ASSERT_TRUE(first < second && second < end) << py;
    // Barriers around the zeroing store: the GPU may spread the load, the store and the atomic adds
    // over the program's threads differently.
    EXPECT_NE(
        py.substr(second, end - second)
            .find("    t2 = tl.load(t1)\n    tl.debug_barrier()\n    tl.store(t1, 0.0)\n    tl.debug_barrier()\n"),
        std::string::npos)
        << py;
    EXPECT_EQ(py.substr(first, second - first).find("tl.store("), std::string::npos)
        << "first's backward zeroes nothing\n"
        << py;
    EXPECT_NE(py.find("    g0 = _cotangent_buffer(grads[0], out_layouts[0])\n"), std::string::npos) << py;
}

TEST(Chain, RefusesAGradInputUpdatedInPlaceAndNotReturned) {
    Json t = trace_of("[" + launch("first", R"({"input": 0})", R"({"input": 0})") + "]");
    EXPECT_NE(error_of(t).find("stub 'f' updates stub input 'x' in place but does not return it"), std::string::npos)
        << error_of(t);
}

TEST(Chain, AnInputUpdatedInPlaceAndReturnedIsMarkedDirty) {
    Json t = trace_of("[" + launch("first", R"({"input": 0})", R"({"input": 0})") + "]");
    t.at("outputs")[0].set("input", int64_t{0});
    std::string py = module_of(t);
    EXPECT_NE(py.find("        ctx.mark_dirty(x)\n"), std::string::npos) << py;
    EXPECT_NE(py.find("DIRTY = (\"x\",)\n"), std::string::npos) << py;
    EXPECT_NE(py.find("    d_x = _cotangent_buffer(grads[0], out_layouts[0])\n"), std::string::npos) << py;
    // The backward reads x as the launch did: a copy saved before it ran.
    EXPECT_NE(py.find("_SNAPSHOTS = {0: ((0, \"A\"),)}\n"), std::string::npos) << py;
    EXPECT_NE(py.find("first_bwd[launches[0].grid](launches[0].pre[\"A\"], d_x"), std::string::npos) << py;
}

TEST(Chain, RefusesOverwritingAGradientCarryingBufferWithValuesThatDoNotDependOnTheGradInputs) {
    Json t = trace_of(
        "[" + launch("first", R"({"input": 0})", R"({"temp": 0})") + ", " +
            launch("second", R"({"temp": 1})", R"({"temp": 0})") + ", " +
            launch("first", R"({"temp": 0})", R"({"output": 0})") + "]",
        R"([{"id": 0, "dtype": "float32", "shape": [16], "stride": [1]}, {"id": 1, "dtype": "float32", "shape": [16], "stride": [1]}])");
    EXPECT_NE(error_of(t).find("launch 1 of 'second' overwrites temporary buffer 0, which carries gradient, with "
                               "values that do not depend"),
              std::string::npos)
        << error_of(t);
}

const char *kReread = R"(import triton
import triton.language as tl

import tad


@triton.jit
def twice(A, B, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(B + offs, tl.load(A + offs) * 2.0)
    tl.store(B + offs, tl.exp(tl.load(B + offs)))


@tad.autodiff(grad_inputs=("x",))
def f(x):
    y = x.new_empty(x.shape)
    twice[(1,)](x, y, N=16)
    return y
)";

TEST(Chain, RefusesALaunchReadingBackADifferentiatedValueItStored) {
    Json t = trace_of("[" + launch("twice", R"({"input": 0})", R"({"output": 0})") + "]");
    EXPECT_NE(error_of(t, kReread).find("launch 0 of 'twice' may read output 0 back after writing it (k.py:11:"),
              std::string::npos)
        << error_of(t, kReread);
}

TEST(Chain, ALaunchedKernelSequenceOtherThanTracedIsRefusedAtRunTime) {
    Json t = trace_of("[" + launch("first", R"({"input": 0})", R"({"temp": 0})") + ", " +
                          launch("second", R"({"temp": 0})", R"({"output": 0})") + "]",
                      R"([{"id": 0, "dtype": "float32", "shape": [16], "stride": [1]}])");
    std::string py = module_of(t);
    EXPECT_NE(py.find("_KERNELS = (\"first\", \"second\")\n"), std::string::npos) << py;
    EXPECT_NE(py.find("        _check_launches(launches, _KERNELS)\n"), std::string::npos) << py;
    // The temporary's shadow, first written by launch 1's backward (flow::first_writers).
    EXPECT_NE(py.find("    d_temp0 = _covered_buffer(temps[0], ((1, a[\"N\"]), ), True, True)\n"), std::string::npos)
        << py;
    EXPECT_NE(py.find("        ctx.temps = (launches[0].tensors[\"B\"],)\n"), std::string::npos) << py;
}

}  // namespace

namespace {

// LayerNorm in two launches: the normalize launch's backward is the first to write x's shadow and
// the statistics' shadows (flow::first_writers), so it stores there, into float32 buffers its stores
// cover, with no zero fill; the statistics launch's backward then adds onto x's. The CPU tier
// poisons what a covered buffer leaves unwritten.
TEST(ChainCpu, TheFirstWriterOfASharedShadowStoresIntoIt) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    const std::string src = tad::test::generate_and_verify("dataset/layernorm_two_pass.py", "first writer", 2);
    const std::string k = tad::test::kernel(src, "normalize_kernel_bwd");
    EXPECT_EQ(tad::test::count(k, "tl.atomic_add("), 0) << k;
    EXPECT_TRUE(src.find("        d_x = _covered_buffer(x, ") != std::string::npos) << src;
    EXPECT_TRUE(src.find("        d_temp0 = _covered_buffer(temps[0], ") != std::string::npos) << src;
    EXPECT_TRUE(src.find("last to first.\"\"\"\n    d_x = None\n") != std::string::npos) << src;
    EXPECT_EQ(tad::test::count(tad::test::kernel(src, "row_stats_kernel_bwd"), "tl.atomic_add(DX + "), 1) << src;
}

// A tensor the last launch reads through two parameters (x * x; h passed twice after two other
// launches): both gradients land in one shadow, so they are added, not stored (a review found the
// second store overwriting the first).
TEST(ChainCpu, AFirstWriterReadingATensorTwiceAddsBothGradients) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/first_writer/alias_square.py", "aliased", 1);
    EXPECT_EQ(tad::test::count(tad::test::kernel(src, "mul_rev_bwd"), "tl.atomic_add("), 2) << src;
    tad::test::generate_and_verify("tests/pipeline/data/first_writer/alias_twice.py", "aliased", 2);
}

}  // namespace
