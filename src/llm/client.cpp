#include "llm/client.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>

namespace tad::llm {

// One attempt's outcome: a response, or why none came.
struct Attempt {
    std::optional<HttpResponse> response;
    int status = 0;  // of the transport error
    std::string error;
    std::optional<double> retry_after;
    double seconds = 0;
};

namespace {

double seconds_until(Clock::time_point deadline) {
    if (deadline == Clock::time_point::max()) return 1e18;
    return std::chrono::duration<double>(deadline - Clock::now()).count();
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string secs(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3gs", s);
    return buf;
}

// The request as the log shows it: the body as JSON, the headers redacted.
Json request_record(const ClientOptions &o, const HttpRequest &req, const std::string &purpose) {
    Json rec = Json::object();
    rec.set("purpose", purpose);
    rec.set("provider", provider_name(o.chat.provider));
    rec.set("model", o.chat.model);
    rec.set("url", req.url);
    rec.set_copy("headers", redacted_headers(req.headers, {o.api_key}));
    rec.set_copy("body", Json::parse(req.body, "request body"));
    return rec;
}

Attempt send(Transport &t, const HttpRequest &req, const std::atomic<bool> *cancel) {
    Attempt a;
    const auto t0 = Clock::now();
    try {
        a.response = t.post(req, cancel);
        const long s = a.response->status;
        if (s / 100 != 2) a.error = "HTTP " + std::to_string(s) + ": " + error_message(a.response->body);
        if (auto ra = header(a.response->headers, "retry-after"))
            a.retry_after = parse_retry_after(*ra, std::time(nullptr));
    } catch (const TransportError &e) {
        a.status = e.status();
        a.error = e.what();
    }
    a.seconds = seconds_since(t0);
    return a;
}

void log_attempt(JsonRef attempts, int n, const Attempt &a, const std::vector<std::string> &secrets) {
    JsonRef rec = attempts.push_object();
    rec.set("attempt", n);
    rec.set("seconds", a.seconds);
    if (a.response) {
        rec.set("http_status", static_cast<int64_t>(a.response->status));
        rec.set_copy("headers", redacted_headers(a.response->headers, secrets));
        rec.set("body", a.response->body);
    } else {
        rec.set_null("http_status");
    }
    if (!a.error.empty()) rec.set("error", a.error);
    if (a.retry_after) rec.set("retry_after_s", *a.retry_after);
}

Json response_record(const std::string &purpose, JsonRef attempts, const Exchange &ex) {
    Json rec = Json::object();
    rec.set("purpose", purpose);
    rec.set_copy("attempts", attempts);
    rec.set_bool("ok", ex.ok);
    if (ex.ok) {
        JsonRef c = rec.set_object("completion");
        c.set("text", ex.completion.text);
        c.set("finish", ex.completion.finish);
        c.set("input_tokens", ex.completion.input_tokens);
        c.set("output_tokens", ex.completion.output_tokens);
    } else {
        rec.set("error", ex.error);
    }
    rec.set("seconds", ex.seconds);
    return rec;
}

}  // namespace

bool sleep_unless_cancelled(double seconds, const std::atomic<bool> *cancel) {
    auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
        if (cancel && cancel->load()) return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
    return !(cancel && cancel->load());
}

Client::Client(ClientOptions opts, Transport &transport, Budget &budget, ExchangeLog *log, Sleeper sleep)
    : opts_(std::move(opts)), transport_(transport), budget_(budget), log_(log), sleep_(std::move(sleep)) {
    check_settings(opts_.chat);
}

// Reserves the request's worst case; the output limit it may ask for, or the refusal in `ex`.
bool Client::reserve(const Prompt &prompt, ChatSettings &chat, Reservation &r, Exchange &ex) {
    const int64_t thinking = chat.provider == Provider::Anthropic ? thinking_budget(chat.reasoning_effort) : 0;
    r = budget_.reserve(estimate_tokens(prompt.system + prompt.user), chat.max_output_tokens + thinking);
    if (r.granted && r.output - thinking < Budget::kMinOutput) {
        budget_.settle(r, 0, 0);
        r.granted = false;
        r.refused = "token budget exhausted: no room for the thinking budget and a reply";
    }
    if (!r.granted) {
        ex.status = TAD_ERR_STATE;
        ex.error = r.refused;
        return false;
    }
    chat.max_output_tokens = r.output - thinking;
    return true;
}

// Whether to try again after a failed attempt `n`: the failure is one a later attempt may not
// have, retries are left, and the wait fits before the deadline. The wait is slept here.
bool Client::retry_after_failure(const Attempt &a, int n, const CallLimits &limits, Exchange &ex) {
    ex.status = a.response ? TAD_ERR_IO : a.status;
    ex.error = a.error;
    const bool again = a.response ? retryable_status(a.response->status) : a.status != TAD_ERR_CANCELLED;
    if (!again) return false;
    if (n > opts_.retry.max_retries) {
        ex.error += " (gave up after " + std::to_string(n) + " attempts)";
        return false;
    }
    const double wait = backoff_s(opts_.retry, n, a.retry_after);
    if (wait >= seconds_until(limits.deadline)) {
        ex.error += "; a retry in " + secs(wait) + " would pass the wall-clock budget";
        return false;
    }
    if (sleep_(wait, limits.cancel)) return true;
    ex.status = TAD_ERR_CANCELLED;
    ex.error = "cancelled";
    return false;
}

void Client::attempts(HttpRequest &req, const CallLimits &limits, Exchange &ex, JsonRef log) {
    for (int n = 1;; ++n) {
        const double left = seconds_until(limits.deadline);
        if (left <= 0) {
            ex.status = TAD_ERR_STATE;
            ex.error =
                "out of time: the wall-clock budget ended" + (ex.error.empty() ? "" : " (last: " + ex.error + ")");
            return;
        }
        req.timeout_s = std::min(opts_.timeout_s, left);
        Attempt a = send(transport_, req, limits.cancel);
        ex.attempts = n;
        log_attempt(log, n, a, {opts_.api_key});
        if (a.response && a.response->status / 100 == 2) {
            try {
                ex.completion = parse_completion(opts_.chat.provider, a.response->body);
                ex.ok = true;
            } catch (const Error &e) {
                ex.status = e.status();
                ex.error = e.what();
            }
            return;
        }
        if (!retry_after_failure(a, n, limits, ex)) return;
    }
}

Exchange Client::complete(const Prompt &prompt, const std::string &purpose, const CallLimits &limits) {
    const auto t0 = Clock::now();
    Exchange ex;
    ChatSettings chat = opts_.chat;
    Reservation r;
    if (!reserve(prompt, chat, r, ex)) return ex;
    HttpRequest req = build_request(chat, prompt, opts_.api_key);
    ex.log_seq = log_ ? log_->next() : 0;
    if (log_) log_->write(ex.log_seq, "request", request_record(opts_, req, purpose));
    Json log = Json::array();
    attempts(req, limits, ex, log);
    ex.retries = std::max(0, ex.attempts - 1);
    ex.seconds = seconds_since(t0);
    budget_.settle(r, ex.completion.input_tokens, ex.completion.output_tokens);
    if (log_) log_->write(ex.log_seq, "response", response_record(purpose, log, ex));
    return ex;
}

}  // namespace tad::llm
