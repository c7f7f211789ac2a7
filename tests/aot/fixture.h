// Hand-made exports for the executor's tests: a plan written out step by step, fake cubins (text the
// fake libcuda reads: fake/fake_cuda.h) whose recorded specializations spell out what Triton would
// compile for a launch, and helpers that read the recorded launches back.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "aot/launch.h"
#include "aot/manifest.h"
#include "fake/fake_cuda.h"

namespace tad::aot::testing {

// A fresh directory under the build tree.
std::string fresh_dir(const std::string &name);

// A cubin parameter: "*fp32" / "i32" / "fp32" with its divisibility, or a constexpr and its value.
CubinParam param(const std::string &name, const std::string &type, bool divisible = false);
CubinParam constant(const std::string &name, const std::string &value);

// A cubin of these parameters (widths from their types, plus the two scratch pointers) whose fake
// image declares `function` with `static_shared` bytes; written into `dir` as `file`.
Cubin cubin(const std::string &dir, const std::string &file, const std::string &function,
            const std::vector<CubinParam> &params, int static_shared = 0);

plan::Arg tensor_arg(plan::TensorRef t, const std::string &name);
plan::Arg shadow_arg(plan::TensorRef t);
plan::Arg scalar_arg(const std::string &name);
plan::Arg kind_arg(plan::Arg::Kind k, plan::TensorRef t = {});

constexpr plan::TensorRef kX{plan::TensorRef::Input, 0}, kW{plan::TensorRef::Input, 1}, kY{plan::TensorRef::Output, 0};

// The backward of `fwd(X, Y, N, eps, BLOCK: constexpr)`: X input 0, Y output 0 (y = f(x)), run by
// kernel fwd_bwd(X, DX, DY, N, eps, BLOCK) on the forward's grid: DX written mirroring Y, DY the
// incoming gradient.
Manifest elementwise(const std::string &dir);

// The LayerNorm-shaped backward: `fwd(X, W, Y, N, BLOCK)`, X input 0, W input 1, Y output 0; kernel
// fwd_bwd(X, DX, DY, W, DW, N, G, DW_slab, BLOCK) re-gridded along axis 0, DW a sum of partial
// rows (Init::Partials); with cubins for `dtype` ("float32" or "float16") at N = 7, BLOCK = 8, G =
// 10, and the support kernels it needs.
// axes 2: re-gridded over grid axes 0 and 1 (G0, G1).
Manifest regridded(const std::string &dir, const std::string &dtype, int axes = 1);

// A stashing backward of `fwd(X, Y, N, BLOCK)`: kernel fwd_bwd(X, DY, S, N, BLOCK) stores a value
// into stash S (BLOCK elements per program, typed like X), then fwd_bwd_DX(S, DX, N, BLOCK) loads
// it; with cubins for `dtype` at N = 7, BLOCK = 8.
Manifest stashed(const std::string &dir, const std::string &dtype);

// A 2-D float tensor argument over `storage` (a host buffer standing in for device memory).
TensorArg tensor(const std::vector<float> &storage, int64_t rows, int64_t cols, uint64_t grad = 0,
                 const std::string &dtype = "float32");
inline uint64_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

template <typename T> T read(const std::vector<unsigned char> &bytes) {
    T v{};
    std::memcpy(&v, bytes.data(), sizeof v);
    return v;
}

}  // namespace tad::aot::testing
