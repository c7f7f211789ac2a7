// The executor end to end on the fake libcuda (fake/fake_cuda.h): an export is written, loaded as
// tad_kernels_load loads it, and launched; the test reads back every driver call and each launch's
// parameter bytes. One test per trap of Triton 3.6's calling convention, then grids, buffers and the
// error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "../common/error_of.h"
#include "aot/kernels.h"
#include "fixture.h"

using namespace tad;
using namespace tad::aot;
using namespace tad::aot::testing;
using tad::testing::error_of;

namespace {

class Executor : public ::testing::Test {
protected:
    void SetUp() override { fake_cuda::reset(); }
    void TearDown() override {
        kernels.reset();
        fake_cuda::reset();
    }

    // Writes `m` into `dir` and loads it on the fake driver.
    Kernels &load(const std::string &dir, const Manifest &m) {
        write_manifest(dir, m);
        kernels = std::make_unique<Kernels>(dir, TAD_FAKE_CUDA);
        return *kernels;
    }

    std::unique_ptr<Kernels> kernels;
};

// x: 4 x 8 float32; the launch of fwd on 4 programs with N = n, eps = 1e-5, BLOCK = 8.
struct Elementwise {
    std::vector<float> x = std::vector<float>(32, 1), y = std::vector<float>(32, 2), dx = std::vector<float>(32, NAN),
                       dy = std::vector<float>(32, 3);
    Request request(int64_t n = 8) const {
        Request r;
        r.grid = {4, 1, 1};
        r.tensors["X"] = tensor(x, 4, 8, address(dx.data()));
        r.tensors["Y"] = tensor(y, 4, 8, address(dy.data()));
        r.values["N"] = Value{Value::Int, n, 0, ""};
        r.values["eps"] = Value{Value::Float, 0, 1e-5, ""};
        r.values["BLOCK"] = Value{Value::Int, 8, 0, ""};
        return r;
    }
};

std::vector<CubinParam> elementwise_params(CubinParam n, bool x_aligned = true) {
    return {param("X", "*fp32", x_aligned), param("DX", "*fp32", true), param("DY", "*fp32", true), n,
            param("eps", "fp32"),           constant("BLOCK", "8")};
}

Manifest with_cubins(Manifest m, const std::string &kernel, std::vector<Cubin> cubins) {
    m.kernels[kernel].cubins = std::move(cubins);
    return m;
}

const fake_cuda::Launch &only_launch() {
    EXPECT_EQ(fake_cuda::state().launches.size(), 1u);
    return fake_cuda::state().launches.at(0);
}

// ---- Triton 3.6's calling convention, one trap per test

TEST_F(Executor, TrailingScratchPointersFollowTheArguments) {
    const std::string dir = fresh_dir("scratch");
    Cubin c = cubin(dir, "k.cubin", "fwd_bwd", elementwise_params(param("N", "i32")));
    c.global_scratch_size = 64;
    c.global_scratch_align = 128;
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd", {c}));
    Elementwise e;
    k.launch(e.request(), nullptr);
    const fake_cuda::Launch &l = only_launch();
    ASSERT_EQ(l.params.size(), 7u);  // X, DX, DY, N, eps, then global and profile scratch
    ASSERT_EQ(fake_cuda::state().allocations.size(), 1u);  // the workspace holds the global scratch
    const uint64_t base = fake_cuda::state().allocations.begin()->first;
    const uint64_t global = read<uint64_t>(l.params[5]);
    EXPECT_GE(global, base);
    EXPECT_EQ((global - base) % 128, 0u);
    EXPECT_LE(global - base + 4 * 64, fake_cuda::state().allocations.begin()->second);  // 4 programs x 64 bytes
    EXPECT_EQ(read<uint64_t>(l.params[6]), 0u);  // no profile scratch
}

TEST_F(Executor, Fp32ScalarsPassAsFourByteFloats) {
    const std::string dir = fresh_dir("fp32");
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "k.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    Elementwise e;
    k.launch(e.request(), nullptr);
    const fake_cuda::Launch &l = only_launch();
    ASSERT_EQ(l.params.at(4).size(), 4u);
    EXPECT_EQ(read<float>(l.params[4]), 1e-5f);
    EXPECT_EQ(read<int32_t>(l.params[3]), 8);
    EXPECT_EQ(read<uint64_t>(l.params[0]), address(e.x.data()));
    EXPECT_EQ(read<uint64_t>(l.params[1]), address(e.dx.data()));
    EXPECT_EQ(read<uint64_t>(l.params[2]), address(e.dy.data()));
}

TEST_F(Executor, AnIntegerEqualToOneIsAConstantAndLeavesTheEntry) {
    const std::string dir = fresh_dir("one");
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "a.cubin", "fwd_bwd_n", elementwise_params(param("N", "i32"))),
                                        cubin(dir, "b.cubin", "fwd_bwd_one", elementwise_params(constant("N", "1")))}));
    Elementwise e;
    k.launch(e.request(1), nullptr);
    const fake_cuda::Launch &l = only_launch();
    EXPECT_EQ(l.function, "fwd_bwd_one");
    ASSERT_EQ(l.params.size(), 6u);  // X, DX, DY, eps and the two scratch pointers: no N
    EXPECT_EQ(read<float>(l.params[3]), 1e-5f);
    fake_cuda::state().launches.clear();
    k.launch(e.request(3), nullptr);
    EXPECT_EQ(only_launch().function, "fwd_bwd_n");
}

TEST_F(Executor, IntegersAndPointersPickTheCubinOfTheirDivisibility) {
    const std::string dir = fresh_dir("divisible");
    Kernels &k =
        load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                              {cubin(dir, "a.cubin", "fwd_bwd_any", elementwise_params(param("N", "i32"))),
                               cubin(dir, "b.cubin", "fwd_bwd_16", elementwise_params(param("N", "i32", true)))}));
    Elementwise e;
    k.launch(e.request(48), nullptr);
    EXPECT_EQ(only_launch().function, "fwd_bwd_16");
    fake_cuda::state().launches.clear();
    k.launch(e.request(40), nullptr);
    EXPECT_EQ(only_launch().function, "fwd_bwd_any");
    Request unaligned = e.request(40);
    unaligned.tensors["X"].data += 4;  // one float past an aligned address
    EXPECT_EQ(
        error_of([&] { k.launch(unaligned, nullptr); }),
        std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT),
                       std::string("no exported cubin of fwd_bwd matches this launch: X: *fp32, not 16-byte aligned "
                                   "(exported: X: *fp32, 16-byte aligned); export with dims that give the "
                                   "launch's specialization (docs/aot.md)")));
}

TEST_F(Executor, LargeSharedMemoryOptsInToTheDevicesMaximum) {
    const std::string dir = fresh_dir("shared");
    Cubin big = cubin(dir, "a.cubin", "fwd_bwd_big", elementwise_params(param("N", "i32")), 1024);
    big.shared = 100000;
    Cubin small = cubin(dir, "b.cubin", "fwd_bwd_small", elementwise_params(param("N", "i32", true)), 1024);
    small.shared = 40000;
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd", {big, small}));
    const std::vector<std::string> &calls = fake_cuda::state().calls;
    EXPECT_NE(std::find(calls.begin(), calls.end(), "cuFuncSetCacheConfig fwd_bwd_big config=1"), calls.end());
    // The device's opt-in maximum (232448 on the fake) less the kernel's static shared memory.
    EXPECT_NE(std::find(calls.begin(), calls.end(), "cuFuncSetAttribute fwd_bwd_big attribute=8 value=231424"),
              calls.end());
    for (const std::string &c : calls) EXPECT_EQ(c.find("fwd_bwd_small"), std::string::npos) << c;
    Elementwise e;
    k.launch(e.request(), nullptr);
    EXPECT_EQ(only_launch().shared, 100000u);
}

TEST_F(Executor, MoreSharedMemoryThanTheDeviceHasIsRefusedAtLoad) {
    const std::string dir = fresh_dir("shared_over");
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")));
    c.shared = 300000;
    write_manifest(dir, with_cubins(elementwise(dir), "fwd_bwd", {c}));
    EXPECT_EQ(error_of([&] { Kernels(dir, TAD_FAKE_CUDA); }),
              std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                             std::string("fwd_bwd: cubin a.cubin needs 300000 bytes of shared memory; this device "
                                         "allows 232448")));
}

TEST_F(Executor, ClustersMultiplyTheGridAndSetTheClusterAttributes) {
    const std::string dir = fresh_dir("cluster");
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")));
    c.num_ctas = 2;
    c.cluster_dims = {2, 1, 1};
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd", {c}));
    Elementwise e;
    k.launch(e.request(), nullptr);
    const fake_cuda::Launch &l = only_launch();
    EXPECT_EQ(l.grid, (std::array<unsigned, 3>{8, 1, 1}));
    ASSERT_EQ(l.attrs.size(), 2u);
    EXPECT_EQ(l.attrs[0].first, 4);  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    EXPECT_EQ(l.attrs[0].second, (std::array<unsigned, 3>{2, 1, 1}));
    EXPECT_EQ(l.attrs[1].first, 5);  // CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
    EXPECT_EQ(l.attrs[1].second[0], 1u);  // CU_CLUSTER_SCHEDULING_POLICY_SPREAD
}

TEST_F(Executor, MemoryGoesThroughTheV2EntryPoints) {
    const std::string dir = fresh_dir("v2");
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")));
    c.global_scratch_size = 16;
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd", {c}));
    Elementwise e;
    k.launch(e.request(), nullptr);
    EXPECT_EQ(fake_cuda::state().calls.at(fake_cuda::state().calls.size() - 2), "cuMemAlloc_v2 bytes=1048576");
    kernels.reset();  // frees the workspace
    EXPECT_EQ(fake_cuda::state().calls.back(), "cuMemFree_v2 a0+0");
    EXPECT_EQ(fake_cuda::state().legacy_calls, 0);  // cuMemAlloc / cuMemFree: the 32-bit ABI
}

// ---- grids, options, buffers

TEST_F(Executor, LaunchesOnTheCallersStreamWithItsWarps) {
    const std::string dir = fresh_dir("stream");
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")));
    c.num_warps = 8;
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd", {c}));
    Elementwise e;
    Request r = e.request();
    r.num_warps = 8;
    auto *stream = reinterpret_cast<cu::Stream>(static_cast<uintptr_t>(0xabc0));
    k.launch(r, stream);
    EXPECT_EQ(only_launch().stream, stream);
    EXPECT_EQ(only_launch().block, (std::array<unsigned, 3>{256, 1, 1}));
    EXPECT_EQ(only_launch().grid, (std::array<unsigned, 3>{4, 1, 1}));
    r.num_warps = 4;
    EXPECT_EQ(error_of([&] { k.launch(r, stream); }),
              std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT),
                             std::string("no exported cubin of fwd_bwd matches this launch: num_warps 4 (exported: 8); "
                                         "export with dims that give the launch's specialization (docs/aot.md)")));
}

TEST_F(Executor, ALaunchLikeAnEarlierOneRunsOnItsOwnBuffers) {
    const std::string dir = fresh_dir("again");
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    Elementwise first, second;
    k.launch(first.request(), nullptr);
    Request r = second.request();
    r.grid = {3, 1, 1};  // another grid: another program (x's gradient zeroed first)
    k.launch(second.request(), nullptr);  // the first's program, the second's buffers
    k.launch(r, nullptr);
    const std::vector<fake_cuda::Launch> &l = fake_cuda::state().launches;
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(read<uint64_t>(l[0].params[1]), address(first.dx.data()));
    EXPECT_EQ(read<uint64_t>(l[1].params[0]), address(second.x.data()));
    EXPECT_EQ(read<uint64_t>(l[1].params[1]), address(second.dx.data()));
    EXPECT_EQ(read<uint64_t>(l[1].params[2]), address(second.dy.data()));
    EXPECT_EQ(fake_cuda::state().calls.at(fake_cuda::state().calls.size() - 2).rfind("cuMemsetD8Async 0x", 0), 0u);
    for (float v : second.dx) EXPECT_EQ(v, 0.0f);
    EXPECT_TRUE(std::isnan(first.dx[0]));
}

TEST_F(Executor, StagesComeDownAsTheLauncherLowersThem) {
    const std::string dir = fresh_dir("stages");
    std::vector<CubinParam> params = elementwise_params(param("N", "i32"));
    params.push_back(constant("TAD_LOOP_STAGES", "2"));
    Cubin c = cubin(dir, "a.cubin", "fwd_bwd", params);
    c.num_stages = 2;
    Manifest m = with_cubins(elementwise(dir), "fwd_bwd", {c});
    m.kernels["fwd_bwd"].loop_stages = true;
    Kernels &k = load(dir, m);
    Elementwise e;
    k.launch(e.request(), nullptr);  // asks for 3 stages; the export ran with 2
    EXPECT_EQ(only_launch().function, "fwd_bwd");
}

TEST_F(Executor, ACoveredGradientIsZeroedUnlessItsStoresReachEveryElement) {
    const std::string dir = fresh_dir("covered");
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    Elementwise e;
    k.launch(e.request(), nullptr);
    for (const std::string &c : fake_cuda::state().calls) EXPECT_EQ(c.find("cuMemsetD8Async"), std::string::npos) << c;
    EXPECT_TRUE(std::isnan(e.dx[0]));  // the kernel writes every element: no fill
    Request r = e.request();
    r.grid = {3, 1, 1};  // 3 rows stored of 4: x's gradient starts as zeros
    k.launch(r, nullptr);
    EXPECT_EQ(fake_cuda::state().calls.back(), "cuLaunchKernelEx fwd_bwd");
    EXPECT_EQ(fake_cuda::state().calls.at(fake_cuda::state().calls.size() - 2).rfind("cuMemsetD8Async 0x", 0), 0u);
    EXPECT_NE(fake_cuda::state().calls.at(fake_cuda::state().calls.size() - 2).find(" value=0 bytes=128"),
              std::string::npos);
    for (float v : e.dx) EXPECT_EQ(v, 0.0f);
}

// x: 10 x 8, w: 8 (float32 storage standing in for either dtype); the launch on 10 programs.
struct Regridded {
    std::vector<float> x = std::vector<float>(80, 1), w = std::vector<float>(8, 1), y = std::vector<float>(80, 2),
                       dx = std::vector<float>(80, NAN), dy = std::vector<float>(80, 3),
                       dw = std::vector<float>(8, NAN);
    Request request(const std::string &dtype) const {
        Request r;
        r.grid = {10, 1, 1};
        r.tensors["X"] = tensor(x, 10, 8, address(dx.data()), dtype);
        r.tensors["W"] = tensor(w, 0, 8, address(dw.data()), dtype);
        r.tensors["Y"] = tensor(y, 10, 8, address(dy.data()), dtype);
        r.values["N"] = Value{Value::Int, 7, 0, ""};
        r.values["BLOCK"] = Value{Value::Int, 8, 0, ""};
        return r;
    }
};

TEST_F(Executor, AReGriddedRunSumsItsPartialRowsInOrder) {
    const std::string dir = fresh_dir("regrid32");
    fake_cuda::state().sm_count = 1;  // 4 programs per SM for an 8-element tile: P = 4 of G = 10
    Kernels &k = load(dir, regridded(dir, "float32"));
    Regridded g;
    k.launch(g.request("float32"), nullptr);
    const std::vector<std::string> &calls = fake_cuda::state().calls;
    const std::vector<std::string> tail(calls.end() - 4, calls.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"cuMemAlloc_v2 bytes=1048576",
                                              "cuMemsetD8Async a0+0 value=0 bytes=128",  // 4 rows of 8 floats
                                              "cuLaunchKernelEx fwd_bwd", "cuLaunchKernelEx tad_row_sum"}));
    const fake_cuda::Launch &bwd = fake_cuda::state().launches.at(0), &sum = fake_cuda::state().launches.at(1);
    EXPECT_EQ(bwd.grid, (std::array<unsigned, 3>{4, 1, 1}));
    const uint64_t ws = fake_cuda::state().allocations.begin()->first;
    EXPECT_EQ(read<uint64_t>(bwd.params[4]), ws);  // DW: the partial rows
    EXPECT_EQ(read<int32_t>(bwd.params[6]), 10);  // G
    EXPECT_EQ(read<int32_t>(bwd.params[7]), 8);  // DW_slab: a row, W's storage
    EXPECT_EQ(sum.grid, (std::array<unsigned, 3>{1, 1, 1}));
    EXPECT_EQ(read<uint64_t>(sum.params[0]), ws);
    EXPECT_EQ(read<uint64_t>(sum.params[1]), address(g.dw.data()));  // float32: summed into the caller's buffer
    EXPECT_EQ(read<int32_t>(sum.params[2]), 4);  // rows: P
    EXPECT_EQ(read<int32_t>(sum.params[3]), 8);  // n
}

// Re-gridded along axis 0 with axis 1 kept: P leaves room for the kept axis's programs (4 per SM on
// one SM, 2 programs along axis 1: P = 2 of G = 5).
TEST_F(Executor, AReGriddedRunLeavesRoomForTheKeptAxis) {
    const std::string dir = fresh_dir("regrid_kept");
    fake_cuda::state().sm_count = 1;
    Kernels &k = load(dir, regridded(dir, "float32"));
    Regridded g;
    Request r = g.request("float32");
    r.grid = {5, 2, 1};
    k.launch(r, nullptr);
    const fake_cuda::Launch &bwd = fake_cuda::state().launches.at(0);
    EXPECT_EQ(bwd.grid, (std::array<unsigned, 3>{2, 2, 1}));
    EXPECT_EQ(read<int32_t>(bwd.params[6]), 5);  // G
}

// Re-gridded over axes 0 and 1: P programs along axis 0, one along axis 1, each axis's recorded size
// in its own parameter; a grid whose two axes span 2**31 programs is refused (the kernel counts them
// in int32, its loop counter stepping past G).
TEST_F(Executor, AReGriddedRunOverTwoAxesTakesEachAxissSize) {
    const std::string dir = fresh_dir("regrid_two");
    fake_cuda::state().sm_count = 1;
    Kernels &k = load(dir, regridded(dir, "float32", 2));
    Regridded g;
    Request r = g.request("float32");
    r.grid = {5, 2, 1};
    k.launch(r, nullptr);
    const fake_cuda::Launch &bwd = fake_cuda::state().launches.at(0);
    EXPECT_EQ(bwd.grid, (std::array<unsigned, 3>{4, 1, 1}));  // P = 4 of G = 10
    EXPECT_EQ(read<int32_t>(bwd.params[6]), 5);  // G0
    EXPECT_EQ(read<int32_t>(bwd.params[7]), 2);  // G1
    EXPECT_EQ(read<int32_t>(bwd.params[8]), 8);  // DW_slab
    r.grid = {65536, 32768, 1};
    EXPECT_EQ(error_of([&] { k.launch(r, nullptr); }),
              std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT),
                             std::string("a re-gridded backward loops over 2147483648 programs by 4: past int32")));
    r.grid = {65535, 32767, 1};  // 2**31 - 98303 programs: the last step stays in int32
    const size_t before = fake_cuda::state().launches.size();
    k.launch(r, nullptr);
    EXPECT_EQ(fake_cuda::state().launches.at(before).function, "fwd_bwd");
    EXPECT_EQ(fake_cuda::state().launches.at(before).grid, (std::array<unsigned, 3>{4, 1, 1}));
    r.grid = {2147483644, 1, 1};  // 2**31 - 4: a step of P = 4 from the last program passes int32
    EXPECT_NE(error_of([&] { k.launch(r, nullptr); }).second.find("past int32"), std::string::npos);
}

// A stash: one workspace buffer, as many elements as programs times BLOCK, in X's dtype, left
// unfilled, given to the kernel that stores it and to the one that loads it.
TEST_F(Executor, AStashIsOneUnfilledBufferSharedByItsKernels) {
    const std::string dir = fresh_dir("stash16");
    Kernels &k = load(dir, stashed(dir, "float16"));
    Elementwise e;
    Request r = e.request(7);
    r.values.erase("eps");
    r.grid = {4, 1, 1};  // rows of X: its gradient's stores reach every element, no fill
    for (auto &[name, t] : r.tensors) t.dtype = "float16";
    k.launch(r, nullptr);
    const std::vector<std::string> &calls = fake_cuda::state().calls;
    const std::vector<std::string> tail(calls.end() - 3, calls.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"cuMemAlloc_v2 bytes=1048576", "cuLaunchKernelEx fwd_bwd",
                                              "cuLaunchKernelEx fwd_bwd_DX"}));
    const fake_cuda::Launch &rest = fake_cuda::state().launches.at(0), &dx = fake_cuda::state().launches.at(1);
    const uint64_t ws = fake_cuda::state().allocations.begin()->first;
    EXPECT_EQ(read<uint64_t>(rest.params[2]), ws);
    EXPECT_EQ(read<uint64_t>(dx.params[0]), ws);
    EXPECT_EQ(read<uint64_t>(dx.params[1]), address(e.dx.data()));
    EXPECT_EQ(rest.grid, (std::array<unsigned, 3>{4, 1, 1}));
}

TEST_F(Executor, A16BitGradientSummedInFloat32IsCastIntoTheCallersBuffer) {
    const std::string dir = fresh_dir("regrid16");
    Kernels &k = load(dir, regridded(dir, "float16"));
    Regridded g;
    k.launch(g.request("float16"), nullptr);
    ASSERT_EQ(fake_cuda::state().launches.size(), 3u);
    const fake_cuda::Launch &sum = fake_cuda::state().launches[1], &cast = fake_cuda::state().launches[2];
    const uint64_t ws = fake_cuda::state().allocations.begin()->first;
    EXPECT_EQ(sum.function, "tad_row_sum");
    const uint64_t shadow = read<uint64_t>(sum.params[1]);
    EXPECT_GE(shadow, ws + 10 * 8 * 4);  // after G = 10 partial rows of 8 floats, in the workspace
    EXPECT_EQ(shadow % 256, ws % 256);
    EXPECT_EQ(cast.function, "tad_cast");
    EXPECT_EQ(read<uint64_t>(cast.params[0]), shadow);
    EXPECT_EQ(read<uint64_t>(cast.params[1]), address(g.dw.data()));
    EXPECT_EQ(read<int32_t>(cast.params[2]), 8);
}

// ---- errors

TEST_F(Executor, NoLibcudaIsNoGpu) {
    const std::string dir = fresh_dir("nolib");
    write_manifest(dir, elementwise(dir));
    Manifest m = with_cubins(elementwise(dir), "fwd_bwd",
                             {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))});
    write_manifest(dir, m);
    auto [status, message] = error_of([&] { Kernels(dir, "/nonexistent/libcuda.so.1"); });
    EXPECT_EQ(status, TAD_ERR_NO_GPU);
    EXPECT_EQ(message,
              "cannot load the CUDA driver '/nonexistent/libcuda.so.1': /nonexistent/libcuda.so.1: cannot "
              "open shared object file: No such file or directory (running exported kernels needs an NVIDIA "
              "driver; TAD_LIBCUDA names another library)");
}

TEST_F(Executor, ADriverWithoutLaunchKernelExIsTooOld) {
    const std::string dir = fresh_dir("old");
    write_manifest(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                    {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    auto [status, message] = error_of([&] { Kernels(dir, TAD_FAKE_CUDA_OLD); });
    EXPECT_EQ(status, TAD_ERR_NO_GPU);
    EXPECT_EQ(message.rfind(std::string("'") + TAD_FAKE_CUDA_OLD + "' has no cuLaunchKernelEx: ", 0), 0u) << message;
    EXPECT_NE(message.find("(tad needs a driver of CUDA 12 or later)"), std::string::npos) << message;
}

TEST_F(Executor, NoCurrentContextIsNoGpu) {
    const std::string dir = fresh_dir("noctx");
    write_manifest(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                    {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    fake_cuda::state().context = false;
    EXPECT_EQ(
        error_of([&] { Kernels(dir, TAD_FAKE_CUDA); }),
        std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                       std::string("tad_kernels_load: no current CUDA context on this thread (make one current "
                                   "first: cuDevicePrimaryCtxRetain + cuCtxSetCurrent, or any CUDA runtime call)")));
}

TEST_F(Executor, AnotherArchitectureIsRefused) {
    const std::string dir = fresh_dir("arch");
    write_manifest(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                    {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    fake_cuda::state().major = 8;
    EXPECT_EQ(
        error_of([&] { Kernels(dir, TAD_FAKE_CUDA); }),
        std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                       dir + "/manifest.json: exported for compute capability 9.0 (Fake GPU); this device has 8.0"));
}

TEST_F(Executor, DriverFailuresNameTheCallAndTheError) {
    const std::string dir = fresh_dir("fail");
    write_manifest(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                    {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    fake_cuda::state().fail["cuModuleLoadData"] = 209;
    EXPECT_EQ(error_of([&] { Kernels(dir, TAD_FAKE_CUDA); }),
              std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                             std::string("cuModuleLoadData(a.cubin): CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is "
                                         "available for execution on the device)")));
    fake_cuda::state().fail.clear();
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    fake_cuda::state().fail["cuLaunchKernelEx"] = 719;
    Elementwise e;
    EXPECT_EQ(error_of([&] { k.launch(e.request(), nullptr); }),
              std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                             std::string("cuLaunchKernelEx(fwd_bwd): CUDA_ERROR_LAUNCH_FAILED (unspecified launch "
                                         "failure)")));
}

TEST_F(Executor, ArgumentsAreCheckedBeforeAnythingIsEnqueued) {
    const std::string dir = fresh_dir("args");
    Kernels &k = load(dir, with_cubins(elementwise(dir), "fwd_bwd",
                                       {cubin(dir, "a.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))}));
    Elementwise e;
    const size_t before = fake_cuda::state().calls.size();
    auto check = [&](Request r, const std::string &message) {
        EXPECT_EQ(error_of([&] { k.launch(r, nullptr); }),
                  std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT), message));
    };
    Request r = e.request();
    r.tensors.erase("Y");
    check(r, "no tensor for parameter Y of fwd (the forward launch's pointer argument)");
    r = e.request();
    r.values.erase("eps");
    check(r, "no value for parameter eps of fwd");
    r = e.request();
    r.values["Z"] = Value{};
    check(r, "fwd has no parameter Z");
    r = e.request();
    r.tensors["X"].dtype = "float8";
    check(r,
          "tensor X: unknown dtype 'float8' (known: float32, float16, bfloat16, float64, int8, int16, int32, int64, "
          "uint8, bool)");
    r = e.request();
    r.tensors["X"].shape = {32};
    r.tensors["X"].strides = {1};
    check(r, "tensor X has 1 dims; the export's has 2");
    r = e.request();
    r.kernel = "other";
    check(r, "the kernels were exported for the backward of fwd, not other");
    EXPECT_EQ(fake_cuda::state().calls.size(), before);
}

// A precondition of the plan (plan::Precondition: what the derivation assumed of the launch's
// arguments) that fails refuses the launch with the plan's refusal, before anything is enqueued.
TEST_F(Executor, AFailedPreconditionRefusesTheLaunch) {
    const std::string dir = fresh_dir("precondition");
    Manifest m = with_cubins(elementwise(dir), "fwd_bwd",
                             {cubin(dir, "k.cubin", "fwd_bwd", elementwise_params(param("N", "i32")))});
    plan::Precondition p;
    p.guards.push_back({plan::Guard::AtLeast, passes::Poly::symbol("N"), passes::Poly::constant(8), {}});
    p.refusal = "tad: the backward of fwd assumes N >= 8";
    m.plan.steps[0].cases[0].preconditions.push_back(p);
    Kernels &k = load(dir, m);
    Elementwise e;
    k.launch(e.request(8), nullptr);
    EXPECT_EQ(fake_cuda::state().launches.size(), 1u);
    const size_t before = fake_cuda::state().calls.size();
    EXPECT_EQ(error_of([&] { k.launch(e.request(7), nullptr); }),
              std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT), std::string(p.refusal)));
    EXPECT_EQ(fake_cuda::state().calls.size(), before);
}

}  // namespace
