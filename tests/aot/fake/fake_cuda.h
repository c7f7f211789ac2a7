// A fake libcuda for the AOT executor's tests (tests/aot): a shared library exporting the driver
// entry points src/aot uses, which libtad opens through TAD_LIBCUDA / tad_kernels_options.libcuda
// exactly as it opens the real one. It runs nothing on a GPU: device pointers are host addresses,
// memsets and copies happen on host memory, and every call is recorded, kernel launches with the
// bytes of each parameter at the width the "cubin" declares.
//
// A fake cubin is text: one line per entry point,
//   fake-cubin <function> <static shared bytes> <width>,<width>,...
// (the widths of the entry's parameters, in order).
//
// The test links the library too, so that fake_cuda::state() is the instance libtad's dlopen sees.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

namespace fake_cuda {

struct Launch {
    std::string function;
    std::array<unsigned, 3> grid{}, block{};
    unsigned shared = 0;
    void *stream = nullptr;
    // Each attribute's id and the first three unsigned ints of its value.
    std::vector<std::pair<int, std::array<unsigned, 3>>> attrs;
    std::vector<std::vector<unsigned char>> params;
};

struct State {
    // What the fake device reports.
    int sm_count = 132, major = 9, minor = 0, shared_optin = 232448;
    bool context = true;  // whether a context is current
    int init_result = 0;  // cuInit's result
    std::map<std::string, int> fail;  // entry point -> the result it returns instead of success
    // What happened, in order: "cuMemsetD8Async dst=<n> bytes=<n>" with addresses relative to the
    // allocation they fall in ("ws+256"), or absolute ("0x...") for memory the fake did not allocate.
    std::vector<std::string> calls;
    std::vector<Launch> launches;
    std::map<unsigned long long, size_t> allocations;  // live cuMemAlloc_v2 blocks
    int legacy_calls = 0;  // calls of the 32-bit entry points the _v2 ones replace
};

__attribute__((visibility("default"))) State &state();
__attribute__((visibility("default"))) void reset();  // frees what the fake allocated, forgets all

}  // namespace fake_cuda
