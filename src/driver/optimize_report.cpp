#include "driver/optimize_report.h"

#include <cstdio>

namespace tad::driver {

namespace {

void set_opt(JsonRef o, const char *key, const std::optional<double> &v) {
    if (v)
        o.set(key, *v);
    else
        o.set_null(key);
}

void set_opt(JsonRef o, const char *key, const std::optional<std::string> &v) {
    if (v)
        o.set(key, *v);
    else
        o.set_null(key);
}

// A string member, null when empty.
void set_text(JsonRef o, const char *key, const std::string &v) {
    if (v.empty())
        o.set_null(key);
    else
        o.set(key, v);
}

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string opt_fmt(const char *f, const std::optional<double> &v) { return v ? fmt(f, *v) : ""; }

// Table cells hold no "|" or line breaks.
std::string cell(std::string s) {
    for (char &c : s)
        if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return s;
}

std::string header(const RunRecord &r) {
    std::string out = "# tad optimize: " + r.stub + " (" + r.forward_path + ")\n\n";
    out += "- model: " + r.provider + " `" + r.model + "` at " + r.base_url + "\n";
    out += "- rounds: " + std::to_string(r.rounds) + " of " + std::to_string(r.max_iterations) + ", up to " +
           std::to_string(r.parallel) + (r.parallel == 1 ? " candidate" : " candidates") + " each\n";
    out += r.mode == "gpu" ? "- certified on the GPU: verified across the SWEEP, then timed\n"
                           : "- certified on the CPU interpreter only (" + r.no_gpu +
                                 "): candidates are verified, not timed, and none is claimed faster\n";
    if (!r.compiler_refusal.empty()) out += "- the compiler refused the kernel: " + r.compiler_refusal + "\n";
    if (!r.retrieval.empty()) out += "- retrieved examples: " + r.retrieval + "\n";
    out += "- best: " + r.best.value_or("none") + (r.baseline ? ", baseline: " + *r.baseline : "") + "\n";
    out += "- stopped: " + r.stopped + (r.error.empty() ? "" : " (" + r.error + ")") + "\n";
    out += "- requests: " + std::to_string(r.requests) + " (" + std::to_string(r.retries) +
           " retries), tokens: " + std::to_string(r.input_tokens) + " in, " + std::to_string(r.output_tokens) + " out" +
           (r.cost_usd ? ", cost " + fmt("$%.4f", *r.cost_usd) : "") + ", " + fmt("%.1f s", r.seconds) + "\n";
    out += "- logs: " + r.run_dir + "/requests\n\n";
    return out;
}

}  // namespace

Json report_json(const RunRecord &r) {
    Json j = Json::object();
    j.set("kind", "optimize");
    j.set("run_dir", r.run_dir);
    j.set("forward_path", r.forward_path);
    j.set("stub", r.stub);
    j.set("provider", r.provider);
    j.set("model", r.model);
    j.set("base_url", r.base_url);
    j.set("mode", r.mode);
    set_text(j, "no_gpu", r.no_gpu);
    set_text(j, "compiler_refusal", r.compiler_refusal);
    set_text(j, "retrieval", r.retrieval);
    set_opt(j, "baseline", r.baseline);
    set_opt(j, "best", r.best);
    j.set("stopped", r.stopped);
    set_text(j, "error", r.error);
    j.set("rounds", r.rounds);
    j.set("max_iterations", r.max_iterations);
    j.set("parallel", r.parallel);
    j.set("requests", r.requests);
    j.set("retries", r.retries);
    j.set("input_tokens", r.input_tokens);
    j.set("output_tokens", r.output_tokens);
    set_opt(j, "cost_usd", r.cost_usd);
    j.set("seconds", r.seconds);
    JsonRef list = j.set_array("candidates");
    for (const CandidateRecord &c : r.candidates) {
        JsonRef o = list.push_object();
        o.set("round", c.round);
        o.set("index", c.index);
        o.set("origin", c.origin);
        set_opt(o, "id", c.id);
        set_text(o, "form", c.form);
        o.set("verdict", c.verdict);
        o.set("reason", c.reason);
        set_opt(o, "max_rel_err", c.max_rel_err);
        set_opt(o, "bwd_ms", c.bwd_ms);
        set_opt(o, "speedup", c.speedup);
        o.set("certify_s", c.certify_s);
        if (c.origin != "model") continue;
        JsonRef q = o.set_object("request");
        q.set("log", c.log_seq);
        q.set("attempts", c.attempts);
        q.set("retries", c.retries);
        q.set("input_tokens", c.input_tokens);
        q.set("output_tokens", c.output_tokens);
        q.set("seconds", c.request_s);
    }
    return j;
}

std::string report_markdown(const RunRecord &r) {
    std::string out = header(r);
    out +=
        "| round | # | origin | snapshot | form | verdict | bwd ms | speedup | max rel err | certify s | "
        "request s | tokens in/out | reason |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const CandidateRecord &c : r.candidates) {
        const bool model = c.origin == "model";
        out += "| " + std::to_string(c.round) + " | " + std::to_string(c.index) + " | " + c.origin + " | " +
               c.id.value_or("") + " | " + c.form + " | " + c.verdict + " | " + opt_fmt("%.4f", c.bwd_ms) + " | " +
               opt_fmt("%.3fx", c.speedup) + " | " + opt_fmt("%.2e", c.max_rel_err) + " | " + fmt("%.1f", c.certify_s) +
               " | " + (model ? fmt("%.1f", c.request_s) : "") + " | " +
               (model ? std::to_string(c.input_tokens) + "/" + std::to_string(c.output_tokens) : "") + " | " +
               cell(c.reason) + " |\n";
    }
    return out;
}

}  // namespace tad::driver
