// tad_export: the current candidate's backward plan (derived again from traces at the export's
// dims, as generate derives it) and the cubins the worker collects by running the candidate's
// module on the GPU, written as a manifest (src/aot) that tad_kernels_load reads.
#include "driver/export.h"

#include "driver/launch_nodes.h"
#include "driver/pipeline.h"
#include "driver/session_impl.h"
#include "driver/trace_request.h"
#include "passes/pipeline_loops.h"

namespace tad::driver {

namespace {

std::vector<std::string> split_csv(const std::string &csv) {
    std::vector<std::string> out;
    for (size_t s = 0, e; s <= csv.size(); s = e + 1) {
        e = csv.find(',', s);
        if (e == std::string::npos) e = csv.size();
        if (e > s) out.push_back(csv.substr(s, e - s));
    }
    return out;
}

[[noreturn]] void refuse(const std::string &why) {
    fail(TAD_ERR_UNSUPPORTED, "tad_export: " + why + " (tad_launch_backward does not handle it yet; docs/aot.md)");
}

// What the trace already shows the executor cannot run: several launches, torch code between the
// stub's launches, an argument that starts inside its tensor, a tensor descriptor.
void check_trace(const frontend::KernelFile &kf, JsonRef trace) {
    JsonRef launches = trace.at("launches");
    if (launches.size() != 1)
        refuse("stub '" + kf.stub.name + "' launches " + std::to_string(launches.size()) +
               " kernels; tad_launch_backward runs the backward of a stub that launches one");
    if (has_torch_code(trace)) refuse("stub '" + kf.stub.name + "' computes with torch from its grad inputs");
    JsonRef args = launches[0].at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string kind = args[i].at("kind").str(), name = args[i].at("name").str();
        if (kind == "tensor_desc") refuse("argument " + name + " is a tensor descriptor");
        if (kind == "tensor" && args[i].int_or("offset", 0) != 0)
            refuse("argument " + name + " starts " + std::to_string(args[i].int_or("offset", 0)) +
                   " elements into its tensor");
    }
}

// The rank of the stub tensor an argument's "ref" names ({"input": i}, {"output": j}, {"temp": k}).
int ndim_of(JsonRef trace, JsonRef ref) {
    static const std::pair<const char *, const char *> lists[] = {
        {"input", "inputs"}, {"output", "outputs"}, {"temp", "temps"}};
    for (const auto &[kind, list] : lists) {
        if (!ref.has(kind)) continue;
        JsonRef entries = trace.at(list);
        const int64_t want = ref.at(kind).integer();
        for (size_t e = 0; e < entries.size(); ++e) {
            JsonRef x = entries[e];
            const int64_t at = x.has("index") ? x.at("index").integer() : x.int_or("id", static_cast<int64_t>(e));
            if (at == want && x.has("shape")) return static_cast<int>(x.at("shape").size());
        }
    }
    fail(TAD_ERR_INTERNAL, "tad_export: the trace has no tensor for " + ref.dump());
}

std::vector<aot::ForwardParam> forward_params(JsonRef trace, const std::map<std::string, plan::TensorRef> &tensors) {
    std::vector<aot::ForwardParam> out;
    JsonRef args = trace.at("launches")[0].at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        aot::ForwardParam p;
        p.name = args[i].at("name").str();
        p.kind = args[i].at("kind").str();
        if (p.kind == "tensor") {
            p.tensor = tensors.at(p.name);
            p.ndim = ndim_of(trace, args[i].at("ref"));
        }
        out.push_back(p);
    }
    return out;
}

Json export_request(Session::Impl &impl, const std::string &id, JsonRef list, const std::vector<std::string> &dtypes,
                    const std::string &out_dir, const plan::Plan &p) {
    Json args = Json::object();
    args.set("file", impl.import_path(id));
    args.set("stub", impl.forward->stub.name);
    args.set("generated", fs::join(fs::join(fs::join(impl.store.work_dir(), "snapshots"), id), "backward.py"));
    args.set_copy("dims_list", list);
    JsonRef d = args.set_array("dtypes");
    for (const std::string &t : dtypes) d.push(t);
    args.set("out_dir", fs::absolute(out_dir));
    JsonRef kernels = args.set_array("kernels");
    for (const plan::Kernel &k : p.kernels) kernels.push(k.fn.name);
    return args;
}

aot::KernelInfo kernel_info(const std::string &name, JsonRef cubins) {
    aot::KernelInfo k;
    k.name = name;
    for (size_t i = 0; cubins.valid() && i < cubins.size(); ++i)
        k.cubins.push_back(aot::cubin_from_json(name, cubins[i]));
    return k;
}

std::string report(const aot::Manifest &m, const std::string &out_dir, size_t cases) {
    Json r = Json::object();
    r.set("kind", "export");
    r.set("dir", fs::absolute(out_dir));
    r.set("manifest", fs::join(fs::absolute(out_dir), aot::kManifestFile));
    r.set("device", m.device);
    r.set("triton", m.triton_version);
    r.set("cases", static_cast<int64_t>(cases));
    JsonRef kernels = r.set_array("kernels");
    for (const auto &[name, k] : m.kernels) {
        JsonRef e = kernels.push_object();
        e.set("name", name);
        e.set("cubins", static_cast<int64_t>(k.cubins.size()));
    }
    return r.dump(true);
}

}  // namespace

aot::Manifest manifest_of(const frontend::KernelFile &kf, const plan::Plan &p, JsonRef trace,
                          const std::map<std::string, plan::TensorRef> &tensors, JsonRef reply) {
    aot::Manifest m;
    m.tad_version = tad_version();
    m.triton_version = reply.at("triton").str();
    m.device = reply.at("device").str();
    m.capability = static_cast<int>(reply.at("capability").integer());
    m.stub = kf.stub.name;
    m.kernel = trace.at("launches")[0].at("kernel").str();
    m.params = forward_params(trace, tensors);
    m.plan = p;
    // A kernel of a branch the export's launches never took has no cubin: a launch that takes it
    // is refused by name (aot::pick).
    JsonRef compiled = reply.at("kernels");
    std::string names;
    bool any = false;
    for (const plan::Kernel &k : p.kernels) {
        aot::KernelInfo info = kernel_info(k.fn.name, compiled.get(k.fn.name));
        any = any || !info.cubins.empty();
        names += (names.empty() ? "" : ", ") + k.fn.name;
        info.largest_tile = plan::largest_tile(k.fn);
        info.loop_stages = passes::has_pipelined_loop(k.fn);
        m.kernels[k.fn.name] = std::move(info);
    }
    if (!any)
        fail(TAD_ERR_WORKER, "tad_export: the module launched none of the plan's kernels (" + names +
                                 ") at the export's dims and dtypes");
    for (const char *name : {aot::kRowSum, aot::kCast})
        if (compiled.has(name)) m.kernels[name] = kernel_info(name, compiled.at(name));
    return m;
}

std::string Session::export_kernels(const ExportOptions &opts) {
    const frontend::KernelFile &kf = impl_->need_forward("tad_export");
    const std::string id = impl_->need_current("tad_export");
    const store::Candidate c = impl_->store.load(id);
    const ad::LoopPolicy loops = loop_policy(c.loops, "tad_export");
    const std::string file = impl_->import_path(id);
    Json list = impl_->dims_list(opts.dims_json, file);
    const std::string csv = impl_->dtypes_csv(opts.dtypes, file);
    const std::vector<std::string> dtypes = split_csv(csv.empty() ? "float32,float16" : csv);
    std::vector<Json> traces;
    for (size_t i = 0; i < list.size(); ++i)
        for (const std::string &dtype : dtypes) {
            Json dims = Json::copy(list[i]);
            dims.set("dtype", dtype);
            impl_->report("trace", "tracing " + kf.stub.name + " with " + dims.dump());
            Json t = impl_->get_worker().request("trace", trace_request(file, kf.stub, dims, false),
                                                 impl_->progress("trace"));
            check_trace(kf, t);
            std::vector<JsonRef> seen(traces.begin(), traces.end());
            if (traces.empty() || new_specialization(kf, t, seen)) traces.push_back(std::move(t));
        }
    if (traces.empty()) fail(TAD_ERR_INVALID_ARGUMENT, "tad_export: no dims to export (the list is empty)");
    std::vector<Chain> chains;
    for (const Json &t : traces) chains.push_back(derive_chain(kf, t, loops));
    const plan::Plan p = plan::backward(merge(kf, chains, traces[0]));
    if (std::string why = aot::unsupported(p); !why.empty()) fail(TAD_ERR_UNSUPPORTED, "tad_export: " + why);

    fs::make_dirs(opts.out_dir);
    impl_->report("export", "compiling the backward of " + kf.stub.name + " on the GPU");
    Json reply = impl_->get_worker().request("export", export_request(*impl_, id, list, dtypes, opts.out_dir, p),
                                             impl_->progress("export"));
    const aot::Manifest m = manifest_of(kf, p, traces[0], chains[0].launches[0].tensors, reply);
    aot::write_manifest(opts.out_dir, m);
    return report(m, opts.out_dir, list.size() * dtypes.size());
}

}  // namespace tad::driver
