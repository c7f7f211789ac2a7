// The C ABI (include/tad.h) over tad::driver::Session (and tad_interpret over src/verify). Each entry point runs its body through guard(),
// which turns every exception into a status plus the thread's last-error message, so none crosses
// the ABI.
// The checks of NULL pointers and options structs live here: the Session takes C++ values that
// cannot be NULL, so these failures can only arise at this boundary.
#include "tad.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capi/guard.h"
#include "driver/session.h"
#include "retrieve/import.h"
#include "retrieve/query.h"
#include "runtime/child_groups.h"
#include "support/error.h"
#include "support/json.h"
#include "verify/interpret.h"

struct tad_session {
    explicit tad_session(tad::driver::SessionOptions opts) : impl(std::move(opts)) {}
    tad::driver::Session impl;
};

namespace {

using namespace tad::capi;

// Options structs grow by versions (docs/abi.md). Version v of a struct is its fields up to the last
// one v defines; the library reads and writes a caller's struct of version v only up to the end of
// that field, kXxxEnds[v - 1]. A field added to a struct needs a new version and an entry here.
#define TAD_FIELD_END(type, field) (offsetof(type, field) + sizeof(type::field))
constexpr size_t kSessionEnds[] = {TAD_FIELD_END(tad_session_options, progress_payload),
                                   TAD_FIELD_END(tad_session_options, worker_memory_mb)};
constexpr size_t kGenerateEnds[] = {TAD_FIELD_END(tad_generate_options, launch_json),
                                    TAD_FIELD_END(tad_generate_options, loops),
                                    TAD_FIELD_END(tad_generate_options, topk)};
constexpr size_t kVerifyEnds[] = {TAD_FIELD_END(tad_verify_options, seed)};
constexpr size_t kBenchEnds[] = {TAD_FIELD_END(tad_bench_options, reps)};
constexpr size_t kRetrieveEnds[] = {TAD_FIELD_END(tad_retrieve_options, cache_dir)};
#undef TAD_FIELD_END
static_assert(std::size(kSessionEnds) == TAD_SESSION_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kGenerateEnds) == TAD_GENERATE_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kVerifyEnds) == TAD_VERIFY_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kBenchEnds) == TAD_BENCH_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kRetrieveEnds) == TAD_RETRIEVE_OPTIONS_VERSION, "one end per version");

// %g: errors span 1e-12 to 1e3, which std::to_string's fixed six decimals would flatten.
std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

double seconds_or(double v, double dflt, const char *fn, const char *field) {
    if (v == 0) return dflt;
    if (!(v > 0) || !std::isfinite(v))
        invalid(fn, std::string(field) + " must be a positive number of seconds, got " + number(v));
    return v;
}

tad::driver::SessionOptions session_options(const tad_session_options *given, const char *fn) {
    tad::driver::SessionOptions so;
    if (!given) return so;
    const tad_session_options copy = read_options(given, kSessionEnds, fn);
    const tad_session_options *o = &copy;
    so.work_dir = text_or(o->work_dir, so.work_dir);
    so.python = text_or(o->python, "");
    if (o->device_index < 0) invalid(fn, "device_index must not be negative");
    so.device_index = o->device_index;
    so.worker_timeout_s = seconds_or(o->worker_timeout_s, so.worker_timeout_s, fn, "worker_timeout_s");
    so.startup_timeout_s = seconds_or(o->startup_timeout_s, so.startup_timeout_s, fn, "startup_timeout_s");
    if (o->worker_memory_mb < 0) invalid(fn, "worker_memory_mb must not be negative");
    so.worker_memory_mb = o->worker_memory_mb;
    if (o->progress) {
        tad_progress_fn cb = o->progress;
        void *payload = o->progress_payload;
        so.progress = [cb, payload](const std::string &stage, const std::string &message, double fraction) {
            return cb(stage.c_str(), message.c_str(), fraction, payload) == 0;
        };
    }
    return so;
}

double non_negative(double v, const char *fn, const char *field) {
    if (!(v >= 0) || !std::isfinite(v)) invalid(fn, std::string(field) + " must be a finite number, not negative");
    return v;
}

// Version 3's fields; a smaller struct's read as zero (defaults) by read_options. The driver checks
// the values' meaning (optimize.h); here only what C lets a caller get wrong.
tad::driver::OptimizeOptions optimize_options(const tad_generate_options &o, const char *fn) {
    tad::driver::OptimizeOptions oo;
    try {
        oo.chat.provider = tad::llm::provider_named(text_or(o.provider, "openai"));
    } catch (const tad::Error &e) {
        invalid(fn, e.what());
    }
    oo.chat.model = text_or(o.model, "");
    oo.chat.base_url = text_or(o.base_url, "");
    oo.api_key_env = text_or(o.api_key_env, "");
    oo.chat.reasoning_effort = text_or(o.reasoning_effort, "");
    oo.chat.temperature = non_negative(o.temperature, fn, "temperature");
    if (o.max_iterations < 0 || o.parallel < 0) invalid(fn, "max_iterations and parallel must not be negative");
    if (o.max_iterations > 0) oo.max_iterations = o.max_iterations;
    if (o.parallel > 0) oo.parallel = o.parallel;
    oo.wall_clock_s = seconds_or(o.wall_clock_s, oo.wall_clock_s, fn, "wall_clock_s");
    oo.request_timeout_s = seconds_or(o.request_timeout_s, oo.request_timeout_s, fn, "request_timeout_s");
    if (o.max_tokens < 0 || o.max_output_tokens < 0)
        invalid(fn, "max_tokens and max_output_tokens must not be negative");
    oo.budget.max_tokens = o.max_tokens;
    if (o.max_output_tokens > 0) oo.chat.max_output_tokens = o.max_output_tokens;
    oo.budget.max_cost_usd = non_negative(o.max_cost_usd, fn, "max_cost_usd");
    oo.budget.usd_per_mtok_input = non_negative(o.usd_per_mtok_input, fn, "usd_per_mtok_input");
    oo.budget.usd_per_mtok_output = non_negative(o.usd_per_mtok_output, fn, "usd_per_mtok_output");
    if (o.max_retries != 0) oo.retry.max_retries = o.max_retries < 0 ? 0 : o.max_retries;
    if (o.topk != 0) oo.topk = o.topk < 0 ? 0 : o.topk;
    return oo;
}

tad::driver::GenerateOptions generate_options(const tad_generate_options *given, const char *fn) {
    tad::driver::GenerateOptions go;
    if (!given) return go;
    // A version 1 caller's struct ends before `loops`, which reads as NULL (the default) here.
    const tad_generate_options copy = read_options(given, kGenerateEnds, fn);
    const tad_generate_options *o = &copy;
    go.backend = text_or(o->backend, go.backend);
    go.dims_json = text_or(o->dims_json, "");
    go.launch_json = text_or(o->launch_json, "");
    go.loops = text_or(o->loops, go.loops);
    if (go.backend == "llm") go.llm = optimize_options(*o, fn);
    return go;
}

tad::driver::VerifyOptions verify_options(const tad_verify_options *given, const char *fn) {
    tad::driver::VerifyOptions vo;
    if (!given) return vo;
    const tad_verify_options copy = read_options(given, kVerifyEnds, fn);
    const tad_verify_options *o = &copy;
    vo.cpu = o->cpu != 0;
    vo.dims_json = text_or(o->dims_json, "");
    vo.dtypes = text_or(o->dtypes, vo.dtypes);
    if (o->max_elements < 0) invalid(fn, "max_elements must not be negative");
    if (o->max_elements > 0) vo.max_elements = o->max_elements;
    vo.seed = o->seed;
    return vo;
}

tad::driver::BenchOptions bench_options(const tad_bench_options *given, const char *fn) {
    tad::driver::BenchOptions bo;
    if (!given) return bo;
    const tad_bench_options copy = read_options(given, kBenchEnds, fn);
    const tad_bench_options *o = &copy;
    bo.dims_json = text_or(o->dims_json, "");
    bo.dtypes = text_or(o->dtypes, bo.dtypes);
    if (o->reps < 0) invalid(fn, "reps must not be negative");
    if (o->reps > 0) bo.reps = o->reps;
    return bo;
}

// The lines of `text` that are not empty.
std::vector<std::string> lines(const char *text) {
    std::vector<std::string> out;
    if (!text) return out;
    std::string s = text;
    for (size_t start = 0; start <= s.size();) {
        size_t end = s.find('\n', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

tad::retrieve::Options retrieve_options(const tad_retrieve_options *given, const char *fn) {
    tad::retrieve::Options ro;
    if (!given) return ro;
    const tad_retrieve_options copy = read_options(given, kRetrieveEnds, fn);
    const tad_retrieve_options *o = &copy;
    if (o->topk < 0) invalid(fn, "topk must not be negative");
    if (o->topk > 0) ro.topk = o->topk;
    if (!(o->min_sim >= -1.0 && o->min_sim <= 1.0))
        invalid(fn, "min_sim must be between -1 and 1, got " + number(o->min_sim));
    ro.min_sim = o->min_sim;
    ro.exclude = lines(o->exclude);
    ro.dataset_dir = text_or(o->dataset_dir, "");
    ro.cache_dir = text_or(o->cache_dir, "");
    return ro;
}

// The status message of a failed verification, from the report's summary (docs/reports.md).
std::string mismatch_message(const std::string &report) {
    tad::Json r = tad::Json::parse(report, "verify report");
    tad::JsonRef s = r.get("summary");
    std::string msg = "verification failed";
    if (!s.is_object()) return msg + " (see the report)";
    int64_t bad = s.int_or("total", 0) - s.int_or("passed", 0) - s.int_or("skipped", 0);
    msg += ": " + std::to_string(bad) + " of " + std::to_string(s.int_or("total", 0)) + " cases did not pass";
    if (s.get("max_rel_err").is_number()) msg += " (max rel err " + number(s.get("max_rel_err").num()) + ")";
    return msg;
}

bool is_index(const std::string &seg) {
    return !seg.empty() && seg.size() <= 9 && seg.find_first_not_of("0123456789") == std::string::npos;
}

// Follows a dotted path (checked by the caller); an invalid ref when it leads nowhere.
tad::JsonRef follow(tad::JsonRef node, const std::string &key) {
    size_t start = 0;
    while (node.valid()) {
        size_t dot = key.find('.', start);
        std::string seg = key.substr(start, dot == std::string::npos ? dot : dot - start);
        if (!node.is_array())
            node = node.get(seg);
        else if (is_index(seg) && std::stoul(seg) < node.size())
            node = node[std::stoul(seg)];
        else
            node = tad::JsonRef();
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return node;
}

[[noreturn]] void not_in_report(const std::string &key) {
    tad::fail(TAD_ERR_NOT_FOUND, "key '" + key + "' not in report");
}

}  // namespace

extern "C" {

#define TAD_STR2(x) #x
#define TAD_STR(x) TAD_STR2(x)

const char *tad_version(void) {
    return TAD_STR(TAD_VERSION_MAJOR) "." TAD_STR(TAD_VERSION_MINOR) "." TAD_STR(TAD_VERSION_PATCH);
}

const char *tad_error_last(void) { return last_error; }

const char *tad_status_name(int status) {
    switch (status) {
    case TAD_OK: return "TAD_OK";
    case TAD_ERR_INVALID_ARGUMENT: return "TAD_ERR_INVALID_ARGUMENT";
    case TAD_ERR_IO: return "TAD_ERR_IO";
    case TAD_ERR_SYNTAX: return "TAD_ERR_SYNTAX";
    case TAD_ERR_UNSUPPORTED: return "TAD_ERR_UNSUPPORTED";
    case TAD_ERR_NO_KERNEL: return "TAD_ERR_NO_KERNEL";
    case TAD_ERR_WORKER: return "TAD_ERR_WORKER";
    case TAD_ERR_TIMEOUT: return "TAD_ERR_TIMEOUT";
    case TAD_ERR_MISMATCH: return "TAD_ERR_MISMATCH";
    case TAD_ERR_NOT_FOUND: return "TAD_ERR_NOT_FOUND";
    case TAD_ERR_STATE: return "TAD_ERR_STATE";
    case TAD_ERR_CANCELLED: return "TAD_ERR_CANCELLED";
    case TAD_ERR_NO_GPU: return "TAD_ERR_NO_GPU";
    case TAD_ERR_INTERNAL: return "TAD_ERR_INTERNAL";
    default: return "TAD_UNKNOWN_STATUS";
    }
}

void tad_string_free(char *s) { std::free(s); }

int tad_session_options_init(tad_session_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kSessionEnds, tad_session_options TAD_SESSION_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_generate_options_init(tad_generate_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kGenerateEnds, tad_generate_options TAD_GENERATE_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_verify_options_init(tad_verify_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kVerifyEnds, tad_verify_options TAD_VERIFY_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_bench_options_init(tad_bench_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kBenchEnds, tad_bench_options TAD_BENCH_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_retrieve_options_init(tad_retrieve_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kRetrieveEnds, tad_retrieve_options TAD_RETRIEVE_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_session_new(const tad_session_options *opts, tad_session **out) {
    return guard(__func__, [&](const char *fn) {
        need(out, fn, "out");
        *out = nullptr;  // cleared before the options are checked
        *out = new tad_session(session_options(opts, fn));
        return TAD_OK;
    });
}

void tad_session_free(tad_session *session) { delete session; }

void tad_kill_workers(void) { tad::kill_all_groups(); }

int tad_load_forward(tad_session *session, const char *path, const char *source) {
    return guard(__func__, [&](const char *fn) {
        need(session, fn, "session");
        need(path, fn, "path");
        session->impl.load_forward(path, source ? std::optional<std::string>(source) : std::nullopt);
        return TAD_OK;
    });
}

int tad_generate(tad_session *session, const tad_generate_options *opts, char **out_id) {
    return guard(__func__, [&](const char *fn) {
        clear(out_id);
        need(session, fn, "session");
        std::string id = session->impl.generate(generate_options(opts, fn));
        if (out_id) *out_id = c_string(id);
        return TAD_OK;
    });
}

int tad_optimize_report(tad_session *session, const char *format, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(session, fn, "session");
        need(out_report, fn, "out_report");
        const std::string f = format ? format : "markdown";
        if (f != "markdown" && f != "json") invalid(fn, "unknown format '" + f + "' (available: markdown, json)");
        *out_report = c_string(session->impl.optimize_report(f == "json"));
        return TAD_OK;
    });
}

int tad_candidate_source(tad_session *session, const char *id, char **out_source) {
    return guard(__func__, [&](const char *fn) {
        clear(out_source);
        need(session, fn, "session");
        need(out_source, fn, "out_source");
        *out_source = c_string(session->impl.candidate_source(id ? id : ""));
        return TAD_OK;
    });
}

int tad_candidate_explain(tad_session *session, const char *id, char **out_text) {
    return guard(__func__, [&](const char *fn) {
        clear(out_text);
        need(session, fn, "session");
        need(out_text, fn, "out_text");
        *out_text = c_string(session->impl.candidate_explain(id ? id : ""));
        return TAD_OK;
    });
}

int tad_verify(tad_session *session, const tad_verify_options *opts, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(session, fn, "session");
        need(out_report, fn, "out_report");
        bool passed = false;
        std::string report = session->impl.verify(verify_options(opts, fn), &passed);
        // Everything that can throw happens before the report is handed over, so that a failure
        // never leaves a report behind with a status that says it is not there.
        std::string message = passed ? "" : mismatch_message(report);
        *out_report = c_string(report);
        return passed ? TAD_OK : record(TAD_ERR_MISMATCH, nullptr, message.c_str());
    });
}

int tad_bench(tad_session *session, const tad_bench_options *opts, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(session, fn, "session");
        need(out_report, fn, "out_report");
        *out_report = c_string(session->impl.bench(bench_options(opts, fn)));
        return TAD_OK;
    });
}

int tad_snapshot(tad_session *session, const char *label, char **out_id) {
    return guard(__func__, [&](const char *fn) {
        clear(out_id);
        need(session, fn, "session");
        std::string id = session->impl.snapshot(label ? label : "");
        if (out_id) *out_id = c_string(id);
        return TAD_OK;
    });
}

int tad_rollback(tad_session *session, const char *id) {
    return guard(__func__, [&](const char *fn) {
        need(session, fn, "session");
        need(id, fn, "id");
        session->impl.rollback(id);
        return TAD_OK;
    });
}

int tad_snapshot_list(tad_session *session, char **out_json) {
    return guard(__func__, [&](const char *fn) {
        clear(out_json);
        need(session, fn, "session");
        need(out_json, fn, "out_json");
        *out_json = c_string(session->impl.snapshot_list());
        return TAD_OK;
    });
}

int tad_report_passed(const char *report_json, int *passed) {
    return guard(__func__, [&](const char *fn) {
        need(report_json, fn, "report_json");
        need(passed, fn, "passed");
        tad::Json report = tad::Json::parse(report_json, "report");
        tad::JsonRef p = report.get("passed");
        if (!p.valid()) not_in_report("passed");
        if (!p.is_bool()) invalid(fn, "key 'passed' is not a boolean");
        *passed = p.boolean() ? 1 : 0;
        return TAD_OK;
    });
}

int tad_report_number(const char *report_json, const char *key, double *value) {
    return guard(__func__, [&](const char *fn) {
        need(report_json, fn, "report_json");
        need(key, fn, "key");
        need(value, fn, "value");
        std::string k = key;
        if (k.empty() || k.front() == '.' || k.back() == '.' || k.find("..") != std::string::npos)
            invalid(fn, "malformed key '" + k + "'");
        tad::Json report = tad::Json::parse(report_json, "report");
        tad::JsonRef v = follow(report, k);
        if (!v.valid() || v.is_null()) not_in_report(k);
        if (!v.is_number()) invalid(fn, "key '" + k + "' is not a number");
        *value = v.num();
        return TAD_OK;
    });
}

int tad_retrieve(tad_session *session, const tad_retrieve_options *opts, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(session, fn, "session");
        need(out_report, fn, "out_report");
        *out_report = c_string(session->impl.retrieve(retrieve_options(opts, fn)));
        return TAD_OK;
    });
}

int tad_dataset_list(const tad_retrieve_options *opts, char **out_json) {
    return guard(__func__, [&](const char *fn) {
        clear(out_json);
        need(out_json, fn, "out_json");
        *out_json = c_string(tad::retrieve::dataset_listing(retrieve_options(opts, fn)));
        return TAD_OK;
    });
}

int tad_dataset_import(const char *source_dir, const char *dataset_dir, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(source_dir, fn, "source_dir");
        need(out_report, fn, "out_report");
        *out_report = c_string(tad::retrieve::import_dataset(source_dir, dataset_dir ? dataset_dir : ""));
        return TAD_OK;
    });
}

int tad_interpret(const char *source, const char *path, const char *launch_json, tad_buffer *buffers, int num_buffers) {
    return guard(__func__, [&](const char *fn) {
        need(source, fn, "source");
        need(path, fn, "path");
        need(launch_json, fn, "launch_json");
        if (num_buffers < 0) invalid(fn, "num_buffers is negative");
        if (num_buffers > 0) need(buffers, fn, "buffers");
        tad::interp::Memory mem;
        for (int i = 0; i < num_buffers; ++i) {
            if (buffers[i].size < 0 || (buffers[i].size > 0 && !buffers[i].data))
                invalid(fn, "buffer " + std::to_string(i) + " has no data or a negative size");
            mem.add({"buffer " + std::to_string(i), tad::ir::DType::F64,
                     std::vector<double>(buffers[i].data, buffers[i].data + buffers[i].size)});
        }
        tad::verify::interpret(path, source, tad::Json::parse(launch_json, "launch_json"), mem);
        // Written back only now: a launch that faults halfway leaves the caller's buffers untouched.
        for (int i = 0; i < num_buffers; ++i)
            std::copy(mem.buffers[static_cast<size_t>(i)].data.begin(), mem.buffers[static_cast<size_t>(i)].data.end(),
                      buffers[i].data);
        return TAD_OK;
    });
}

}  // extern "C"
