// The manifest: written and read back unchanged (plan included), and every way a directory can fail
// to be an export, by exact text.
#include <gtest/gtest.h>

#include <fstream>

#include "../common/error_of.h"
#include "aot/manifest.h"
#include "fixture.h"
#include "plan/json.h"
#include "support/fs.h"

using namespace tad;
using namespace tad::aot;
using namespace tad::aot::testing;
using tad::testing::error_of;

namespace {

Manifest sample(const std::string &dir) {
    Manifest m = regridded(dir, "float32");
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd",
                    {param("X", "*fp32", true), param("DX", "*fp32", true), param("DY", "*fp32", true),
                     param("W", "*fp32", false), param("DW", "*fp32", true), constant("N", "1"), param("G", "i64"),
                     param("DW_slab", "i32", true), constant("BLOCK", "8")});
    c.num_warps = 8;
    c.num_stages = 2;
    c.num_ctas = 2;
    c.cluster_dims = {2, 1, 1};
    c.shared = 65536;
    c.global_scratch_size = 32;
    c.global_scratch_align = 64;
    c.profile_scratch_size = 8;
    c.profile_scratch_align = 16;
    c.cooperative = true;
    c.pdl = true;
    m.kernels["fwd_bwd"].cubins = {c};
    m.kernels["fwd_bwd"].loop_stages = true;
    return m;
}

void write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

std::pair<int, std::string> read_error(const std::string &dir) {
    return error_of([&] { read_manifest(dir); });
}

TEST(Manifest, RoundTrip) {
    const std::string dir = fresh_dir("roundtrip");
    const Manifest m = sample(dir);
    write_manifest(dir, m);
    const Manifest back = read_manifest(dir);
    EXPECT_EQ(back.tad_version, m.tad_version);
    EXPECT_EQ(back.triton_version, m.triton_version);
    EXPECT_EQ(back.device, m.device);
    EXPECT_EQ(back.capability, m.capability);
    EXPECT_EQ(back.stub, m.stub);
    EXPECT_EQ(back.kernel, m.kernel);
    EXPECT_EQ(back.params, m.params);
    EXPECT_EQ(back.kernels, m.kernels);
    EXPECT_EQ(plan::print(back.plan), plan::print(m.plan));
    EXPECT_EQ(manifest_json(back).dump(true), manifest_json(m).dump(true));
}

TEST(Manifest, NoManifestIsAnIoError) {
    const std::string dir = fresh_dir("missing");
    auto [status, message] = read_error(dir);
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_EQ(message, dir + "/manifest.json: cannot read file: No such file or directory");
}

TEST(Manifest, BadManifestsAreNamedByWhatIsWrong) {
    const std::string dir = fresh_dir("bad");
    const std::string path = dir + "/manifest.json";
    auto expect = [&](const std::string &text, const std::string &message) {
        write(path, text);
        EXPECT_EQ(read_error(dir), std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT), path + ": " + message));
    };
    expect("{", "JSON: invalid JSON near byte 0");
    expect(R"({"format": "other", "version": 1})", "format is 'other', not 'tad-kernels'");
    expect(R"({"format": "tad-kernels", "version": 3})", "version 3 (this libtad reads version 4)");
    expect(R"({"format": "tad-kernels", "version": 4})", "JSON object has no member 'tad'");

    Json j = manifest_json(sample(dir));
    j.at("kernels")[0].at("cubins")[0].at("abi").push(static_cast<int64_t>(4));
    expect(j.dump(),
           "fwd_bwd: cubin a.cubin takes 10 parameters of other sizes than its signature's non-constexpr "
           "parameters and the two scratch pointers (9)");
    j = manifest_json(sample(dir));
    j.at("kernels")[0].at("cubins")[0].at("params")[5].set("type", "i128");
    j.at("kernels")[0].at("cubins")[0].at("params")[5].set_bool("divisible", false);
    expect(j.dump(), "fwd_bwd: parameter N has unknown type 'i128'");
    j = manifest_json(sample(dir));
    j.at("plan").at("steps")[0].at("cases")[0].at("branches")[0].at("runs")[0].at("args")[0].set("kind", "magic");
    expect(j.dump(), "plan: unknown argument kind 'magic'");
    Json without = manifest_json(sample(dir));
    without.set_array("kernels");
    expect(without.dump(), "kernel fwd_bwd of the plan has no entry in \"kernels\"");
}

TEST(Manifest, PlansTheExecutorCannotRunAreRefusedByStep) {
    const std::string dir = fresh_dir("unsupported");
    Manifest m = sample(dir);
    m.plan.steps.push_back(m.plan.steps[0]);
    write_manifest(dir, m);
    EXPECT_EQ(read_error(dir),
              std::make_pair(static_cast<int>(TAD_ERR_UNSUPPORTED),
                             dir + "/manifest.json: the stub launches 2 kernels; tad_launch_backward runs the backward "
                                   "of a stub that launches one (tad_launch_backward does not handle it yet; "
                                   "docs/aot.md)"));
    m = sample(dir);
    m.plan.steps[0].cases[0].branches[0].allocs[0].init = plan::Init::Cotangent;
    EXPECT_EQ(unsupported(m.plan),
              "launch 0 (fwd): the shadow of input 0 starts as a cotangent copy of an output's "
              "gradient (tad_launch_backward does not handle it yet; docs/aot.md)");
    m = sample(dir);
    m.plan.steps[0].cases[0].branches[0].runs[0].args[5] = kind_arg(plan::Arg::TapeStride);
    EXPECT_EQ(unsupported(m.plan),
              "launch 0 (fwd): argument N of fwd_bwd is the tape stride (tad_launch_backward does "
              "not handle it yet; docs/aot.md)");
    m = sample(dir);
    m.plan.aliases[0] = 0;
    EXPECT_EQ(unsupported(m.plan),
              "output 0 is input 0, updated in place and returned (tad_launch_backward does not "
              "handle it yet; docs/aot.md)");
}

}  // namespace
