#include "driver/session.h"

#include <algorithm>
#include <cstdlib>

#include "driver/cpu_verify.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/session_impl.h"
#include "driver/trace_request.h"
#include "frontend/parser.h"
#include "runtime/worker.h"
#include "store/store.h"
#include "support/error.h"
#include "support/fs.h"
#include "verify/oracle.h"

namespace tad::driver {

namespace {

// The worker's entries in the report schema of docs/reports.md.
Json report_results(JsonRef reply) {
    Json results = Json::copy(reply.at("results"));
    for (size_t i = 0; i < results.size(); ++i) {
        JsonRef e = results[i];
        if (e.has("reference") && !e.has("method"))
            e.set("method", e.at("reference").str() == "reference()" ? "reference" : "finite_differences");
        if (!e.has("message")) e.set_null("message");
    }
    return results;
}

void set_device(Json &report, Worker &w) {
    JsonRef hello = w.hello();
    if (hello.valid() && hello.has("device") && !hello.at("device").is_null())
        report.set("device", hello.at("device").str());
    else
        report.set_null("device");
}

}  // namespace

Session::Session(SessionOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}
Session::~Session() = default;

void Session::load_forward(const std::string &path, const std::optional<std::string> &source) {
    std::string abs = fs::absolute(path);
    std::string text;
    if (source) {
        if (source->size() > TAD_MAX_FORWARD_BYTES)
            fail(TAD_ERR_IO, path + ": cannot read file: source of " + std::to_string(source->size()) +
                                 " bytes, over the limit of " + std::to_string(TAD_MAX_FORWARD_BYTES));
        text = *source;
        if (!fs::exists(abs)) {
            std::string dir = fs::join(impl_->opts.work_dir, "sources");
            fs::make_dirs(dir);
            abs = fs::absolute(fs::join(dir, path.substr(path.find_last_of('/') + 1)));
            fs::write_file_atomic(abs, text);
        }
    } else {
        text = fs::read_file(path, TAD_MAX_FORWARD_BYTES);
    }
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source(path, text));
    impl_->forward = std::move(kf);
    impl_->forward_path = abs;
    impl_->forward_source = text;
}

std::string Session::generate(const GenerateOptions &opts) {
    const frontend::KernelFile &kf = impl_->need_forward("tad_generate");
    if (opts.backend == "llm") return optimize(*this, opts);
    if (!opts.backend.empty() && opts.backend != "ad")
        fail(TAD_ERR_INVALID_ARGUMENT, "tad_generate: unknown backend '" + opts.backend + "' (available: ad, llm)");
    ad::LoopPolicy loops = loop_policy(opts.loops, "tad_generate");
    Json trace;
    // The dims whose specializations get a backward: the SWEEP, or a given list of dims.
    Json scan;
    if (!opts.launch_json.empty()) {
        trace = Json::parse(opts.launch_json, "launch record");
    } else {
        Json dims = Json::object();
        if (!opts.dims_json.empty()) {
            dims = Json::parse(opts.dims_json, "dims");
            if (dims.is_array()) {
                if (dims.size() == 0) fail(TAD_ERR_INVALID_ARGUMENT, "tad_generate: dims_json is an empty list");
                scan = Json::copy(dims);
                dims = Json::copy(scan[0]);
            }
        } else {
            Json list = impl_->dims_list("", impl_->forward_path);
            if (list.size() == 0)
                fail(TAD_ERR_INVALID_ARGUMENT, kf.file.path + ": SWEEP is empty; pass dims to trace with");
            dims = Json::copy(list[0]);
        }
        impl_->report("trace", "tracing " + kf.stub.name + " with " + dims.dump());
        trace = impl_->get_worker().request("trace", trace_request(impl_->forward_path, kf.stub, dims, false),
                                            impl_->progress("trace"));
    }
    // A kernel specialized on constexpr values gets one backward per specialization, and a stub
    // that branches may launch other kernels for other dims: trace the rest of the SWEEP for the
    // specializations and launch sequences it uses (only when the kernel has any or the stub
    // branches, and no dims were given).
    std::vector<Json> traces;
    traces.push_back(std::move(trace));
    bool scanning = opts.launch_json.empty() && (opts.dims_json.empty() || scan.valid());
    if (scanning && (kf.stub.branches || has_specializations(kf, traces[0]))) {
        Json list = scan.valid() ? Json::copy(scan) : impl_->dims_list("", impl_->forward_path);
        for (size_t i = 1; i < list.size(); ++i) {
            impl_->report("trace", "probing " + kf.stub.name + " with " + list[i].dump() + " on the meta device");
            Json probe = impl_->probe_entry(kf, list[i]);
            std::vector<JsonRef> seen(traces.begin(), traces.end());
            if (probe.valid() && !new_specialization(kf, probe, seen)) continue;
            impl_->report("trace", "tracing " + kf.stub.name + " with " + list[i].dump() +
                                       " for its specializations and launches");
            Json t = impl_->trace_entry(kf, list[i]);
            if (t.valid() && new_specialization(kf, t, seen)) traces.push_back(std::move(t));
        }
    }
    impl_->report("generate", "differentiating " + kf.stub.name);
    std::vector<JsonRef> refs(traces.begin(), traces.end());
    std::string explanation;
    std::string source = emit_backward_module(kf, refs, loops, &explanation);
    store::Candidate c;
    c.label = "";
    c.parent = impl_->current();
    c.forward_path = impl_->forward_path;
    c.forward_source = impl_->forward_source;
    c.backend = "ad";
    c.loops = opts.loops;
    c.kind = "generate";
    c.backward_source = source;
    c.launch_json = traces[0].dump(true);
    c.explain = explanation;
    impl_->own_current = impl_->store.add(c);
    return *impl_->own_current;
}

std::string Session::candidate_source(const std::string &id) const {
    return impl_->store.load(id.empty() ? impl_->need_current("tad_candidate_source") : id).backward_source;
}

std::string Session::retrieve(const tad::retrieve::Options &opts) const {
    return tad::retrieve::retrieve(impl_->need_forward("tad_retrieve"), opts);
}

std::string Session::candidate_explain(const std::string &id) const {
    return impl_->store.load(id.empty() ? impl_->need_current("tad_candidate_explain") : id).explain.value_or("");
}

std::string Session::verify(const VerifyOptions &opts, bool *passed) {
    const frontend::KernelFile &kf = impl_->need_forward("tad_verify");
    std::string id = impl_->need_current("tad_verify");
    store::Candidate c = impl_->store.load(id);
    std::string file = impl_->import_path(id);
    Json list = impl_->dims_list(opts.dims_json, file);
    Json report;
    if (opts.cpu) {
        CpuVerifyInput in{kf,
                          c.backward_source,
                          fs::join(fs::join(fs::join(impl_->store.work_dir(), "snapshots"), id), "backward.py"),
                          file,
                          opts.max_elements,
                          opts.seed,
                          loop_policy(c.loops, "tad_verify"),
                          c.backend == "llm"};
        report = cpu_verify(in, list, impl_->get_cpu_worker(), impl_->progress("verify"));
    } else {
        Json args = Json::object();
        args.set("file", file);
        args.set("stub", kf.stub.name);
        args.set("generated", fs::join(fs::join(fs::join(impl_->store.work_dir(), "snapshots"), id), "backward.py"));
        args.set_copy("dims_list", list);
        push_dtypes(args, impl_->dtypes_csv(opts.dtypes, file));
        args.set("seed", static_cast<int64_t>(opts.seed));
        Json reply = impl_->get_worker().request("verify", std::move(args), impl_->progress("verify"));
        report = Json::object();
        report.set("kind", "verify");
        report.set("mode", "gpu");
        set_device(report, impl_->get_worker());
        report.set_copy("results", report_results(reply));
        verify::summarize_verify(report);
    }
    impl_->store.set_report(id, "verify", report.dump(true));
    bool ok = report.at("passed").boolean();
    if (passed) *passed = ok;
    return report.dump(true);
}

std::string Session::bench(const BenchOptions &opts) {
    const frontend::KernelFile &kf = impl_->need_forward("tad_bench");
    std::string id = impl_->need_current("tad_bench");
    std::string file = impl_->import_path(id);
    Json args = Json::object();
    args.set("file", file);
    args.set("stub", kf.stub.name);
    args.set("generated", fs::join(fs::join(fs::join(impl_->store.work_dir(), "snapshots"), id), "backward.py"));
    args.set_copy("dims_list", impl_->dims_list(opts.dims_json, file));
    push_dtypes(args, impl_->dtypes_csv(opts.dtypes, file));
    args.set("reps", static_cast<int64_t>(opts.reps > 0 ? opts.reps : 100));
    Json reply = impl_->get_worker().request("bench", std::move(args), impl_->progress("bench"));
    Json report = Json::object();
    report.set("kind", "bench");
    set_device(report, impl_->get_worker());
    JsonRef results = report.set_copy("results", report_results(reply));
    std::vector<double> speedups;
    for (size_t i = 0; i < results.size(); ++i) {
        JsonRef r = results[i];
        JsonRef ref = r.get("ref_bwd_ms"), bwd = r.get("bwd_ms");
        if (ref.is_number() && bwd.is_number() && bwd.num() > 0) speedups.push_back(ref.num() / bwd.num());
    }
    JsonRef summary = report.set_object("summary");
    if (speedups.empty()) {
        summary.set_null("median_bwd_speedup_vs_ref");
    } else {
        std::sort(speedups.begin(), speedups.end());
        size_t n = speedups.size();
        summary.set("median_bwd_speedup_vs_ref",
                    n % 2 ? speedups[n / 2] : 0.5 * (speedups[n / 2 - 1] + speedups[n / 2]));
    }
    impl_->store.set_report(id, "bench", report.dump(true));
    return report.dump(true);
}

std::string Session::snapshot(const std::string &label) {
    std::string id = impl_->need_current("tad_snapshot");
    store::Candidate c = impl_->store.load(id);
    c.label = label;
    c.parent = id;
    c.kind = "snapshot";
    impl_->own_current = impl_->store.add(c);
    return *impl_->own_current;
}

void Session::rollback(const std::string &id) {
    store::Candidate c = impl_->store.load(id);
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source(c.forward_path, c.forward_source));
    impl_->store.set_current(id);
    impl_->own_current = id;
    impl_->forward = std::move(kf);
    impl_->forward_path = c.forward_path;
    impl_->forward_source = c.forward_source;
}

std::string Session::snapshot_list() const { return impl_->store.list_json(); }

const frontend::KernelFile &Session::forward(const char *what) const { return impl_->need_forward(what); }
const std::string &Session::forward_path() const { return impl_->forward_path; }
const std::string &Session::forward_source() const { return impl_->forward_source; }
std::optional<std::string> Session::current_id() const { return impl_->current(); }
const std::string &Session::work_dir() const { return impl_->store.work_dir(); }
void Session::notify(const std::string &stage, const std::string &message, double fraction) {
    if (impl_->opts.progress && !impl_->opts.progress(stage, message, fraction))
        fail(TAD_ERR_CANCELLED, stage + ": cancelled");
}

std::string Session::add_candidate(const CandidateDraft &draft) {
    impl_->need_forward("add_candidate");
    store::Candidate c;
    c.label = draft.label;
    c.parent = draft.parent;
    c.forward_path = impl_->forward_path;
    c.forward_source = impl_->forward_source;
    c.backend = draft.backend;
    c.loops = draft.loops;
    c.kind = "generate";
    c.backward_source = draft.source;
    return impl_->store.add(c, false);
}

void Session::clear_current() {
    impl_->store.clear_current();
    impl_->own_current.reset();
}

std::string Session::optimize_report(bool json) const {
    if (impl_->optimize_json.empty())
        fail(TAD_ERR_STATE, "tad_optimize_report: no optimization yet (call tad_generate with backend \"llm\" first)");
    return json ? impl_->optimize_json : impl_->optimize_markdown;
}

void Session::set_optimize_report(std::string markdown, std::string json) {
    impl_->optimize_markdown = std::move(markdown);
    impl_->optimize_json = std::move(json);
}

void Session::set_pair_provider(PairProvider pairs) { impl_->pairs = std::move(pairs); }
const PairProvider &Session::pair_provider() const { return impl_->pairs; }

}  // namespace tad::driver
