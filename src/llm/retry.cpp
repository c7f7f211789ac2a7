#include "llm/retry.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace tad::llm {

bool retryable_status(long status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

double backoff_s(const RetryPolicy &policy, int retry, std::optional<double> retry_after_s) {
    if (retry_after_s) return std::max(0.0, *retry_after_s);
    double d = policy.base_s * std::ldexp(1.0, std::max(0, retry - 1));
    return std::min(d, policy.max_s);
}

std::optional<double> parse_retry_after(const std::string &value, std::time_t now) {
    size_t b = value.find_first_not_of(' '), e = value.find_last_not_of(' ');
    if (b == std::string::npos) return std::nullopt;
    std::string v = value.substr(b, e - b + 1);
    if (v.find_first_not_of("0123456789") == std::string::npos) {
        if (v.size() > 9) return std::nullopt;
        return std::strtod(v.c_str(), nullptr);
    }
    std::tm tm{};
    const char *end = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end) return std::nullopt;
    double delta = std::difftime(timegm(&tm), now);
    return delta > 0 ? std::optional<double>(delta) : std::optional<double>(0.0);
}

}  // namespace tad::llm
