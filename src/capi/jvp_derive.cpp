// Forward mode for the generated module: the tangent kernel of a derived call, or why there is none.
#include "ad/forward.h"
#include "capi/pipeline.h"
#include "support/error.h"

namespace tad {

emit::Tangent derive_jvp(const frontend::KernelFile &kf, JsonRef trace, const Derived &d) {
    emit::Tangent t;
    t.key = d.specialization.key;
    JsonRef launches = trace.at("launches");
    if (launches.size() != 1) {
        t.unsupported = "stub '" + kf.stub.name + "' launched " + std::to_string(launches.size()) +
                        " kernels; forward mode is generated for stubs launching one";
        return t;
    }
    if (!d.spec.overwritten.empty()) {
        t.unsupported = "kernel '" + d.kernel + "' overwrites '" + d.spec.overwritten.front() +
                        "', which carries gradient (an in-place update); forward mode does not handle in-place updates yet";
        return t;
    }
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
        return t;
    }
    // The launcher passes stub inputs for the primal pointers the tangent kernel reads; it has no
    // temporaries or outputs of the stub to pass.
    JsonRef args = launches[0].at("args");
    for (size_t i = 0; i < t.jvp->fn.params.size(); ++i) {
        const ir::Param &p = t.jvp->fn.params[i];
        if (p.kind != ir::ParamKind::Pointer || t.jvp->origins[i].kind != ad::ParamOrigin::Primal) continue;
        for (size_t k = 0; k < args.size(); ++k)
            if (args[k].at("name").str() == p.name && !args[k].at("ref").has("input")) {
                t.unsupported = kf.file.path + ": the tangent kernel of '" + d.kernel + "' reads '" + p.name +
                                "', which is not a stub input (saving intermediate buffers is not supported yet)";
                t.jvp.reset();
                return t;
            }
    }
    return t;
}

}  // namespace tad
