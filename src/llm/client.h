// One chat completion with retries, the budget and the log: what the optimizer asks of a model.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "llm/budget.h"
#include "llm/exchange_log.h"
#include "llm/http.h"
#include "llm/provider.h"
#include "llm/retry.h"
#include "support/json.h"

namespace tad::llm {

using Clock = std::chrono::steady_clock;

struct Attempt;  // one try of a request (client.cpp)

struct ClientOptions {
    ChatSettings chat;
    std::string api_key;  // sent in a header, never logged
    RetryPolicy retry;
    double timeout_s = 300;  // one attempt
};

// The limits of one call besides the options: a deadline (the optimization's wall-clock budget)
// and a flag that cancels it.
struct CallLimits {
    Clock::time_point deadline = Clock::time_point::max();
    const std::atomic<bool> *cancel = nullptr;
};

// How one exchange went. `ok`: `completion` holds the reply; otherwise `error` says why not and
// `status` is the tad_status of that (TAD_ERR_IO for HTTP and network failures and malformed
// replies, TAD_ERR_TIMEOUT, TAD_ERR_CANCELLED, TAD_ERR_STATE for a budget or deadline that does not
// allow the request).
struct Exchange {
    bool ok = false;
    Completion completion;
    int status = 0;
    std::string error;
    int attempts = 0;  // requests sent
    int retries = 0;  // attempts - 1 when any was sent
    double seconds = 0;
    int log_seq = 0;  // its files in the log: <seq>-request.json, <seq>-response.json
};

// Sleeps `seconds` unless cancelled first; returns false when cancelled. Replaced in tests.
using Sleeper = std::function<bool(double seconds, const std::atomic<bool> *cancel)>;
bool sleep_unless_cancelled(double seconds, const std::atomic<bool> *cancel);

class Client {
public:
    // TAD_ERR_INVALID_ARGUMENT for settings check_settings refuses. `log` may be null.
    Client(ClientOptions opts, Transport &transport, Budget &budget, ExchangeLog *log,
           Sleeper sleep = sleep_unless_cancelled);
    // Sends `prompt`, retrying on network failures, timeouts, 408/409/429/5xx (RetryPolicy, honoring
    // Retry-After) while the deadline allows the wait; never throws for what the server or the
    // network does. `purpose` is written to the log ("round 2, candidate 3"). Thread-safe.
    Exchange complete(const Prompt &prompt, const std::string &purpose, const CallLimits &limits);

    const ClientOptions &options() const { return opts_; }

private:
    bool reserve(const Prompt &prompt, ChatSettings &chat, Reservation &r, Exchange &ex);
    void attempts(HttpRequest &req, const CallLimits &limits, Exchange &ex, JsonRef log);
    bool retry_after_failure(const struct Attempt &a, int n, const CallLimits &limits, Exchange &ex);

    ClientOptions opts_;
    Transport &transport_;
    Budget &budget_;
    ExchangeLog *log_;
    Sleeper sleep_;
};

}  // namespace tad::llm
