#include "driver/cpu_verify.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "driver/launch_nodes.h"
#include "driver/pipeline.h"
#include "driver/residuals.h"
#include "driver/trace_request.h"
#include "frontend/parser.h"
#include "runtime/python_dir.h"
#include "support/error.h"
#include "support/text.h"
#include "verify/oracle.h"

namespace tad::driver {

namespace {

// The oracle's check of one traced call: the plans derived from that very trace, with the residuals
// generate saves where it saves them (driver/residuals.h).
Json check_trace(const CpuVerifyInput &in, const ast::File &module, JsonRef trace, std::mt19937_64 &rng) {
    Chain chain = derive_chain(in.kf, trace, in.loops);
    std::string unused;
    const Derive derive = [&in](const frontend::KernelFile &f, const std::vector<JsonRef> &ts) {
        return std::vector<Chain>{derive_chain(f, ts.front(), in.loops)};
    };
    // The module says which residuals generate kept (over every trace); this trace's choice must be
    // the same, or the plan would name kernels the module does not have.
    const std::vector<std::string> kept = residual_params(module, in.kf);
    std::optional<Residuals> r;
    if (!kept.empty()) r = save_residuals(in.kf, {trace}, {chain}, derive, &unused);
    if (!kept.empty() && (!r || residual_params(r->kf.file, in.kf) != kept))
        fail(TAD_ERR_INTERNAL,
             "CPU oracle: this trace's residual stores are not the ones the module carries (" + join(kept) + ")");
    const frontend::KernelFile &kf = r ? r->kf : in.kf;
    if (r) {
        chain = std::move(r->chains.front());
        trace = r->traces.front();
    }
    plan::Derivation d = merge(kf, {chain}, trace);
    plan::Plan backward = plan::backward(d);
    std::string why = plan::tangent_unsupported(d);
    std::optional<plan::Plan> tangent;
    if (why.empty()) tangent = plan::tangent(d);
    verify::OracleInput oi{kf, module, trace, {}, backward, tangent ? &*tangent : nullptr, why};
    for (const Derived &l : chain.launches) oi.launches.push_back({l.kernel, l.bindings, l.tensors});
    return verify::check_call(oi, rng);
}

// What failed in the whole-stub check's entry (the worker's verify entry, docs/worker-protocol.md):
// the gradients that disagree, then the worker's own message (an error, the dot-product test).
std::string whole_stub_failure(JsonRef stub) {
    std::string out;
    JsonRef grads = stub.get("grads");
    for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i].at("ok").boolean()) continue;
        JsonRef why = grads[i].get("message");  // a gradient that is not finite says so
        if (why.valid() && why.is_string()) {
            out += (out.empty() ? "" : "; ") + ("gradient of '" + grads[i].at("name").str() + "': " + why.str());
            continue;
        }
        char buf[128];
        std::snprintf(buf, sizeof buf, "max rel err %.3g (tolerance %.3g)", grads[i].num_or("max_rel_err", NAN),
                      stub.num_or("fd_rtol", NAN));
        out += (out.empty() ? "" : "; ") + ("gradient of '" + grads[i].at("name").str() +
                                            "' disagrees with finite differences of the stub: " + buf);
    }
    JsonRef message = stub.get("message");
    if (message.valid() && message.is_string()) out += (out.empty() ? "" : "; ") + message.str();
    return out.empty() ? "an output of the generated forward differs from the stub's" : out;
}

// A stub whose torch code autograd differentiates (launch_nodes.h), or a module tad did not write:
// the plan oracle cannot run that code (or would run the compiler's plan, not the module's), so the
// whole-stub check alone decides.
Json whole_stub_only(bool foreign) {
    Json entry = Json::object();
    entry.set("status", "pass");
    entry.set("plan", foreign ? "skipped: the module was not written by tad, so only the whole-stub check runs "
                                "what it runs"
                              : "skipped: the stub's torch code computes from its grad inputs, which only the "
                                "whole-stub check runs");
    return entry;
}

// The whole stub: the worker runs the emitted module (forward, then backward) and the stub with
// every launch on the interpreter (tad_interpret), and compares the gradients with central
// differences of the stub. This covers what the plan oracle cannot see: the stub's own torch code
// and the module's launcher as Python runs it.
Json check_whole_stub(const CpuVerifyInput &in, JsonRef dims, Worker &worker) {
    std::string library = library_path();
    if (library.empty()) {
        Json skipped = Json::object();
        skipped.set("status", "skipped");
        skipped.set("message", "no shared libtad to run the stub's launches on the interpreter with");
        return skipped;
    }
    Json args = Json::object();
    args.set("file", in.import_path);
    args.set("stub", in.kf.stub.name);
    args.set("generated", in.backward_path);
    JsonRef entry = args.set_array("dims_list").push_object();
    for (const std::string &k : dims.keys())
        if (k != "dtype") entry.set_copy(k, dims.at(k));  // the worker sets it: float64
    args.set_array("dtypes").push("float64");
    args.set("seed", static_cast<int64_t>(in.seed));
    args.set("interpreter", library);
    args.set_bool("reference", false);
    return Json::copy(worker.request("verify", std::move(args)).at("results")[0]);
}

// The plan oracle's entry with the whole-stub check added: both must pass.
void add_whole_stub(Json &entry, Json stub) {
    std::string status = stub.str_or("status", "error");
    if (status != "pass" && status != "skipped") {
        std::string why = "whole stub: " + whole_stub_failure(stub);
        JsonRef prev = entry.get("message");
        entry.set("message", prev.valid() && prev.is_string() ? prev.str() + "; " + why : why);
        if (entry.str_or("status", "") == "pass") entry.set("status", status == "fail" ? "fail" : "error");
    }
    entry.set_copy("stub", stub);
}

// The kernels a module was generated to see launched, in order: its `_KERNELS` tuple.
std::vector<std::string> generated_launches(const ast::File &module) {
    std::vector<std::string> out;
    for (const auto &s : module.module->list("body"))
        if (s->is("Assign") && s->list("targets")[0]->is("Name") && s->list("targets")[0]->str("id") == "_KERNELS" &&
            s->node("value")->is("Tuple"))
            for (const auto &e : s->node("value")->list("elts"))
                if (e->is("Constant") && std::holds_alternative<std::string>(*e->find("value")))
                    out.push_back(std::get<std::string>(*e->find("value")));
    return out;
}

// Whether the module runs each launch as its own autograd node (it has a `_NODES` table): the plan
// oracle has no whole-call plan to run, and the whole-stub check alone decides.
bool generated_nodes(const ast::File &module) {
    for (const auto &s : module.module->list("body"))
        if (s->is("Assign") && s->list("targets")[0]->is("Name") && s->list("targets")[0]->str("id") == "_NODES")
            return true;
    return false;
}

std::string py_tuple_of(const std::vector<std::string> &names) {
    std::string out;
    for (const std::string &n : names) out += "'" + n + "', ";
    if (names.size() == 1) return "(" + out.substr(0, out.size() - 1) + ")";
    return "(" + (out.empty() ? "" : out.substr(0, out.size() - 2)) + ")";
}

// A call that launches other kernels than the module was generated for (a stub choosing its kernels
// by shape or flags): the module refuses it at run time, and the oracle has no backward to run.
void check_launch_sequence(const ast::File &module, JsonRef trace) {
    std::vector<std::string> got, want = generated_launches(module);
    for (size_t k = 0; k < trace.at("launches").size(); ++k) got.push_back(trace.at("launches")[k].at("kernel").str());
    if (!want.empty() && got != want)
        fail(TAD_ERR_UNSUPPORTED, "the stub launches " + py_tuple_of(got) + " here, but the module was generated " +
                                      "for a call that launches " + py_tuple_of(want) +
                                      " (the stub chooses its kernels by shape or flags; a module serves the launch " +
                                      "sequence it was generated from: generate from a SWEEP entry or call that " +
                                      "launches these kernels)");
}

int64_t input_elements(JsonRef trace) {
    int64_t elements = 0;
    for (size_t k = 0; k < trace.at("inputs").size(); ++k) {
        JsonRef d = trace.at("inputs")[k];
        if (d.at("kind").str() != "tensor") continue;
        int64_t n = 1;
        for (size_t s = 0; s < d.at("shape").size(); ++s) n *= d.at("shape")[s].integer();
        elements += n;
    }
    return elements;
}

// The elements of an entry's tensors before anything is allocated: make_args on the meta device
// ('sizes'), or, for a make_args that cannot run there, a trace without data.
int64_t entry_elements(const CpuVerifyInput &in, JsonRef dims, Worker &worker) {
    Json args = Json::object();
    args.set("file", in.import_path);
    args.set_copy("dims", dims);
    try {
        return worker.request("sizes", std::move(args)).at("elements").integer();
    } catch (const WorkerError &e) {
        if (e.kind() != "exception") throw;
    }
    return input_elements(worker.request("trace", trace_request(in.import_path, in.kf.stub, dims, false)));
}

Json skipped_entry(const std::string &message) {
    Json entry = Json::object();
    entry.set("status", "skipped");
    entry.set("message", message);
    return entry;
}

// One dims entry: sized first, so that large entries are skipped without allocating them, then
// traced with data and checked.
Json check_dims(const CpuVerifyInput &in, const ast::File &module, JsonRef dims, Worker &worker, std::mt19937_64 &rng) {
    const int64_t elements = entry_elements(in, dims, worker);
    if (elements > in.max_elements)
        return skipped_entry(std::to_string(elements) + " input elements exceed the CPU interpreter's limit of " +
                             std::to_string(in.max_elements));
    Json trace = worker.request("trace", trace_request(in.import_path, in.kf.stub, dims, true));
    check_launch_sequence(module, trace);
    const bool nodes = has_torch_code(trace) || generated_nodes(module) || in.whole_stub_only;
    Json entry = nodes ? whole_stub_only(in.whole_stub_only) : check_trace(in, module, trace, rng);
    Json stub = check_whole_stub(in, dims, worker);
    if (nodes && stub.str_or("status", "") == "skipped") entry.set("status", "skipped");  // nothing checked it
    if (nodes && stub.has("grads")) entry.set_copy("grads", stub.at("grads"));  // the report's numbers
    add_whole_stub(entry, std::move(stub));
    return entry;
}

std::string label_of(JsonRef dims) {
    std::string label;
    for (const std::string &k : dims.keys())
        if (k != "required") label += " " + k + "=" + (dims.at(k).is_string() ? dims.at(k).str() : dims.at(k).dump());
    return label;
}

Json error_entry(const std::string &message) {
    Json entry = Json::object();
    entry.set("status", "error");
    entry.set("message", message);
    return entry;
}

// check_dims with its failures made entries. A broken environment fails the whole verification; a
// failing user file fails its entry; an optional entry ("required": false) that runs out of memory,
// or whose worker dies (the OOM killer), is skipped.
Json entry_of(const CpuVerifyInput &in, const ast::File &module, JsonRef dims, Worker &worker, std::mt19937_64 &rng) {
    const bool optional = dims.get("required").is_bool() && !dims.get("required").boolean();
    try {
        return check_dims(in, module, dims, worker, rng);
    } catch (const WorkerError &e) {
        if (e.kind() == "import" || e.kind() == "no_gpu") throw;
        if (optional && e.kind() == "oom") return skipped_entry(std::string("optional entry: ") + e.what());
        return error_entry(e.what());
    } catch (const Error &e) {
        if (optional && e.status() == TAD_ERR_WORKER) return skipped_entry(std::string("optional entry: ") + e.what());
        if (e.status() == TAD_ERR_CANCELLED || e.status() == TAD_ERR_TIMEOUT || e.status() == TAD_ERR_WORKER) throw;
        return error_entry(e.what());
    }
}

}  // namespace

Json cpu_verify(const CpuVerifyInput &in, JsonRef dims_list, Worker &worker, const ProgressFn &progress) {
    ast::File module = frontend::parse_source(in.backward_path, in.backward_source);
    std::mt19937_64 rng(in.seed ? in.seed : 0x7ad);
    Json report = Json::object();
    report.set("kind", "verify");
    report.set("mode", "cpu");
    report.set_null("device");
    JsonRef results = report.set_array("results");
    for (size_t i = 0; i < dims_list.size(); ++i) {
        Json dims = Json::copy(dims_list[i]);
        dims.set("dtype", "float32");
        if (progress && !progress(std::to_string(i + 1) + "/" + std::to_string(dims_list.size()) + label_of(dims),
                                  double(i) / dims_list.size()))
            fail(TAD_ERR_CANCELLED, "verify: cancelled");
        Json entry = entry_of(in, module, dims, worker, rng);
        entry.set_copy("dims", dims);
        entry.set("dtype", "float64");
        results.push_copy(entry);
    }
    verify::summarize_verify(report);
    return report;
}

}  // namespace tad::driver
