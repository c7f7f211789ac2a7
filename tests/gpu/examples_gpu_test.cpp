// The GPU tier: every example's generated backward checked with real Triton across its SWEEP in
// float32 and float16, and kernels of tests/gpu/data where only the GPU shows a fault. Without a GPU
// each case prints "[SKIP] no GPU" and is reported as skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "driver/session.h"
#include "gpu_available.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;

namespace {

using tad::gpu_test::python;

// Generates a backward of `file` (under the source tree), verifies it across its SWEEP in `dtypes`,
// and expects every required case to pass, with its dot-product test where `dot` (forward mode).
void expect_verified(const std::string &file, const std::string &dtypes, bool dot) {
    REQUIRE_GPU();
    fs::TempDir dir;
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = python();
    Session s(opts);
    s.load_forward(std::string(TAD_SOURCE_DIR) + "/" + file, std::nullopt);
    s.generate(GenerateOptions{});
    VerifyOptions v;
    v.dtypes = dtypes;
    bool passed = false;
    std::string text = s.verify(v, &passed);
    const char *out = std::getenv("TAD_GPU_REPORT_DIR");
    if (out) std::ofstream(std::string(out) + "/verify_" + file.substr(file.rfind('/') + 1) + ".json") << text;
    Json report = Json::parse(text, "report");
    EXPECT_TRUE(passed) << text;
    JsonRef results = report.at("results");
    for (size_t i = 0; i < results.size(); ++i) {
        std::string status = results[i].at("status").str();
        bool optional = results[i].at("dims").bool_or("required", true) == false;
        EXPECT_TRUE(status == "pass" || (optional && status == "skipped")) << results[i].dump(true);
        if (status == "pass" && dot) {
            EXPECT_TRUE(results[i].at("dot_product").bool_or("ok", false)) << results[i].dump(true);
        }
    }
}

class ExampleGpu : public ::testing::TestWithParam<const char *> {};

// Every example has forward mode: its dot-product test runs (not skipped) and agrees.
TEST_P(ExampleGpu, GradientsMatchReferenceAcrossSweep) {
    expect_verified(std::string("examples/") + GetParam(), "float32,float16", true);
}

// Traced at one set of block sizes and run at another: the transposed kernels' widened tiles are
// sized from the launch's block sizes (passes/widen.h), never by a factor fixed at the trace.
TEST(TransposedGpu, WidenedTilesFollowTheLaunchsBlockSizes) {
    expect_verified("tests/gpu/data/matmul_sized_tiles.py", "float32", true);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleGpu, ::testing::Values("gelu.py", "softmax.py", "layernorm.py"),
                         [](const auto &info) {
                             std::string n = info.param;
                             return n.substr(0, n.find('.'));
                         });

}  // namespace
