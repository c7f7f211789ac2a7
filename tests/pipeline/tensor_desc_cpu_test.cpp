// Tensor descriptors through the whole CPU tier: the backward kernels use plain masked pointers
// (no descriptors, so no triton.set_allocator), and host-side TensorDescriptor arguments reach them
// as their base tensor and scalars, through the generated module's launch recorder.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

// The generated module's backward kernels and launchers (what follows the forward file's copy).
std::string backward_part(const std::string &module) { return module.substr(module.find("# ---- backward ----")); }

void expect_cpu_verify_passes(Session &s) {
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s.verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("summary").at("passed").integer(), 2) << report.dump(true);
}

}  // namespace

TEST(TensorDescCpu, DeviceDescriptorsBackwardUsesPlainPointers) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session = cpu_session(dir, "dataset/matmul_tensor_desc.py");
    Session &s = *session;
    std::string module = s.candidate_source(s.generate(GenerateOptions{}));
    std::string bwd = backward_part(module);
    EXPECT_EQ(bwd.find("make_tensor_descriptor"), std::string::npos) << bwd;
    EXPECT_NE(bwd.find("mask=(t0 >= 0) & (t0 < M) & ((t1 >= 0) & (t1 < N)), other=0.0"), std::string::npos) << bwd;
    // The forward keeps the user's descriptors, and the stub its allocator.
    // (Its CPU verify runs in dataset_cpu_test.cpp.)
    EXPECT_NE(module.find("triton.set_allocator(_descriptor_scratch)"), std::string::npos);
}

TEST(TensorDescCpu, HostDescriptorsReachTheBackwardAsBaseAndScalars) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session = cpu_session(dir, "tests/pipeline/data/matmul_host_desc.py");
    Session &s = *session;
    // One backward kernel for the launch check to intercept (transposed ones: the next test); the
    // CPU check re-derives the plans, under the same setting.
    const tad::testing::ScopedEnv off("TAD_TRANSPOSE", "off");
    std::string module = s.candidate_source(s.generate(GenerateOptions{}));
    std::string bwd = backward_part(module);
    EXPECT_NE(bwd.find("def _matmul_hd_fwd_bwd(a_desc, da_desc, a_desc_shape0, a_desc_shape1, a_desc_stride0, b_desc,"),
              std::string::npos)
        << bwd;
    EXPECT_NE(bwd.find("a_desc_block0: tl.constexpr"), std::string::npos) << bwd;
    EXPECT_EQ(bwd.find(".load(["), std::string::npos) << bwd;
    expect_cpu_verify_passes(s);

    // The recorder and the launcher, run by Python with the stand-in triton.
    std::string path = fs::join(dir.path(), "matmul_host_desc_bwd.py");
    fs::write_file_atomic(path, module);
    std::string cmd = "PYTHONPATH=" + std::string(TAD_SOURCE_DIR) + "/src/runtime/python/standin " + kPython + " " +
                      TAD_SOURCE_DIR + "/tests/pipeline/host_desc_launch_check.py " + path + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    EXPECT_EQ(pclose(p), 0) << out;
    EXPECT_EQ(out, "host descriptors ok\n");
}

TEST(TensorDescCpu, HostDescriptorGradientsAreLoopTransposed) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    std::unique_ptr<Session> session = cpu_session(dir, "tests/pipeline/data/matmul_host_desc.py");
    Session &s = *session;
    std::string bwd = backward_part(s.candidate_source(s.generate(GenerateOptions{})));
    EXPECT_NE(bwd.find("def _matmul_hd_fwd_bwd_da_desc(a_desc, da_desc,"), std::string::npos) << bwd;
    EXPECT_NE(bwd.find("def _matmul_hd_fwd_bwd_db_desc(a_desc,"), std::string::npos) << bwd;
    expect_cpu_verify_passes(s);
}
