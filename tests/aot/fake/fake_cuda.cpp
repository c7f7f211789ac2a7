// The fake libcuda (fake_cuda.h). Entry points use the driver API's C signatures with the types
// spelled as src/aot/cuda_api.h spells them; they are found by dlsym, so only names and ABI matter.
#include "fake_cuda.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "aot/cuda_api.h"

namespace cu = tad::aot::cu;

namespace fake_cuda {

State &state() {
    static State s;
    return s;
}

void reset() {
    for (const auto &[p, n] : state().allocations) std::free(reinterpret_cast<void *>(p));
    state() = State{};
}

}  // namespace fake_cuda

namespace {

using fake_cuda::state;

struct Function {
    std::string name;
    int static_shared = 0;
    std::vector<int> widths;
};

struct Module {
    std::vector<std::unique_ptr<Function>> functions;
};

int failing(const char *call) {
    auto it = state().fail.find(call);
    return it == state().fail.end() ? 0 : it->second;
}

// "a<i>+<offset>" inside the fake's i-th live allocation (by address order), else "0x<hex>".
std::string where(unsigned long long p) {
    size_t i = 0;
    for (const auto &[base, bytes] : state().allocations) {
        if (p >= base && p < base + bytes) return "a" + std::to_string(i) + "+" + std::to_string(p - base);
        ++i;
    }
    std::ostringstream os;
    os << "0x" << std::hex << p;
    return os.str();
}

void record(const std::string &line) { state().calls.push_back(line); }

const char *error_name(int e) {
    switch (e) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    default: return nullptr;
    }
}

const char *error_text(int e) {
    switch (e) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 100: return "no CUDA-capable device is detected";
    case 201: return "invalid device context";
    case 209: return "no kernel image is available for execution on the device";
    case 719: return "unspecified launch failure";
    default: return nullptr;
    }
}

cu::Context fake_context() { return reinterpret_cast<cu::Context>(static_cast<uintptr_t>(0x1000)); }

}  // namespace

#define FAKE_API extern "C" __attribute__((visibility("default")))

FAKE_API cu::Result cuInit(unsigned int) { return state().init_result; }

FAKE_API cu::Result cuGetErrorName(cu::Result e, const char **name) {
    *name = error_name(e);
    return *name ? 0 : 1;
}

FAKE_API cu::Result cuGetErrorString(cu::Result e, const char **text) {
    *text = error_text(e);
    return *text ? 0 : 1;
}

FAKE_API cu::Result cuCtxGetCurrent(cu::Context *ctx) {
    *ctx = state().context ? fake_context() : nullptr;
    return failing("cuCtxGetCurrent");
}

FAKE_API cu::Result cuCtxGetDevice(cu::Device *device) {
    *device = 0;
    return state().context ? 0 : 201;
}

FAKE_API cu::Result cuDeviceGetAttribute(int *value, int attribute, cu::Device) {
    switch (attribute) {
    case cu::kMultiprocessorCount: *value = state().sm_count; return 0;
    case cu::kComputeCapabilityMajor: *value = state().major; return 0;
    case cu::kComputeCapabilityMinor: *value = state().minor; return 0;
    case cu::kMaxSharedMemoryPerBlockOptin: *value = state().shared_optin; return 0;
    default: return 1;
    }
}

FAKE_API cu::Result cuModuleLoadData(cu::Module *module, const void *image) {
    if (int e = failing("cuModuleLoadData")) return e;
    auto m = std::make_unique<Module>();
    std::istringstream in(static_cast<const char *>(image));
    std::string word;
    while (in >> word) {
        if (word != "fake-cubin") return 1;
        auto f = std::make_unique<Function>();
        std::string widths;
        in >> f->name >> f->static_shared >> widths;
        for (size_t at = 0; at < widths.size();) {
            size_t comma = widths.find(',', at);
            if (comma == std::string::npos) comma = widths.size();
            f->widths.push_back(std::stoi(widths.substr(at, comma - at)));
            at = comma + 1;
        }
        m->functions.push_back(std::move(f));
    }
    record("cuModuleLoadData");
    *module = reinterpret_cast<cu::Module>(m.release());
    return 0;
}

FAKE_API cu::Result cuModuleUnload(cu::Module module) {
    delete reinterpret_cast<Module *>(module);
    return 0;
}

FAKE_API cu::Result cuModuleGetFunction(cu::Function *function, cu::Module module, const char *name) {
    for (const auto &f : reinterpret_cast<Module *>(module)->functions)
        if (f->name == name) {
            *function = reinterpret_cast<cu::Function>(f.get());
            return 0;
        }
    return 500;  // CUDA_ERROR_NOT_FOUND
}

FAKE_API cu::Result cuFuncGetAttribute(int *value, int attribute, cu::Function function) {
    if (attribute != cu::kFuncSharedSizeBytes) return 1;
    *value = reinterpret_cast<Function *>(function)->static_shared;
    return 0;
}

FAKE_API cu::Result cuFuncSetAttribute(cu::Function function, int attribute, int value) {
    record("cuFuncSetAttribute " + reinterpret_cast<Function *>(function)->name +
           " attribute=" + std::to_string(attribute) + " value=" + std::to_string(value));
    return 0;
}

FAKE_API cu::Result cuFuncSetCacheConfig(cu::Function function, int config) {
    record("cuFuncSetCacheConfig " + reinterpret_cast<Function *>(function)->name +
           " config=" + std::to_string(config));
    return 0;
}

FAKE_API cu::Result cuMemAlloc_v2(cu::DevicePtr *ptr, size_t bytes) {
    if (int e = failing("cuMemAlloc_v2")) return e;
    void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    *ptr = reinterpret_cast<uintptr_t>(p);
    state().allocations[*ptr] = bytes;
    record("cuMemAlloc_v2 bytes=" + std::to_string(bytes));
    return 0;
}

FAKE_API cu::Result cuMemFree_v2(cu::DevicePtr ptr) {
    auto it = state().allocations.find(ptr);
    if (it == state().allocations.end()) return 1;
    record("cuMemFree_v2 " + where(ptr));
    std::free(reinterpret_cast<void *>(ptr));
    state().allocations.erase(it);
    return 0;
}

// The 32-bit entry points cuda.h maps to the _v2 ones: a caller resolving the plain names gets these.
FAKE_API cu::Result cuMemAlloc(unsigned int *, unsigned int) {
    ++state().legacy_calls;
    return 1;
}

FAKE_API cu::Result cuMemFree(unsigned int) {
    ++state().legacy_calls;
    return 1;
}

FAKE_API cu::Result cuMemsetD8Async(cu::DevicePtr dst, unsigned char value, size_t count, cu::Stream) {
    if (int e = failing("cuMemsetD8Async")) return e;
    record("cuMemsetD8Async " + where(dst) + " value=" + std::to_string(value) + " bytes=" + std::to_string(count));
    std::memset(reinterpret_cast<void *>(dst), value, count);
    return 0;
}

FAKE_API cu::Result cuMemcpyDtoDAsync_v2(cu::DevicePtr dst, cu::DevicePtr src, size_t bytes, cu::Stream) {
    record("cuMemcpyDtoDAsync_v2 " + where(dst) + " <- " + where(src) + " bytes=" + std::to_string(bytes));
    std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), bytes);
    return 0;
}

// What a program owning its context and buffers calls (examples/aot): device 0, its primary context,
// streams that are names only, and copies between host memory and the fake's "device" memory.
FAKE_API cu::Result cuDeviceGet(cu::Device *device, int ordinal) {
    *device = ordinal;
    return ordinal == 0 ? 0 : 101;  // CUDA_ERROR_INVALID_DEVICE
}

FAKE_API cu::Result cuDevicePrimaryCtxRetain(cu::Context *ctx, cu::Device) {
    *ctx = fake_context();
    return 0;
}

FAKE_API cu::Result cuCtxSetCurrent(cu::Context ctx) {
    state().context = ctx != nullptr;
    return 0;
}

FAKE_API cu::Result cuStreamCreate(cu::Stream *stream, unsigned int) {
    static uintptr_t next = 0x5000;
    *stream = reinterpret_cast<cu::Stream>(next += 0x10);
    return 0;
}

FAKE_API cu::Result cuMemcpyHtoD_v2(cu::DevicePtr dst, const void *src, size_t bytes) {
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
    return 0;
}

FAKE_API cu::Result cuMemcpyDtoH_v2(void *dst, cu::DevicePtr src, size_t bytes) {
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
    return 0;
}

FAKE_API cu::Result cuStreamSynchronize(cu::Stream) {
    record("cuStreamSynchronize");
    return 0;
}

#ifndef FAKE_CUDA_NO_LAUNCH_EX
FAKE_API cu::Result cuLaunchKernelEx(const cu::LaunchConfig *config, cu::Function function, void **params, void **) {
    if (int e = failing("cuLaunchKernelEx")) return e;
    const Function &f = *reinterpret_cast<Function *>(function);
    fake_cuda::Launch l;
    l.function = f.name;
    l.grid = {config->gridDimX, config->gridDimY, config->gridDimZ};
    l.block = {config->blockDimX, config->blockDimY, config->blockDimZ};
    l.shared = config->sharedMemBytes;
    l.stream = config->hStream;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        std::array<unsigned, 3> v{};
        std::memcpy(v.data(), &config->attrs[i].value, sizeof v);
        l.attrs.emplace_back(config->attrs[i].id, v);
    }
    for (size_t i = 0; i < f.widths.size(); ++i) {
        const auto *p = static_cast<const unsigned char *>(params[i]);
        l.params.emplace_back(p, p + f.widths[i]);
    }
    record("cuLaunchKernelEx " + f.name);
    state().launches.push_back(std::move(l));
    return 0;
}
#endif
