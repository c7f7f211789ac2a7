// The C ABI of exported backwards: options structs, argument checks, and a launch described with
// tad_tensor_arg / tad_value_arg reaching the fake libcuda (tests/aot/fake) that TAD_LIBCUDA names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../aot/fixture.h"
#include "../common/scoped_env.h"
#include "support/json.h"
#include "tad.h"

namespace {

using namespace tad::aot;
using namespace tad::aot::testing;

TEST(AotApi, OptionsInitFunctionsMatchMacros) {
    tad_export_options e;
    tad_kernels_options k;
    tad_launch_options l;
    std::memset(&e, 0xab, sizeof e);
    std::memset(&k, 0xab, sizeof k);
    std::memset(&l, 0xab, sizeof l);
    ASSERT_EQ(tad_export_options_init(&e, TAD_EXPORT_OPTIONS_VERSION), TAD_OK);
    ASSERT_EQ(tad_kernels_options_init(&k, TAD_KERNELS_OPTIONS_VERSION), TAD_OK);
    ASSERT_EQ(tad_launch_options_init(&l, TAD_LAUNCH_OPTIONS_VERSION), TAD_OK);
    tad_launch_options l0 = TAD_LAUNCH_OPTIONS_INIT;
    EXPECT_EQ(0, std::memcmp(&l, &l0, offsetof(tad_launch_options, num_values) + sizeof l.num_values));
    EXPECT_EQ(e.version, 1u);
    EXPECT_EQ(e.out_dir, nullptr);
    EXPECT_EQ(e.dims_json, nullptr);
    EXPECT_EQ(e.dtypes, nullptr);
    EXPECT_EQ(k.version, 1u);
    EXPECT_EQ(k.libcuda, nullptr);
    EXPECT_EQ(tad_launch_options_init(&l, 2), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_error_last(), "tad_launch_options_init: unsupported options version 2 (libtad " +
                                    std::string(tad_version()) + " knows version 1)");
}

TEST(AotApi, NullArgumentsAreNamed) {
    tad_kernels *k = reinterpret_cast<tad_kernels *>(1);
    EXPECT_EQ(tad_kernels_load(nullptr, nullptr, &k), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_kernels_load: dir is NULL");
    EXPECT_EQ(k, nullptr);
    EXPECT_EQ(tad_kernels_load("x", nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_kernels_load: out is NULL");
    tad_launch_options l = TAD_LAUNCH_OPTIONS_INIT;
    EXPECT_EQ(tad_launch_backward(nullptr, &l), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_launch_backward: kernels is NULL");
    EXPECT_EQ(tad_export(nullptr, nullptr, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_export: session is NULL");
    tad_kernels_free(nullptr);
}

TEST(AotApi, AMissingExportIsAnIoError) {
    tad_kernels *k = nullptr;
    const std::string dir = fresh_dir("capi_missing");
    EXPECT_EQ(tad_kernels_load(dir.c_str(), nullptr, &k), TAD_ERR_IO);
    EXPECT_EQ(tad_error_last(),
              "tad_kernels_load: " + dir + "/manifest.json: cannot read file: No such file or directory");
}

TEST(AotApi, TadLibcudaNamesTheDriverAndALaunchReachesIt) {
    fake_cuda::reset();
    const std::string dir = fresh_dir("capi_launch");
    Manifest m = elementwise(dir);
    m.kernels["fwd_bwd"].cubins = {
        cubin(dir, "k.cubin", "fwd_bwd",
              {param("X", "*fp32", true), param("DX", "*fp32", true), param("DY", "*fp32", true), param("N", "i32"),
               param("eps", "fp32"), constant("BLOCK", "8")})};
    write_manifest(dir, m);
    tad_kernels *k = nullptr;
    {
        const tad::testing::ScopedEnv env("TAD_LIBCUDA", "/nonexistent/libcuda.so.1");
        ASSERT_EQ(tad_kernels_load(dir.c_str(), nullptr, &k), TAD_ERR_NO_GPU);
        EXPECT_EQ(std::string(tad_error_last())
                      .rfind("tad_kernels_load: cannot load the CUDA driver "
                             "'/nonexistent/libcuda.so.1': ",
                             0),
                  0u)
            << tad_error_last();
    }
    const tad::testing::ScopedEnv env("TAD_LIBCUDA", TAD_FAKE_CUDA);
    ASSERT_EQ(tad_kernels_load(dir.c_str(), nullptr, &k), TAD_OK) << tad_error_last();
    char *manifest = nullptr;
    ASSERT_EQ(tad_kernels_manifest(k, &manifest), TAD_OK);
    EXPECT_EQ(tad::Json::parse(manifest, "manifest").at("forward").at("kernel").str(), "fwd");
    tad_string_free(manifest);

    std::vector<float> x(32, 1), y(32, 2), dx(32, NAN), dy(32, 3);
    const long long shape[] = {4, 8}, strides[] = {8, 1};
    const tad_tensor_arg tensors[] = {{"X", reinterpret_cast<uintptr_t>(x.data()),
                                       reinterpret_cast<uintptr_t>(dx.data()), 0, "float32", 2, shape, strides},
                                      {"Y", reinterpret_cast<uintptr_t>(y.data()),
                                       reinterpret_cast<uintptr_t>(dy.data()), 0, "float32", 2, shape, strides}};
    const tad_value_arg values[] = {{"N", TAD_VALUE_INT, 8, 0, nullptr},
                                    {"eps", TAD_VALUE_FLOAT, 0, 1e-5, nullptr},
                                    {"BLOCK", TAD_VALUE_INT, 8, 0, nullptr}};
    tad_launch_options l = TAD_LAUNCH_OPTIONS_INIT;
    l.grid_x = 4;
    l.tensors = tensors;
    l.num_tensors = 2;
    l.values = values;
    l.num_values = 3;
    ASSERT_EQ(tad_launch_backward(k, &l), TAD_OK) << tad_error_last();
    ASSERT_EQ(fake_cuda::state().launches.size(), 1u);
    EXPECT_EQ(fake_cuda::state().launches[0].grid, (std::array<unsigned, 3>{4, 1, 1}));
    EXPECT_EQ(read<float>(fake_cuda::state().launches[0].params[4]), 1e-5f);

    l.num_values = 2;  // no BLOCK
    EXPECT_EQ(tad_launch_backward(k, &l), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_launch_backward: no value for parameter BLOCK of fwd");
    tad_value_arg bad[] = {{"N", 7, 8, 0, nullptr}};
    l.values = bad;
    l.num_values = 1;
    EXPECT_EQ(tad_launch_backward(k, &l), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_launch_backward: value N has unknown kind 7");
    tad_kernels_free(k);
    fake_cuda::reset();
}

}  // namespace
