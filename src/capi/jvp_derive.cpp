// Forward mode for the generated module: the tangent kernel of a derived launch, or why there is none.
#include "ad/forward.h"
#include "capi/pipeline.h"
#include "support/error.h"

namespace tad {

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
