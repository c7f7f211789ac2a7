// tad's own declarations of the driver API (src/aot/cuda_api.h) against the CUDA toolkit's cuda.h,
// where one is installed (CMake adds its directory and TAD_HAVE_CUDA_H): the same values, and the
// launch structs laid out alike.
#include <gtest/gtest.h>

#include <cstddef>

#include "aot/cuda_api.h"

#ifdef TAD_HAVE_CUDA_H
#include <cuda.h>

namespace cu = tad::aot::cu;

static_assert(cu::kSuccess == CUDA_SUCCESS);
static_assert(cu::kMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(cu::kComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(cu::kComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(cu::kMaxSharedMemoryPerBlockOptin == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(cu::kFuncSharedSizeBytes == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
static_assert(cu::kFuncMaxDynamicSharedSizeBytes == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(cu::kFuncCachePreferShared == CU_FUNC_CACHE_PREFER_SHARED);
static_assert(cu::kLaunchAttributeCooperative == CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
static_assert(cu::kLaunchAttributeClusterDimension == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
static_assert(cu::kLaunchAttributeClusterSchedulingPolicyPreference ==
              CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
static_assert(cu::kLaunchAttributeProgrammaticStreamSerialization ==
              CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
static_assert(cu::kClusterSchedulingPolicySpread == CU_CLUSTER_SCHEDULING_POLICY_SPREAD);
static_assert(sizeof(cu::DevicePtr) == sizeof(CUdeviceptr));
static_assert(sizeof(cu::LaunchAttributeValue) == sizeof(CUlaunchAttributeValue));
static_assert(sizeof(cu::LaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(cu::LaunchAttribute, value) == offsetof(CUlaunchAttribute, value));
static_assert(sizeof(cu::LaunchConfig) == sizeof(CUlaunchConfig));
static_assert(offsetof(cu::LaunchConfig, sharedMemBytes) == offsetof(CUlaunchConfig, sharedMemBytes));
static_assert(offsetof(cu::LaunchConfig, hStream) == offsetof(CUlaunchConfig, hStream));
static_assert(offsetof(cu::LaunchConfig, attrs) == offsetof(CUlaunchConfig, attrs));
static_assert(offsetof(cu::LaunchConfig, numAttrs) == offsetof(CUlaunchConfig, numAttrs));

TEST(CudaHeader, MatchesTheToolkits) { SUCCEED() << "checked at compile time against " << CUDA_VERSION; }
#else
TEST(CudaHeader, MatchesTheToolkits) { GTEST_SKIP() << "[SKIP] no CUDA toolkit header (cuda.h) to check against"; }
#endif
