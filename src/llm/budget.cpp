#include "llm/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "support/error.h"

namespace tad::llm {

namespace {

std::string usd(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "$%.4f", v);
    return buf;
}

}  // namespace

void check_limits(const BudgetLimits &l) {
    if (l.max_tokens < 0) fail(TAD_ERR_INVALID_ARGUMENT, "the token budget must not be negative");
    if (!(l.max_cost_usd >= 0) || !(l.usd_per_mtok_input >= 0) || !(l.usd_per_mtok_output >= 0) ||
        !std::isfinite(l.max_cost_usd + l.usd_per_mtok_input + l.usd_per_mtok_output))
        fail(TAD_ERR_INVALID_ARGUMENT, "the cost budget and the prices must be finite and not negative");
    if (l.max_cost_usd > 0 && l.usd_per_mtok_input == 0 && l.usd_per_mtok_output == 0)
        fail(TAD_ERR_INVALID_ARGUMENT, "a cost budget needs the prices per million input and output tokens");
}

int64_t estimate_tokens(const std::string &text) { return static_cast<int64_t>(text.size() / 3) + 16; }

double Budget::cost(int64_t input, int64_t output) const {
    return (double(input) * limits_.usd_per_mtok_input + double(output) * limits_.usd_per_mtok_output) / 1e6;
}

Reservation Budget::reserve(int64_t input, int64_t max_output) {
    std::lock_guard<std::mutex> lock(mu_);
    Reservation r;
    r.input = input;
    r.output = max_output;
    if (limits_.max_tokens > 0) {
        int64_t left = limits_.max_tokens - in_ - out_ - reserved_in_ - reserved_out_;
        r.output = std::min(r.output, left - input);
        if (r.output < kMinOutput) {
            r.refused = "token budget exhausted: " + std::to_string(in_ + out_) + " of " +
                        std::to_string(limits_.max_tokens) + " tokens spent, " +
                        std::to_string(reserved_in_ + reserved_out_) + " reserved, and this request needs up to " +
                        std::to_string(input + kMinOutput);
            return r;
        }
    }
    if (limits_.max_cost_usd > 0) {
        double left = limits_.max_cost_usd - cost(in_ + reserved_in_, out_ + reserved_out_) - cost(input, 0);
        double per_output = limits_.usd_per_mtok_output / 1e6;
        if (per_output > 0) r.output = std::min<int64_t>(r.output, static_cast<int64_t>(std::floor(left / per_output)));
        if (left < 0 || r.output < kMinOutput) {
            r.refused = "cost budget exhausted: " + usd(cost(in_, out_)) + " of " + usd(limits_.max_cost_usd) +
                        " spent, and this request may cost up to " + usd(cost(input, kMinOutput));
            return r;
        }
    }
    reserved_in_ += r.input;
    reserved_out_ += r.output;
    r.granted = true;
    return r;
}

void Budget::settle(const Reservation &r, int64_t input, int64_t output) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.granted) {
        reserved_in_ -= r.input;
        reserved_out_ -= r.output;
    }
    in_ += input;
    out_ += output;
}

int64_t Budget::tokens_spent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_ + out_;
}

int64_t Budget::input_tokens() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_;
}

int64_t Budget::output_tokens() const {
    std::lock_guard<std::mutex> lock(mu_);
    return out_;
}

double Budget::cost_usd() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cost(in_, out_);
}

}  // namespace tad::llm
