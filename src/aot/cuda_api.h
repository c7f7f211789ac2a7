// The few CUDA driver API types, constants and entry points the AOT executor uses, declared by tad
// itself: libtad builds without the CUDA toolkit and opens libcuda at run time (driver.h). The
// values are the driver API's (cuda.h of CUDA 12 and 13); tests/aot/cuda_header_test.cpp checks
// them against the toolkit's cuda.h where one is installed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tad::aot::cu {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr (the _v2, 64-bit one)
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;

constexpr Result kSuccess = 0;  // CUDA_SUCCESS

// CUdevice_attribute
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kMaxSharedMemoryPerBlockOptin = 97;
// CUfunction_attribute
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;
// CUfunc_cache
constexpr int kFuncCachePreferShared = 1;
// CUlaunchAttributeID
constexpr int kLaunchAttributeCooperative = 2;
constexpr int kLaunchAttributeClusterDimension = 4;
constexpr int kLaunchAttributeClusterSchedulingPolicyPreference = 5;
constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;
// CUclusterSchedulingPolicy
constexpr int kClusterSchedulingPolicySpread = 1;

// CUlaunchAttributeValue: a 64-byte union; these are the members tad sets.
union LaunchAttributeValue {
    char pad[64];
    int cooperative;
    struct {
        unsigned int x, y, z;
    } clusterDim;
    int clusterSchedulingPolicyPreference;
    int programmaticStreamSerializationAllowed;
};

// CUlaunchAttribute
struct LaunchAttribute {
    int id;
    char pad[8 - sizeof(int)];
    LaunchAttributeValue value;
};

// CUlaunchConfig
struct LaunchConfig {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    Stream hStream;
    LaunchAttribute *attrs;
    unsigned int numAttrs;
};

// The entry points, by the names libcuda exports: the _v2 ones where cuda.h maps the plain name to
// a _v2 symbol (cuMemAlloc -> cuMemAlloc_v2): the unsuffixed symbols are the old 32-bit ABI.
struct Api {
    Result (*cuInit)(unsigned int flags);
    Result (*cuGetErrorName)(Result error, const char **name);
    Result (*cuGetErrorString)(Result error, const char **text);
    Result (*cuCtxGetCurrent)(Context *ctx);
    Result (*cuCtxGetDevice)(Device *device);
    Result (*cuDeviceGetAttribute)(int *value, int attribute, Device device);
    Result (*cuModuleLoadData)(Module *module, const void *image);
    Result (*cuModuleUnload)(Module module);
    Result (*cuModuleGetFunction)(Function *function, Module module, const char *name);
    Result (*cuFuncGetAttribute)(int *value, int attribute, Function function);
    Result (*cuFuncSetAttribute)(Function function, int attribute, int value);
    Result (*cuFuncSetCacheConfig)(Function function, int config);
    Result (*cuMemAlloc_v2)(DevicePtr *ptr, size_t bytes);
    Result (*cuMemFree_v2)(DevicePtr ptr);
    Result (*cuMemsetD8Async)(DevicePtr dst, unsigned char value, size_t count, Stream stream);
    Result (*cuMemcpyDtoDAsync_v2)(DevicePtr dst, DevicePtr src, size_t bytes, Stream stream);
    Result (*cuStreamSynchronize)(Stream stream);
    Result (*cuLaunchKernelEx)(const LaunchConfig *config, Function function, void **params, void **extra);
};

}  // namespace tad::aot::cu
