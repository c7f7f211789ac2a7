#include "summary.h"

#include "errors.h"
#include "json_util.h"
#include "table.h"
#include "tad.h"
#include "terminal.h"

namespace tad_cli {

namespace {

// "M=4096 N=1024": the dims as a user writes them, without the SWEEP's bookkeeping keys.
std::string dims_label(const cJSON *dims) {
    std::string s;
    const cJSON *d = nullptr;
    cJSON_ArrayForEach(d, dims) {
        std::string key = d->string ? d->string : "";
        if (key == "required" || key == "dtype") continue;
        if (!s.empty()) s += ' ';
        s += key + "=" + (cJSON_IsString(d) ? std::string(d->valuestring) : compact(d));
    }
    return s.empty() ? "-" : s;
}

// "x 1.20e-07, w 3.00e-06, dot 4.00e-16": max rel err per gradient, then the dot-product test's.
std::string grad_errors(const cJSON *result) {
    std::string s;
    const cJSON *g = nullptr;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(result, "grads")) {
        std::optional<double> e = number_of(g, "max_rel_err");
        if (!s.empty()) s += ", ";
        s += text_of(g, "name", "?") + " " + (e ? fmt_err(*e) : "-");
    }
    // The dot-product test <J v, u> = <v, J^T u>, where the case ran it.
    std::optional<double> dot = number_of(cJSON_GetObjectItemCaseSensitive(result, "dot_product"), "rel_err");
    if (dot) s += (s.empty() ? "" : ", ") + std::string("dot ") + fmt_err(*dot);
    return s.empty() ? "-" : s;
}

std::string ms_or_dash(const cJSON *obj, const char *key) {
    std::optional<double> v = number_of(obj, key);
    return v ? fmt_ms(*v) : "-";
}

const cJSON *results_of(const cJSON *report) { return cJSON_GetObjectItemCaseSensitive(report, "results"); }

// "tuned _k_bwd: num_stages=2 num_warps=8, 0.120 ms (0.150 ms as launched)".
std::string tuned_text(const cJSON *c) {
    std::string s = "tuned " + text_of(c, "kernel", "?") + ":";
    const cJSON *o = nullptr;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(c, "options")) {
        if (cJSON_IsNumber(o)) s += " " + std::string(o->string) + "=" + std::to_string(o->valueint);
    }
    return s + ", " + ms_or_dash(c, "ms") + " ms (" + ms_or_dash(c, "launched_ms") + " ms as launched)";
}

}  // namespace

Summary::Row &Summary::row_for(const std::string &mode, const std::string &dims_key, const std::string &dims,
                               const std::string &dtype) {
    for (Row &r : rows_)
        if (r.mode == mode && r.dims_key == dims_key && r.dtype == dtype) return r;
    rows_.push_back(Row{mode, dims_key, dims, dtype, "-", "-"});
    return rows_.back();
}

void Summary::add_verify(const std::string &report_json) {
    JsonPtr report = parse_report(report_json);
    std::string mode = text_of(report.get(), "mode", "?");
    const cJSON *r = nullptr;
    cJSON_ArrayForEach(r, results_of(report.get())) {
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(r, "dims");
        Row &row = row_for(mode, compact(dims), dims_label(dims), text_of(r, "dtype", "?"));
        row.status = text_of(r, "status", "?");
        row.errors = grad_errors(r);
        std::string message = text_of(r, "message");
        if (!message.empty()) notes_.push_back("verify " + mode + " " + row.dims + " " + row.dtype + ": " + message);
    }
}

void Summary::add_bench(const std::string &report_json) {
    JsonPtr report = parse_report(report_json);
    const cJSON *r = nullptr;
    cJSON_ArrayForEach(r, results_of(report.get())) {
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(r, "dims");
        Row &row = row_for("gpu", compact(dims), dims_label(dims), text_of(r, "dtype", "?"));
        std::string status = text_of(r, "status", "?");
        if (row.status == "-") row.status = status;  // a row bench alone knows about
        if (status != "ok") {
            notes_.push_back("bench " + row.dims + " " + row.dtype + ": " + status +
                             (text_of(r, "message").empty() ? "" : ": " + text_of(r, "message")));
            continue;
        }
        row.fwd = ms_or_dash(r, "fwd_ms");
        row.bwd = ms_or_dash(r, "bwd_ms");
        row.ref = ms_or_dash(r, "ref_bwd_ms");
        std::optional<double> bwd = number_of(r, "bwd_ms"), ref = number_of(r, "ref_bwd_ms");
        if (bwd && ref && *bwd > 0) row.ratio = fmt_ratio(*ref / *bwd);
        const cJSON *c = nullptr;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "tuned"))
            notes_.push_back("bench " + row.dims + " " + row.dtype + ": " + tuned_text(c));
    }
}

void Summary::print(std::ostream &out) const {
    Table t({"MODE", "DIMS", "DTYPE", "STATUS", "MAX REL ERR", "FWD MS", "BWD MS", "REF BWD MS", "RATIO"});
    for (const Row &r : rows_) t.add({r.mode, r.dims, r.dtype, r.status, r.errors, r.fwd, r.bwd, r.ref, r.ratio});
    if (!t.empty()) t.print(out);
    for (const std::string &n : notes_) out << "  " << printable(n, 2000, Lines::Many) << '\n';
}

std::string verify_line(const std::string &report_json) {
    JsonPtr report = parse_report(report_json);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report.get(), "summary");
    bool passed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report.get(), "passed"));
    auto count = [&](const char *key) {
        std::optional<double> v = number_of(s, key);
        return std::to_string(v ? static_cast<long long>(*v) : 0);
    };
    std::string line = std::string(passed ? "[PASS] " : "[FAIL] ") + text_of(report.get(), "mode", "?") + ": " +
                       count("passed") + "/" + count("total") + " passed";
    if (count("skipped") != "0") line += ", " + count("skipped") + " skipped";
    std::optional<double> err = number_of(s, "max_rel_err");
    if (err) line += ", max rel err " + fmt_err(*err);
    return line;
}

std::vector<std::string> failed_cases(const std::string &report_json) {
    JsonPtr report = parse_report(report_json);
    std::vector<std::string> lines;
    const cJSON *r = nullptr;
    cJSON_ArrayForEach(r, results_of(report.get())) {
        const std::string status = text_of(r, "status", "?"), message = text_of(r, "message");
        if (status == "pass" || status == "skipped") continue;
        lines.push_back("  " + dims_label(cJSON_GetObjectItemCaseSensitive(r, "dims")) + " " +
                        text_of(r, "dtype", "?") + ": " + status + ", " + grad_errors(r) +
                        (message.empty() ? "" : ": " + printable(message, 400, Lines::One)));
    }
    return lines;
}

std::string bench_line(const std::string &report_json) {
    JsonPtr report = parse_report(report_json);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report.get(), "summary");
    std::optional<double> speedup = number_of(s, "median_bwd_speedup_vs_ref");
    return "[BENCH] " + text_of(report.get(), "device", "?") + ": median bwd speedup vs reference " +
           (speedup ? fmt_ratio(*speedup) : std::string("n/a (no reference)"));
}

void print_snapshots(const std::string &list_json, std::ostream &out) {
    JsonPtr list = parse_json(list_json);
    if (!cJSON_IsArray(list.get()))
        throw Failure{TAD_ERR_INTERNAL, "the library returned a snapshot list that is not an array"};
    Table t({"ID", "CREATED", "KIND", "LABEL", "FORWARD", "VERIFY", "BENCH"});
    const cJSON *s = nullptr;
    cJSON_ArrayForEach(s, list.get()) {
        // passed is null when the verify report is damaged or has no verdict: "?".
        const cJSON *passed = cJSON_GetObjectItemCaseSensitive(s, "passed");
        std::string verify = cJSON_IsBool(passed) ? (cJSON_IsTrue(passed) ? "pass" : "fail") : "?";
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "has_verify"))) verify = "-";
        bool has_bench = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "has_bench"));
        std::string label = text_of(s, "label");
        t.add({text_of(s, "id"), text_of(s, "created"), text_of(s, "kind"), label.empty() ? "-" : label,
               text_of(s, "forward_path"), verify, has_bench ? "yes" : "-"});
    }
    if (t.empty())
        out << "no snapshots\n";
    else
        t.print(out);
}

}  // namespace tad_cli
