#include "driver/optimize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "driver/bench_score.h"
#include "driver/module_interface.h"
#include "driver/optimize_report.h"
#include "driver/parallel_requests.h"
#include "driver/prompt.h"
#include "emit/emit.h"
#include "frontend/parser.h"
#include "llm/client.h"
#include "llm/reply.h"
#include "store/meta.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::driver {

namespace {

using llm::Clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

[[noreturn]] void invalid(const std::string &what) { fail(TAD_ERR_INVALID_ARGUMENT, "tad_generate: " + what); }

void check_options(const OptimizeOptions &o) {
    try {
        llm::check_settings(o.chat);
        llm::check_limits(o.budget);
    } catch (const Error &e) {
        invalid(e.what());
    }
    if (o.max_iterations < 1) invalid("max_iterations must be positive");
    if (o.parallel < 1 || o.parallel > 16) invalid("parallel must be from 1 to 16");
    if (!(o.wall_clock_s > 0) || !(o.request_timeout_s > 0)) invalid("the time limits must be positive");
    if (o.topk < 0) invalid("topk must not be negative");
    if (o.retry.max_retries < 0) invalid("max_retries must not be negative");
}

// The key, read once from the environment; it lives in the client and goes nowhere else.
std::string api_key(const OptimizeOptions &o) {
    const std::string var = o.api_key_env.empty() ? llm::default_key_env(o.chat.provider) : o.api_key_env;
    const char *v = std::getenv(var.c_str());
    if (!v || !*v) invalid("the environment variable " + var + " (api_key_env) holding the API key is not set");
    return v;
}

// <work_dir>/llm/<UTC time>-<random>: one directory per run, so concurrent runs never share one.
std::string make_run_dir(const std::string &work_dir) {
    std::string parent = fs::join(work_dir, "llm");
    fs::make_dirs(parent);
    std::string stamp = store::utc_now_iso8601();
    for (char &c : stamp)
        if (c == ':') c = '-';
    return fs::make_unique_dir(parent, stamp + "-");
}

// What certify found out about one candidate.
struct Certified {
    bool passed = false;
    std::string reason;  // why not
    std::optional<double> max_rel_err;
    std::map<std::string, double> times;  // GPU only
    std::string table;  // the bench as Markdown, for the next prompt
    double seconds = 0;
};

// "n=1000 float32": a case of a report, its dims without the dtype and device tad adds.
std::string case_label(JsonRef r) {
    std::string out;
    JsonRef dims = r.get("dims");
    for (const std::string &k : dims.is_object() ? dims.keys() : std::vector<std::string>{})
        if (k != "dtype" && k != "device")
            out += k + "=" + (dims.at(k).is_string() ? dims.at(k).str() : dims.at(k).dump()) + " ";
    return out + r.str_or("dtype", "");
}

// "verification failed (1 of 2 cases): n=1000 float32: <message>" for the first case of a verify
// report that did not pass.
std::string verify_failure(JsonRef report) {
    JsonRef s = report.get("summary");
    std::string out = "verification failed (" + std::to_string(s.int_or("failed", 0)) + " of " +
                      std::to_string(s.int_or("total", 0)) + " cases)";
    JsonRef results = report.get("results");
    for (size_t i = 0; results.is_array() && i < results.size(); ++i) {
        JsonRef r = results[i];
        const std::string status = r.str_or("status", "error");
        if (status == "pass" || status == "skipped") continue;
        std::string why = r.get("message").is_string() ? r.get("message").str() : "";
        JsonRef grads = r.get("grads");
        for (size_t k = 0; why.empty() && grads.is_array() && k < grads.size(); ++k)
            if (!grads[k].bool_or("ok", true))
                why = "gradient of '" + grads[k].str_or("name", "?") + "' off by " +
                      fmt("%.3g", grads[k].num_or("max_rel_err", NAN)) + " (relative)";
        return out + ": " + case_label(r) + ": " + (why.empty() ? status : why);
    }
    return out;
}

// The best verified module so far (or the compiler's, failing, when nothing passed yet).
struct Best {
    std::string id, source;
    bool verified = false;
    std::map<std::string, double> times;
    std::string table;
    std::string note;
};

class Optimizer {
public:
    Optimizer(Session &s, const GenerateOptions &g, const std::string &key)
        : s_(s),
          g_(g),
          o_(g.llm),
          run_dir_(make_run_dir(s.work_dir())),
          log_(fs::join(run_dir_, "requests"), {key}),
          budget_(o_.budget),
          client_(client_options(key), transport_, budget_, &log_),
          start_(Clock::now()),
          deadline_(start_ +
                    std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.wall_clock_s))) {
        rec_.run_dir = run_dir_;
        rec_.forward_path = s.forward_path();
        rec_.stub = s.forward("tad_generate").stub.name;
        rec_.provider = llm::provider_name(o_.chat.provider);
        rec_.model = o_.chat.model;
        rec_.base_url = o_.chat.base_url.empty() ? llm::default_base_url(o_.chat.provider) : o_.chat.base_url;
        rec_.max_iterations = o_.max_iterations;
        rec_.parallel = o_.parallel;
    }

    std::string run();
    // The report so far (also after a failure).
    void publish();
    RunRecord &record() { return rec_; }

private:
    llm::ClientOptions client_options(const std::string &key) const {
        llm::ClientOptions c;
        c.chat = o_.chat;
        c.api_key = key;
        c.retry = o_.retry;
        c.timeout_s = o_.request_timeout_s;
        return c;
    }

    void retrieve();
    void derive();
    bool round(int r);
    void consider(CandidateRecord &c, const llm::Exchange &ex, bool skipped);
    std::optional<std::string> materialize(CandidateRecord &c, const llm::Exchange &ex);
    void decide(CandidateRecord &c, const Certified &v);
    Certified certify(const std::string &id);
    Certified verify_step(Certified v);
    void bench_step(Certified &v);
    void reject(CandidateRecord &c, const std::string &why);
    void back_to_best();
    PromptInput prompt_input() const;
    void waiting(int round, int pending);

    Session &s_;
    const GenerateOptions &g_;
    const OptimizeOptions &o_;
    std::string run_dir_;
    llm::ExchangeLog log_;
    llm::Budget budget_;
    llm::CurlTransport transport_;
    llm::Client client_;
    Clock::time_point start_, deadline_;
    RunRecord rec_;
    std::optional<Best> best_;
    std::vector<std::string> interface_;  // of the compiler's module; empty without one
    std::vector<std::string> rejections_;
    std::vector<RetrievedPair> pairs_;  // retrieved once, shown in every prompt
};

// ---- derive ----

void Optimizer::derive() {
    s_.notify("derive", "the compiler's backward of " + rec_.stub);
    GenerateOptions ad = g_;
    ad.backend = "ad";
    std::string id;
    try {
        id = s_.generate(ad);
    } catch (const Error &e) {
        if (e.status() != TAD_ERR_UNSUPPORTED) throw;
        rec_.compiler_refusal = e.what();
        return;
    }
    rec_.baseline = id;
    CandidateRecord c;
    c.origin = "compiler";
    c.index = 1;
    c.id = id;
    const std::string source = s_.candidate_source(id);
    interface_ = module_interface(frontend::parse_source("generated module", source));
    Certified v = certify(id);
    c.max_rel_err = v.max_rel_err;
    c.bwd_ms = geomean(v.times);
    c.certify_s = v.seconds;
    best_ = Best{id, source, v.passed, v.times, v.table, ""};
    if (v.passed) {
        c.verdict = "baseline";
        best_->note = rec_.mode == "gpu" ? "verified on the GPU and timed" : "verified on the CPU interpreter";
    } else {
        c.verdict = "rejected";
        c.reason = v.reason;
        best_->note = "the compiler's backward fails verification: " + v.reason;
    }
    rec_.candidates.push_back(c);
}

// ---- certify ----

Certified Optimizer::certify(const std::string &id) {
    const auto t0 = Clock::now();
    s_.rollback(id);  // the trial: verify and bench check the current candidate
    Certified v = verify_step(Certified{});
    if (v.passed && rec_.mode == "gpu") bench_step(v);
    v.seconds = seconds_since(t0);
    return v;
}

Certified Optimizer::verify_step(Certified v) {
    VerifyOptions vo;
    vo.cpu = rec_.mode == "cpu";
    vo.dims_json = g_.dims_json;
    s_.notify("certify", "verifying " + *s_.current_id() + (vo.cpu ? " on the CPU interpreter" : " on the GPU"));
    bool passed = false;
    std::string text;
    try {
        text = s_.verify(vo, &passed);
    } catch (const Error &e) {
        if (e.status() == TAD_ERR_NO_GPU && !vo.cpu) {
            rec_.mode = "cpu";
            rec_.no_gpu = e.what();
            return verify_step(v);
        }
        if (e.status() == TAD_ERR_CANCELLED) throw;
        v.reason = std::string("verification did not run: ") + e.what();
        return v;
    }
    Json report = Json::parse(text, "verify report");
    JsonRef err = report.at("summary").get("max_rel_err");
    if (err.is_number()) v.max_rel_err = err.num();
    v.passed = passed;
    if (!passed) v.reason = verify_failure(report);
    return v;
}

void Optimizer::bench_step(Certified &v) {
    s_.notify("certify", "timing " + *s_.current_id());
    BenchOptions bo;
    bo.dims_json = g_.dims_json;
    try {
        Json report = Json::parse(s_.bench(bo), "bench report");
        v.times = case_times(report);
        v.table = bench_table(report);
        if (v.times.empty()) {
            v.passed = false;
            v.reason = "no bench case ran:\n" + v.table;
        }
    } catch (const Error &e) {
        if (e.status() == TAD_ERR_CANCELLED) throw;
        v.passed = false;
        v.reason = std::string("bench failed: ") + e.what();
    }
}

// ---- schedule ----

PromptInput Optimizer::prompt_input() const {
    PromptInput in;
    in.forward_path = s_.forward_path();
    in.forward_source = s_.forward_source();
    in.stub = rec_.stub;
    if (best_) {
        in.best_source = best_->source;
        in.best_id = best_->id;
        in.best_verified = best_->verified;
        in.best_note = best_->note;
        in.measurements = best_->table;
    } else {
        in.best_note = "tad's compiler refused it: " + rec_.compiler_refusal;
    }
    in.pairs = pairs_;
    in.rejections = rejections_;
    in.interface = interface_;
    return in;
}

void Optimizer::waiting(int round, int pending) {
    if (Clock::now() > deadline_) return;  // the requests end at the deadline themselves
    s_.notify("schedule", "round " + std::to_string(round) + ": waiting for " + std::to_string(pending) +
                              (pending == 1 ? " reply" : " replies"));
}

bool budget_refusal(const llm::Exchange &ex) { return !ex.ok && ex.status == TAD_ERR_STATE; }

bool Optimizer::round(int r) {
    if (Clock::now() >= deadline_) {
        rec_.stopped = "the wall-clock budget (" + fmt("%g", o_.wall_clock_s) + " s) ended";
        return false;
    }
    rec_.rounds = r;
    s_.notify("schedule",
              "round " + std::to_string(r) + ": asking " + rec_.model + " for " + std::to_string(o_.parallel) +
                  (o_.parallel == 1 ? " candidate" : " candidates"),
              double(r - 1) / o_.max_iterations);
    const llm::Prompt prompt = build_prompt(prompt_input());
    ParallelRequests requests(client_, prompt, o_.parallel, "round " + std::to_string(r) + ", candidate", deadline_);
    std::optional<std::string> winner;
    std::string refused;
    int replies = 0;
    while (auto next = requests.next([&](int pending) { waiting(r, pending); }, 10)) {
        CandidateRecord c;
        c.round = r;
        c.index = next->first;
        c.origin = "model";
        if (budget_refusal(next->second)) refused = next->second.error;
        replies += next->second.ok ? 1 : 0;
        consider(c, next->second, winner.has_value());
        if (winner && c.verdict == "skipped") c.reason = "round " + std::to_string(r) + " was won by " + *winner;
        if (c.verdict == "accepted") {
            winner = c.id;
            requests.cancel();
        }
        rec_.candidates.push_back(c);
    }
    if (!refused.empty() && replies == 0) {
        rec_.stopped = refused;
        return false;
    }
    return true;
}

// ---- one candidate ----

void Optimizer::reject(CandidateRecord &c, const std::string &why) {
    c.verdict = "rejected";
    c.reason = why;
    rejections_.push_back("round " + std::to_string(c.round) + ", candidate " + std::to_string(c.index) + ": " + why);
}

// The module a reply proposes, stored as a snapshot; none (and the verdict) when it holds none.
std::optional<std::string> Optimizer::materialize(CandidateRecord &c, const llm::Exchange &ex) {
    llm::Proposal p;
    try {
        p = llm::proposal_of(ex.completion.text, ex.completion.finish);
    } catch (const Error &e) {
        reject(c, e.what());
        return std::nullopt;
    }
    c.form = llm::form_name(p.form);
    std::string source = p.code;
    if (p.form == llm::Proposal::Form::Patch) {
        if (!best_) {
            reject(c, "a patch needs a module to apply to, and there is none yet");
            return std::nullopt;
        }
        try {
            source = llm::apply_patch(best_->source, p.code);
        } catch (const Error &e) {
            reject(c, e.what());
            return std::nullopt;
        }
    }
    CandidateDraft d;
    d.source = source;
    d.label = "llm round " + std::to_string(c.round) + " candidate " + std::to_string(c.index);
    if (best_) d.parent = best_->id;
    d.loops = g_.loops;
    c.id = s_.add_candidate(d);
    return source;
}

void Optimizer::consider(CandidateRecord &c, const llm::Exchange &ex, bool skipped) {
    c.log_seq = ex.log_seq;
    c.attempts = ex.attempts;
    c.retries = ex.retries;
    c.input_tokens = ex.completion.input_tokens;
    c.output_tokens = ex.completion.output_tokens;
    c.request_s = ex.seconds;
    rec_.requests += ex.attempts;
    rec_.retries += ex.retries;
    if (!ex.ok) {
        c.verdict = skipped && ex.status == TAD_ERR_CANCELLED ? "skipped" : "failed";
        c.reason = "the request failed: " + ex.error;
        return;
    }
    std::optional<std::string> source = materialize(c, ex);
    if (!source) return;
    if (skipped) {
        c.verdict = "skipped";
        return;
    }
    std::string why = emit::module_fault(s_.forward("tad_generate"), *source);
    if (why.empty()) {
        std::vector<std::string> has = module_interface(frontend::parse_source("candidate", *source));
        why = interface_.empty() ? (std::find(has.begin(), has.end(), "def forward(*args, **kwargs)") == has.end()
                                        ? "it does not define 'def forward(*args, **kwargs)'"
                                        : "")
                                 : interface_change(interface_, has);
        if (!why.empty()) why = "the module's interface changed: " + why;
    } else {
        why = "the module does not pass tad's checks: " + why;
    }
    if (!why.empty()) return reject(c, why);
    Certified v = certify(*c.id);
    c.max_rel_err = v.max_rel_err;
    c.bwd_ms = geomean(v.times);
    c.certify_s = v.seconds;
    decide(c, v);
}

void Optimizer::back_to_best() {
    if (best_) s_.rollback(best_->id);
}

void Optimizer::decide(CandidateRecord &c, const Certified &v) {
    if (!v.passed) {
        reject(c, v.reason);
        return back_to_best();
    }
    std::string how;
    if (!best_ || !best_->verified) {
        how = "the first verified backward" + std::string(rec_.mode == "gpu" ? "" : " (not timed: no GPU)");
    } else if (rec_.mode == "cpu") {
        c.verdict = "verified";
        c.reason = "passed on the CPU interpreter; not timed (no GPU), so not made current";
        return back_to_best();
    } else {
        std::string why;
        c.speedup = speedup_over(best_->times, v.times, &why);
        if (!c.speedup) {
            reject(c, "cannot be compared with " + best_->id + ": " + why + "; rolled back to " + best_->id);
            return back_to_best();
        }
        if (*c.speedup < kMinSpeedup) {
            reject(c, "not faster: " + fmt("%.3fx", *c.speedup) + " the speed of " + best_->id + " (needs " +
                          fmt("%.2fx", kMinSpeedup) + "); rolled back to " + best_->id);
            return back_to_best();
        }
        how = fmt("%.3fx", *c.speedup) + " faster than " + best_->id;
    }
    c.verdict = "accepted";
    c.reason = how;
    best_ = Best{*c.id,   s_.candidate_source(*c.id),
                 true,    v.times,
                 v.table, rec_.mode == "gpu" ? "verified on the GPU and timed" : "verified on the CPU interpreter"};
}

// ---- the run ----

// The known pairs closest to the forward, once for the run; a retrieval that fails costs the
// prompt its examples, not the run, and the report says why.
void Optimizer::retrieve() {
    if (o_.topk <= 0 || !s_.pair_provider()) {
        rec_.retrieval = "off";
        return;
    }
    try {
        pairs_ = s_.pair_provider()(s_.forward_path(), s_.forward_source(), o_.topk);
    } catch (const Error &e) {
        rec_.retrieval = std::string("failed: ") + e.what();
        return;
    }
    std::string names;
    for (const RetrievedPair &p : pairs_) names += (names.empty() ? "" : ", ") + p.path;
    rec_.retrieval =
        std::to_string(pairs_.size()) + (pairs_.size() == 1 ? " pair" : " pairs") + (names.empty() ? "" : ": " + names);
}

std::string Optimizer::run() {
    retrieve();
    derive();
    for (int r = 1; r <= o_.max_iterations; ++r)
        if (!round(r)) break;
    if (rec_.stopped.empty()) rec_.stopped = "max iterations (" + std::to_string(o_.max_iterations) + ")";
    if (!best_) {
        rec_.error = "the compiler refused the kernel (" + rec_.compiler_refusal +
                     ") and no model candidate passed verification";
        publish();
        fail(TAD_ERR_UNSUPPORTED, "tad_generate: " + rec_.error + " (report: " + run_dir_ + "/report.md)");
    }
    rec_.best = best_->id;
    s_.rollback(best_->id);
    publish();
    return best_->id;
}

void Optimizer::publish() {
    rec_.input_tokens = budget_.input_tokens();
    rec_.output_tokens = budget_.output_tokens();
    if (o_.budget.usd_per_mtok_input > 0 || o_.budget.usd_per_mtok_output > 0) rec_.cost_usd = budget_.cost_usd();
    rec_.seconds = seconds_since(start_);
    const std::string md = report_markdown(rec_), json = report_json(rec_).dump(true);
    fs::write_file_atomic(fs::join(run_dir_, "report.md"), md);
    fs::write_file_atomic(fs::join(run_dir_, "report.json"), json + "\n");
    s_.set_optimize_report(md, json);
}

}  // namespace

std::string optimize(Session &s, const GenerateOptions &opts) {
    s.forward("tad_generate");
    check_options(opts.llm);
    const std::string key = api_key(opts.llm);
    llm::CurlTransport::load();  // where libcurl is missing, fail before anything is written
    const std::optional<std::string> before = s.current_id();
    Optimizer opt(s, opts, key);
    try {
        return opt.run();
    } catch (const Error &e) {
        RunRecord &r = opt.record();
        if (r.error.empty()) {
            r.error = e.what();
            r.stopped = e.status() == TAD_ERR_CANCELLED ? "cancelled" : "failed";
            try {
                opt.publish();
            } catch (const Error &) {
                // The first error is the one to report.
            }
        }
        try {
            if (before)
                s.rollback(*before);
            else
                s.clear_current();
        } catch (const Error &) {
            // As above: the failure that ended the run is the one to report.
        }
        throw;
    }
}

}  // namespace tad::driver
