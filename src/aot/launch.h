// The backward of one forward launch as driver-API work: build() follows the exported plan
// (plan.h's semantics) exactly as the generated Python launcher does (src/emit/launcher.cpp,
// module_runtime.py) and turns it into a Program: zero fills, copies and kernel launches over the
// caller's buffers and one workspace. Building needs no GPU and enqueues nothing, so every error
// in the caller's description (a missing argument, a specialization the export lacks) is found
// before any work reaches the stream. The executor (kernels.h) then issues the program.
//
// What the Python launcher does with torch, the program does with the driver or with tad's support
// kernels (docs/aot.md): zero fills are cuMemsetD8Async (all-zero bytes are +0.0 in every float
// type: exact); a re-gridded run's partial rows are summed by tad_row_sum, in row order, in
// float32; a gradient kept in float32 for a 16-bit tensor is cast by tad_cast; a gradient returned
// through another buffer is copied with cuMemcpyDtoDAsync.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "aot/manifest.h"
#include "aot/signature.h"

namespace tad::aot {

// A tensor argument of the forward launch. `grad` is its gradient's buffer, laid out as the tensor
// (same dtype, shape and strides; the executor may write anywhere in its storage span, elements
// 0 to 1 + sum((shape[d] - 1) * strides[d]) - 1): read for an output (the incoming gradient; 0:
// zeros), written for a stub input whose gradient the backward returns (0: not wanted). `saved`:
// a copy of the tensor taken before the forward launch, where the plan saves one.
struct TensorArg {
    uint64_t data = 0, grad = 0, saved = 0;
    std::string dtype;  // torch's name
    std::vector<int64_t> shape, strides;  // strides in elements
};

// A scalar or constexpr argument of the forward launch.
struct Value {
    enum Kind { Int, Float, Bool, Literal } kind = Int;
    int64_t i = 0;
    double f = 0;
    std::string literal;  // a constexpr's Python literal that is no number ("'tanh'")
};

struct Request {
    std::string kernel;  // the forward kernel; "" for the manifest's
    std::array<int64_t, 3> grid{1, 1, 1};
    int num_warps = 4, num_stages = 3;  // the forward launch's (triton's defaults)
    std::map<std::string, TensorArg> tensors;  // by pointer parameter
    std::map<std::string, Value> values;  // by parameter, constexprs included
};

struct Action {
    enum Kind { Memset, Copy, Launch } kind = Memset;
    Ptr dst, src;  // Memset, Copy
    uint64_t bytes = 0;  // Memset, Copy
    std::string kernel;  // Launch: the kernel (KernelInfo name) and its cubin
    const Cubin *cubin = nullptr;
    std::array<unsigned, 3> grid{1, 1, 1};
    Packed params;
};

// A caller pointer a program uses: a field of a tensor argument.
struct CallerPointer {
    enum Field { Data, Grad, Saved } field = Data;
    std::string tensor;  // the forward parameter
};

struct Program {
    std::vector<Action> actions;
    uint64_t workspace = 0;  // bytes
    std::vector<CallerPointer> callers;  // Ptr::Caller slots
};

// `sm_count`: the device's multiprocessors (a re-gridded run's program count depends on it).
Program build(const Manifest &m, const Request &r, int sm_count);

// What the program of `r` depends on: everything but the caller's pointer values, of which only
// whether each is 0 or 16-byte aligned and which gradient buffers coincide. Launches of one key
// share a program (kernels.h keeps them).
std::string program_key(const Request &r);

// The address of each of the program's caller pointers in launch `r`.
std::vector<uint64_t> caller_addresses(const Program &p, const Request &r);

}  // namespace tad::aot
