#include "aot/kernels.h"

#include <cstring>

#include "support/error.h"
#include "support/fs.h"

namespace tad::aot {

namespace {

constexpr int kStaticSharedLimit = 49152;  // 48 KB: above it a kernel must opt in
constexpr uint64_t kWorkspaceGrain = 1 << 20;
constexpr size_t kMostPrograms = 64;

std::string capability(int c) { return std::to_string(c / 10) + "." + std::to_string(c % 10); }

}  // namespace

Kernels::Kernels(const std::string &dir, const std::string &libcuda) : dir_(dir), m_(read_manifest(dir)) {
    driver_ = std::make_unique<Driver>(libcuda);
    context_ = driver_->current_context("tad_kernels_load");
    const int cc = 10 * driver_->device_attribute(cu::kComputeCapabilityMajor) +
                   driver_->device_attribute(cu::kComputeCapabilityMinor);
    if (cc != m_.capability)
        fail(TAD_ERR_NO_GPU, fs::join(dir, kManifestFile) + ": exported for compute capability " +
                                 capability(m_.capability) + " (" + m_.device + "); this device has " + capability(cc));
    sm_count_ = driver_->device_attribute(cu::kMultiprocessorCount);
    const int optin = driver_->device_attribute(cu::kMaxSharedMemoryPerBlockOptin);
    try {
        for (const auto &[name, k] : m_.kernels)
            for (const Cubin &c : k.cubins) load(k, c, optin);
    } catch (...) {
        for (cu::Module mod : modules_) driver_->api().cuModuleUnload(mod);
        throw;
    }
}

Kernels::~Kernels() {
    for (cu::Module mod : modules_) driver_->api().cuModuleUnload(mod);
    if (workspace_) driver_->api().cuMemFree_v2(workspace_);
}

// Triton's load_binary: the module, its entry, and past 48 KB of shared memory the opt-in to all
// the device allows beyond the kernel's static shared memory.
void Kernels::load(const KernelInfo &k, const Cubin &c, int shared_optin) {
    if (c.shared > shared_optin)
        fail(TAD_ERR_NO_GPU, k.name + ": cubin " + c.file + " needs " + std::to_string(c.shared) +
                                 " bytes of shared memory; this device allows " + std::to_string(shared_optin));
    const std::string image = fs::read_file(fs::join(dir_, c.file));
    const cu::Api &api = driver_->api();
    cu::Module mod = nullptr;
    driver_->check(api.cuModuleLoadData(&mod, image.data()), ("cuModuleLoadData(" + c.file + ")").c_str());
    modules_.push_back(mod);
    cu::Function fn = nullptr;
    driver_->check(api.cuModuleGetFunction(&fn, mod, c.function.c_str()),
                   ("cuModuleGetFunction(" + c.function + ")").c_str());
    if (c.shared > kStaticSharedLimit && shared_optin > kStaticSharedLimit) {
        driver_->check(api.cuFuncSetCacheConfig(fn, cu::kFuncCachePreferShared), "cuFuncSetCacheConfig");
        int shared_static = 0;
        driver_->check(api.cuFuncGetAttribute(&shared_static, cu::kFuncSharedSizeBytes, fn), "cuFuncGetAttribute");
        driver_->check(api.cuFuncSetAttribute(fn, cu::kFuncMaxDynamicSharedSizeBytes, shared_optin - shared_static),
                       "cuFuncSetAttribute");
    }
    functions_[&c] = fn;
}

void Kernels::launch(const Request &r, cu::Stream stream) {
    if (driver_->current_context("tad_launch_backward") != context_)
        fail(TAD_ERR_INVALID_ARGUMENT,
             "the current CUDA context is not the one the kernels were loaded in (make it current, or load them "
             "again in this one)");
    const Program &p = program(r);
    const std::vector<uint64_t> callers = caller_addresses(p, r);
    reserve(p.workspace, stream);
    for (const Action &a : p.actions) issue(a, callers, stream);
}

const Program &Kernels::program(const Request &r) {
    std::string key = program_key(r);
    auto it = programs_.find(key);
    if (it != programs_.end()) return it->second;
    Program p = build(m_, r, sm_count_);
    if (programs_.size() >= kMostPrograms) programs_.clear();
    return programs_.emplace(std::move(key), std::move(p)).first->second;
}

void Kernels::reserve(uint64_t bytes, cu::Stream stream) {
    if (bytes <= capacity_) return;
    const cu::Api &api = driver_->api();
    if (workspace_) {  // earlier launches on the stream may still use it
        driver_->check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
        driver_->check(api.cuMemFree_v2(workspace_), "cuMemFree_v2");
        workspace_ = 0;
        capacity_ = 0;
    }
    const uint64_t size = (bytes + kWorkspaceGrain - 1) / kWorkspaceGrain * kWorkspaceGrain;
    driver_->check(api.cuMemAlloc_v2(&workspace_, size), "cuMemAlloc_v2");
    capacity_ = size;
}

void Kernels::issue(const Action &a, const std::vector<uint64_t> &callers, cu::Stream stream) {
    const cu::Api &api = driver_->api();
    if (a.kind == Action::Memset) {
        driver_->check(api.cuMemsetD8Async(address(a.dst, callers), 0, a.bytes, stream), "cuMemsetD8Async");
        return;
    }
    if (a.kind == Action::Copy) {
        driver_->check(api.cuMemcpyDtoDAsync_v2(address(a.dst, callers), address(a.src, callers), a.bytes, stream),
                       "cuMemcpyDtoDAsync_v2");
        return;
    }
    std::vector<unsigned char> bytes = a.params.bytes;
    for (const auto &[at, ptr] : a.params.patches) {
        const cu::DevicePtr p = address(ptr, callers);
        std::memcpy(bytes.data() + at, &p, sizeof p);
    }
    std::vector<void *> params;
    for (size_t at : a.params.offsets) params.push_back(bytes.data() + at);
    const Cubin &c = *a.cubin;
    cu::LaunchAttribute attrs[4];
    std::memset(attrs, 0, sizeof attrs);
    unsigned n = 0;
    if (c.pdl) {
        attrs[n].id = cu::kLaunchAttributeProgrammaticStreamSerialization;
        attrs[n++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (c.cooperative) {
        attrs[n].id = cu::kLaunchAttributeCooperative;
        attrs[n++].value.cooperative = 1;
    }
    cu::LaunchConfig config{a.grid[0],
                            a.grid[1],
                            a.grid[2],
                            32u * static_cast<unsigned>(c.num_warps),
                            1,
                            1,
                            static_cast<unsigned>(c.shared),
                            stream,
                            attrs,
                            0};
    if (c.num_ctas != 1) {  // Triton 3.6: a grid of clusters, spread over the SMs
        config.gridDimX *= static_cast<unsigned>(c.cluster_dims[0]);
        config.gridDimY *= static_cast<unsigned>(c.cluster_dims[1]);
        config.gridDimZ *= static_cast<unsigned>(c.cluster_dims[2]);
        attrs[n].id = cu::kLaunchAttributeClusterDimension;
        attrs[n].value.clusterDim.x = static_cast<unsigned>(c.cluster_dims[0]);
        attrs[n].value.clusterDim.y = static_cast<unsigned>(c.cluster_dims[1]);
        attrs[n++].value.clusterDim.z = static_cast<unsigned>(c.cluster_dims[2]);
        attrs[n].id = cu::kLaunchAttributeClusterSchedulingPolicyPreference;
        attrs[n++].value.clusterSchedulingPolicyPreference = cu::kClusterSchedulingPolicySpread;
    }
    config.numAttrs = n;
    driver_->check(api.cuLaunchKernelEx(&config, functions_.at(&c), params.data(), nullptr),
                   ("cuLaunchKernelEx(" + c.function + ")").c_str());
}

}  // namespace tad::aot
