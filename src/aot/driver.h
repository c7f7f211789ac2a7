// libcuda, opened with dlopen when kernels are loaded: libtad itself never links the CUDA driver,
// so it builds and runs where there is none. Every call that fails throws tad::Error with
// TAD_ERR_NO_GPU and a message naming the call and the driver's error:
//   "cuModuleLoadData: CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution
//   on the device)".
#pragma once

#include <string>

#include "aot/cuda_api.h"

namespace tad::aot {

class Driver {
public:
    // Opens `path` (a file name the dynamic loader searches for, or a path) and resolves the entry
    // points of cu::Api; calls cuInit(0). TAD_ERR_NO_GPU "cannot load the CUDA driver '<path>':
    // <dlerror>" when it does not open, "'<path>' has no <symbol>: ..." when one is missing.
    explicit Driver(const std::string &path);
    ~Driver();
    Driver(const Driver &) = delete;
    Driver &operator=(const Driver &) = delete;

    const cu::Api &api() const { return api_; }
    const std::string &path() const { return path_; }

    // Throws for a result other than success: "<call>: <name> (<description>)".
    void check(cu::Result r, const char *call) const;

    // The calling thread's current context; TAD_ERR_NO_GPU when there is none.
    cu::Context current_context(const char *fn) const;
    int device_attribute(int attribute) const;  // of the current context's device

private:
    std::string path_;
    void *handle_ = nullptr;
    cu::Api api_{};
};

}  // namespace tad::aot
