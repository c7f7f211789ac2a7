// Forward mode for the generated module: the tangent kernel of a derived launch, or why there is none.
#include "ad/forward.h"
#include "capi/pipeline.h"
#include "passes/passes.h"
#include "support/error.h"

namespace tad {

std::string jvp_unsupported(const frontend::KernelFile &kf, const Chain &c) {
    if (!c.aliases.empty())
        return kf.file.path + ": stub '" + kf.stub.name + "' returns an input it updates in place; forward mode does not handle updated buffers yet";
    // The tangent kernels run after the whole forward, on the tensors as the stub left them: a
    // launch whose inputs a later launch (or itself) overwrites would read the wrong contents.
    for (size_t k = 0; k < c.launches.size(); ++k) {
        const Derived &d = c.launches[k];
        if (d.spec.wrt.empty()) continue;  // no tangent kernel
        passes::MemoryParams m = passes::memory_params(d.forward);
        for (const auto &[param, writer] : d.saved_before)
            if (writer > k || m.loaded.count(param))
                return kf.file.path + ": launch " + std::to_string(k) + " of '" + d.kernel + "' reads '" + param + "', which " +
                       (writer > k ? "launch " + std::to_string(writer) + " overwrites" : "it updates in place") +
                       "; forward mode does not handle updated buffers yet";
    }
    return "";
}

emit::Tangent derive_jvp(const Derived &d) {
    emit::Tangent t;
    t.key = d.specialization.key;
    // The backward's name is <kernel>_bwd<suffix>: the tangent kernel takes the same suffix, so
    // that both follow the specialization the same way.
    const std::string &bwd = d.specialization.variants.front().bwd.fn.name;
    std::string name = d.kernel + "_jvp" + bwd.substr(d.kernel.size() + 4);
    // Forward mode is an extra: a kernel it cannot handle, or an internal error of the transform,
    // leaves the module without it but never costs the backward.
    try {
        t.jvp = ad::jvp(d.forward, d.spec, name);
    } catch (const Error &e) {
        if (e.status() != TAD_ERR_UNSUPPORTED && e.status() != TAD_ERR_INTERNAL) throw;
        t.unsupported = e.what();
    }
    return t;
}

}  // namespace tad
