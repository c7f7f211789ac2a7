// An exported backward loaded on the GPU: what tad_kernels_load returns. Loading reads the manifest,
// opens libcuda, loads every cubin into the calling thread's current context (as Triton's
// load_binary: above 48 KB of shared memory a kernel opts in to the device's maximum), and keeps a
// workspace for the shadows, partial rows and scratch a launch needs. launch() builds the launch's
// program (launch.h) and issues it on the caller's stream.
//
// One thread and one stream at a time: the workspace is reused by every launch, so launches on two
// streams must not overlap. It grows when a launch needs more: the old one is freed after
// synchronizing the launch's stream.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aot/driver.h"
#include "aot/launch.h"
#include "aot/manifest.h"

namespace tad::aot {

class Kernels {
public:
    // `libcuda`: the driver library to open. Errors: read_manifest()'s, Driver's, TAD_ERR_NO_GPU
    // when the device is not the export's kind ("exported for compute capability 9.0 (NVIDIA H100
    // 80GB HBM3); this device has 8.0") or a kernel needs more shared memory than it has.
    Kernels(const std::string &dir, const std::string &libcuda);
    ~Kernels();
    Kernels(const Kernels &) = delete;
    Kernels &operator=(const Kernels &) = delete;

    // Enqueues the backward of the launch `r` describes on `stream` (null: the legacy default
    // stream) in the context the kernels were loaded in, which must be current.
    void launch(const Request &r, cu::Stream stream);

    const Manifest &manifest() const { return m_; }

private:
    std::string dir_;
    Manifest m_;
    std::unique_ptr<Driver> driver_;
    cu::Context context_ = nullptr;
    int sm_count_ = 1;
    std::vector<cu::Module> modules_;
    std::map<const Cubin *, cu::Function> functions_;
    cu::DevicePtr workspace_ = 0;
    uint64_t capacity_ = 0;
    // The programs of earlier launches by program_key(): a launch like an earlier one but for its
    // buffers costs no build.
    std::map<std::string, Program> programs_;

    void load(const KernelInfo &k, const Cubin &c, int shared_optin);
    const Program &program(const Request &r);
    void reserve(uint64_t bytes, cu::Stream stream);
    void issue(const Action &a, const std::vector<uint64_t> &callers, cu::Stream stream);
    cu::DevicePtr address(Ptr p, const std::vector<uint64_t> &callers) const {
        return p.base == Ptr::Workspace ? workspace_ + p.value : p.base == Ptr::Caller ? callers.at(p.slot) : p.value;
    }
};

}  // namespace tad::aot
