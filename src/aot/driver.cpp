#include "aot/driver.h"

#include <dlfcn.h>

#include "support/error.h"

namespace tad::aot {

namespace {

template <typename F> void resolve(void *handle, const std::string &path, const char *name, F *&out) {
    dlerror();
    void *sym = dlsym(handle, name);
    if (!sym) {
        const char *why = dlerror();
        fail(TAD_ERR_NO_GPU, "'" + path + "' has no " + name + ": " + (why ? why : "symbol not found") +
                                 " (tad needs a driver of CUDA 12 or later)");
    }
    out = reinterpret_cast<F *>(sym);
}

}  // namespace

Driver::Driver(const std::string &path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char *why = dlerror();
        fail(TAD_ERR_NO_GPU, "cannot load the CUDA driver '" + path + "': " + (why ? why : "unknown error") +
                                 " (running exported kernels needs an NVIDIA driver; TAD_LIBCUDA names another "
                                 "library)");
    }
    try {
#define TAD_RESOLVE(name) resolve(handle_, path_, #name, api_.name)
        TAD_RESOLVE(cuInit);
        TAD_RESOLVE(cuGetErrorName);
        TAD_RESOLVE(cuGetErrorString);
        TAD_RESOLVE(cuCtxGetCurrent);
        TAD_RESOLVE(cuCtxGetDevice);
        TAD_RESOLVE(cuDeviceGetAttribute);
        TAD_RESOLVE(cuModuleLoadData);
        TAD_RESOLVE(cuModuleUnload);
        TAD_RESOLVE(cuModuleGetFunction);
        TAD_RESOLVE(cuFuncGetAttribute);
        TAD_RESOLVE(cuFuncSetAttribute);
        TAD_RESOLVE(cuFuncSetCacheConfig);
        TAD_RESOLVE(cuMemAlloc_v2);
        TAD_RESOLVE(cuMemFree_v2);
        TAD_RESOLVE(cuMemsetD8Async);
        TAD_RESOLVE(cuMemcpyDtoDAsync_v2);
        TAD_RESOLVE(cuStreamSynchronize);
        TAD_RESOLVE(cuLaunchKernelEx);
#undef TAD_RESOLVE
        check(api_.cuInit(0), "cuInit");
    } catch (...) {
        dlclose(handle_);
        throw;
    }
}

Driver::~Driver() {
    if (handle_) dlclose(handle_);
}

void Driver::check(cu::Result r, const char *call) const {
    if (r == cu::kSuccess) return;
    const char *name = nullptr, *text = nullptr;
    if (api_.cuGetErrorName(r, &name) != cu::kSuccess || !name) name = nullptr;
    if (api_.cuGetErrorString(r, &text) != cu::kSuccess || !text) text = nullptr;
    std::string message = std::string(call) + ": " + (name ? name : "CUresult " + std::to_string(r));
    if (text) message += std::string(" (") + text + ")";
    fail(TAD_ERR_NO_GPU, message);
}

cu::Context Driver::current_context(const char *fn) const {
    cu::Context ctx = nullptr;
    check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (!ctx)
        fail(TAD_ERR_NO_GPU, std::string(fn) +
                                 ": no current CUDA context on this thread (make one current first: "
                                 "cuDevicePrimaryCtxRetain + cuCtxSetCurrent, or any CUDA runtime call)");
    return ctx;
}

int Driver::device_attribute(int attribute) const {
    cu::Device device = 0;
    check(api_.cuCtxGetDevice(&device), "cuCtxGetDevice");
    int value = 0;
    check(api_.cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute");
    return value;
}

}  // namespace tad::aot
