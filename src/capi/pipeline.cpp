#include "capi/pipeline.h"

#include <algorithm>
#include <cctype>

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

namespace {

// "ACTIVATION='gelu'" -> "_ACTIVATION_gelu": a readable, valid suffix for kernel names.
std::string suffix_of(const std::vector<std::pair<std::string, std::string>> &key) {
    std::string s;
    for (const auto &[name, value] : key) {
        s += "_" + name + "_";
        for (char c : value)
            if (std::isalnum(static_cast<unsigned char>(c))) s += c;
            else if (c != '\'') s += '_';
    }
    return s;
}

std::vector<std::pair<std::string, std::string>> key_of(const ir::Function &f) {
    std::vector<std::pair<std::string, std::string>> key;
    for (const std::string &name : f.specialized)
        for (const ir::Constexpr &c : f.constexprs)
            if (c.name == name) key.emplace_back(name, c.literal);
    return key;
}

}  // namespace

Derived derive_backward(const frontend::KernelFile &kf, JsonRef trace, ad::LoopPolicy loops) {
    JsonRef launches = trace.at("launches");
    if (launches.size() != 1)
        fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": stub '" + kf.stub.name + "' launched " + std::to_string(launches.size()) +
                                      " kernels; stubs launching several kernels are not supported yet");
    JsonRef launch = launches[0];
    Derived g;
    g.kernel = launch.at("kernel").str();
    g.bindings = bindings_of(kf, launch);
    g.forward = passes::cse(frontend::lower_kernel(kf, g.kernel, g.bindings));
    g.specialization.key = key_of(g.forward);

    ad::GradSpec spec;
    spec.loops = loops;
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
    g.spec = spec;
    std::string base = g.kernel + "_bwd" + suffix_of(g.specialization.key);
    g.specialization.variants.push_back({ad::reverse(g.forward, spec, plan, base), guards});
    if (!guards.empty()) g.specialization.variants.push_back({ad::reverse(g.forward, spec, fallback, base + "_atomic"), {}});
    return g;
}

namespace {
std::vector<std::pair<std::string, std::string>> traced_key(const frontend::KernelFile &kf, JsonRef trace) {
    JsonRef launch = trace.at("launches")[0];
    return key_of(frontend::lower_kernel(kf, launch.at("kernel").str(), bindings_of(kf, launch)));
}
}  // namespace

bool has_specializations(const frontend::KernelFile &kf, JsonRef trace) { return !traced_key(kf, trace).empty(); }

bool new_specialization(const frontend::KernelFile &kf, JsonRef trace, const std::vector<JsonRef> &seen) {
    auto key = traced_key(kf, trace);
    for (JsonRef s : seen)
        if (traced_key(kf, s) == key) return false;
    return true;
}

std::string emit_backward_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces, ad::LoopPolicy loops) {
    emit::ModuleInput in;
    in.kf = &kf;
    in.trace = traces.front();
    for (JsonRef t : traces) {
        Derived d = derive_backward(kf, t, loops);
        in.kernel = d.kernel;
        in.tangents.push_back(derive_jvp(kf, t, d));
        in.specializations.push_back(std::move(d.specialization));
    }
    return emit::emit_module(in);
}

}  // namespace tad
