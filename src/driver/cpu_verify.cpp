#include "driver/cpu_verify.h"

#include <random>

#include "driver/pipeline.h"
#include "driver/trace_request.h"
#include "frontend/parser.h"
#include "support/error.h"
#include "verify/oracle.h"

namespace tad::driver {

namespace {

// The oracle's check of one traced call: the plans derived from that very trace.
Json check_trace(const CpuVerifyInput &in, const ast::File &module, JsonRef trace, std::mt19937_64 &rng) {
    Chain chain = derive_chain(in.kf, trace, in.loops);
    plan::Derivation d = merge(in.kf, {chain}, trace);
    plan::Plan backward = plan::backward(d);
    std::string why = plan::tangent_unsupported(d);
    std::optional<plan::Plan> tangent;
    if (why.empty()) tangent = plan::tangent(d);
    verify::OracleInput oi{in.kf, module, trace, {}, backward, tangent ? &*tangent : nullptr, why};
    for (const Derived &l : chain.launches) oi.launches.push_back({l.kernel, l.bindings, l.tensors});
    return verify::check_call(oi, rng);
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

// One dims entry: traced for its size first (no data), so that large entries are skipped without
// shipping them, then with data and checked.
Json check_dims(const CpuVerifyInput &in, const ast::File &module, JsonRef dims, Worker &worker, std::mt19937_64 &rng) {
    int64_t elements = input_elements(worker.request("trace", trace_request(in.import_path, in.kf.stub, dims, false)));
    if (elements > in.max_elements) {
        Json entry = Json::object();
        entry.set("status", "skipped");
        entry.set("message", std::to_string(elements) + " input elements exceed the CPU interpreter's limit of " +
                                 std::to_string(in.max_elements));
        return entry;
    }
    return check_trace(in, module, worker.request("trace", trace_request(in.import_path, in.kf.stub, dims, true)), rng);
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
        Json entry;
        try {
            entry = check_dims(in, module, dims, worker, rng);
        } catch (const WorkerError &e) {
            // A broken environment fails the whole verification; a failing user file fails its case.
            if (e.kind() == "import" || e.kind() == "no_gpu") throw;
            entry = error_entry(e.what());
        } catch (const Error &e) {
            if (e.status() == TAD_ERR_CANCELLED || e.status() == TAD_ERR_TIMEOUT || e.status() == TAD_ERR_WORKER) throw;
            entry = error_entry(e.what());
        }
        entry.set_copy("dims", dims);
        entry.set("dtype", "float64");
        results.push_copy(entry);
    }
    verify::summarize_verify(report);
    return report;
}

}  // namespace tad::driver
