// When the clients try a request again, and how long they wait first.
#pragma once

#include <ctime>
#include <optional>
#include <string>

namespace tad::llm {

struct RetryPolicy {
    int max_retries = 4;  // attempts after the first
    double base_s = 1;  // the wait before the first retry; it doubles with each one
    double max_s = 60;  // the doubling stops here
};

// 408 (request timeout), 409 (conflict), 429 (rate limit) and 5xx: the server may answer later.
// Anything else (4xx: a bad request, a bad key) would fail the same way again.
bool retryable_status(long status);

// The wait before retry `retry` (1 for the first): the server's Retry-After when it sent one (as
// sent, however long: a rate limit is a rate limit), else base_s * 2^(retry - 1), at most max_s.
double backoff_s(const RetryPolicy &policy, int retry, std::optional<double> retry_after_s);

// A Retry-After header's seconds: delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00
// GMT") counted from `now` (0 for a date past); none when it is neither.
std::optional<double> parse_retry_after(const std::string &value, std::time_t now);

}  // namespace tad::llm
