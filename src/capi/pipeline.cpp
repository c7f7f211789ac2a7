#include "capi/pipeline.h"

#include <algorithm>

#include "ad/reverse.h"
#include "passes/passes.h"
#include "support/error.h"

namespace tad {

std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch) {
    std::vector<frontend::ArgBinding> out;
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        frontend::ArgBinding b;
        b.name = a.at("name").str();
        std::string kind = a.at("kind").str();
        if (kind == "tensor") {
            b.kind = frontend::ArgBinding::Tensor;
            if (!ir::dtype_from_torch(a.at("dtype").str(), &b.dtype))
                fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": kernel argument '" + b.name + "' has unsupported dtype " + a.at("dtype").str());
            if (a.int_or("offset", 0) != 0)
                fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": kernel argument '" + b.name +
                                              "' points into the middle of a stub tensor; offset views are not supported yet");
        } else if (kind == "int") {
            b.kind = frontend::ArgBinding::Int;
            b.ival = a.at("value").integer();
        } else if (kind == "float") {
            b.kind = frontend::ArgBinding::Float;
            b.fval = a.at("value").num();
        } else if (kind == "bool") {
            b.kind = frontend::ArgBinding::Bool;
            b.ival = a.at("value").boolean();
        } else if (kind == "none") {
            b.kind = frontend::ArgBinding::None;
        } else if (kind == "str") {
            b.kind = frontend::ArgBinding::Str;
            b.sval = a.at("value").str();
        } else {
            fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": unsupported construct 'kernel argument of kind " + kind + "': '" + b.name +
                                          "' must be a tensor, a number, a bool, a string or None");
        }
        out.push_back(b);
    }
    return out;
}

Generated build_backward(const frontend::KernelFile &kf, JsonRef trace) {
    JsonRef launches = trace.at("launches");
    if (launches.size() != 1)
        fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": stub '" + kf.stub.name + "' launched " + std::to_string(launches.size()) +
                                      " kernels; stubs launching several kernels are not supported yet");
    JsonRef launch = launches[0];
    Generated g;
    g.kernel = launch.at("kernel").str();
    g.bindings = bindings_of(kf, launch);
    g.forward = passes::cse(frontend::lower_kernel(kf, g.kernel, g.bindings));

    ad::GradSpec spec;
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        if (a.str_or("kind", "") != "tensor") continue;
        JsonRef ref = a.at("ref");
        if (ref.has("output")) spec.outputs.push_back(a.at("name").str());
        if (ref.has("input")) {
            size_t idx = static_cast<size_t>(ref.at("input").integer());
            const auto &gi = kf.stub.grad_inputs;
            if (idx < kf.stub.params.size() && std::find(gi.begin(), gi.end(), kf.stub.params[idx]) != gi.end())
                spec.wrt.push_back(a.at("name").str());
        }
    }
    if (spec.wrt.empty())
        fail(TAD_ERR_INVALID_ARGUMENT, kf.file.path + ": kernel '" + g.kernel + "' reads none of grad_inputs of stub '" + kf.stub.name + "'");
    if (spec.outputs.empty())
        fail(TAD_ERR_INVALID_ARGUMENT, kf.file.path + ": kernel '" + g.kernel + "' writes none of the tensors stub '" + kf.stub.name + "' returns");

    auto plan = passes::plan_gradient_writes(g.forward, spec.wrt, spec.outputs);
    std::vector<std::pair<std::string, std::string>> guards;
    auto fallback = plan;
    for (auto &[param, w] : fallback)
        if (!w.guards.empty()) {
            guards.insert(guards.end(), w.guards.begin(), w.guards.end());
            w = passes::GradWrite{};
        }
    g.variants.push_back({ad::reverse(g.forward, spec, plan, g.kernel + "_bwd"), guards});
    if (!guards.empty()) g.variants.push_back({ad::reverse(g.forward, spec, fallback, g.kernel + "_bwd_atomic"), {}});

    emit::ModuleInput in;
    in.kf = &kf;
    in.trace = trace;
    in.kernel = g.kernel;
    in.variants = g.variants;
    g.source = emit::emit_module(in);
    return g;
}

}  // namespace tad
