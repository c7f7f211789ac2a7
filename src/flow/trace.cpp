#include "flow/trace.h"

#include "support/error.h"

namespace tad::flow {

namespace {

TensorRef tensor_ref(JsonRef ref) {
    if (ref.has("input")) return {TensorRef::Input, static_cast<int>(ref.at("input").integer())};
    if (ref.has("output")) return {TensorRef::Output, static_cast<int>(ref.at("output").integer())};
    return {TensorRef::Temp, static_cast<int>(ref.at("temp").integer())};
}

bool is_tensor(JsonRef a) {
    std::string kind = a.str_or("kind", "");
    return kind == "tensor" || kind == "tensor_desc";
}

}  // namespace

std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch) {
    return frontend::launch_bindings(kf.file.path, launch.at("args"), false);
}

std::map<std::string, TensorRef> tensors_of(JsonRef launch) {
    std::map<std::string, TensorRef> out;
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i)
        if (is_tensor(args[i])) out[args[i].at("name").str()] = tensor_ref(args[i].at("ref"));
    return out;
}

namespace {

// A kernel argument that views a complex tensor of the call (torch.view_as_real(z)) reads and
// writes real numbers, but the gradient buffers the module allocates follow the call's tensor:
// refused, naming both, rather than given a gradient of the wrong layout.
void refuse_complex_views(const frontend::KernelFile &kf, JsonRef trace) {
    static const std::pair<const char *, const char *> lists[] = {
        {"input", "inputs"}, {"output", "outputs"}, {"temp", "temps"}};
    JsonRef launches = trace.at("launches");
    for (size_t k = 0; k < launches.size(); ++k) {
        JsonRef args = launches[k].at("args");
        for (size_t i = 0; i < args.size(); ++i) {
            if (!is_tensor(args[i]) || !args[i].has("ref")) continue;
            JsonRef ref = args[i].at("ref");
            for (const auto &[kind, list] : lists) {
                if (!ref.has(kind) || !trace.has(list)) continue;
                const auto index = static_cast<size_t>(ref.at(kind).integer());
                if (index >= trace.at(list).size()) continue;
                JsonRef t = trace.at(list)[index];
                const std::string dtype = t.str_or("dtype", "");
                if (dtype.rfind("complex", 0) != 0) continue;
                const std::string what = std::string(kind) == "input" && t.has("name")
                                             ? "input '" + t.at("name").str() + "'"
                                             : std::string(kind) + " " + std::to_string(index);
                fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": stub '" + kf.stub.name + "' passes kernel '" +
                                              launches[k].at("kernel").str() + "' argument '" +
                                              args[i].at("name").str() + "' a real view of its " + dtype + " " + what +
                                              "; tad differentiates real tensors only (pass the stub real "
                                              "tensors, e.g. torch.view_as_real of the complex one)");
            }
        }
    }
}

}  // namespace

Call call_of(const frontend::KernelFile &kf, JsonRef trace) {
    refuse_complex_views(kf, trace);
    Call c{kf.file.path, kf.stub.name, kf.stub.params, kf.stub.grad_inputs, {}, {}, {}};
    c.saves_in_place = !trace.has("unsaved_inputs");
    JsonRef outs = trace.at("outputs");
    for (size_t j = 0; j < outs.size(); ++j) {
        // One shadow per storage: the cotangents of two views of it would have to be summed.
        if (outs[j].has("storage_of"))
            fail(TAD_ERR_UNSUPPORTED, where(kf.file.path, kf.stub.def->loc.line, kf.stub.def->loc.col + 1) +
                                          ": stub '" + kf.stub.name + "' returns output " + std::to_string(j) +
                                          ", a view of the storage of output " +
                                          std::to_string(outs[j].at("storage_of").integer()) +
                                          "; tad gives each storage one gradient, so return one view of it");
        c.output_inputs.push_back(outs[j].has("input") ? static_cast<int>(outs[j].at("input").integer()) : -1);
        if (outs[j].has("torch")) c.torch_outputs[static_cast<int>(j)] = outs[j].at("torch").str();
    }
    JsonRef launches = trace.at("launches");
    for (size_t k = 0; k < launches.size(); ++k) {
        std::map<std::string, std::string> &ops = c.torch_args.emplace_back();
        JsonRef args = launches[k].at("args");
        for (size_t i = 0; i < args.size(); ++i)
            if (args[i].has("torch")) ops[args[i].at("name").str()] = args[i].at("torch").str();
    }
    return c;
}

}  // namespace tad::flow
