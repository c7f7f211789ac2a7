// The token and cost budget of an optimization, shared by the requests running at once. A request
// reserves its worst case before it is sent (its input estimated from the prompt's length, its
// output at most the limit it asks for); it is sent only when that fits, with its output limit cut
// to what is left. When the reply comes, the reservation gives way to the usage the server
// reports. So the spending never passes a limit unless a server counts more input tokens than
// estimate_tokens() does (one per 3 bytes: generous for code and English text).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace tad::llm {

struct BudgetLimits {
    int64_t max_tokens = 0;  // input + output over all requests; 0: no limit
    double max_cost_usd = 0;  // 0: no limit (needs the prices)
    double usd_per_mtok_input = 0, usd_per_mtok_output = 0;  // prices per million tokens
};

// TAD_ERR_INVALID_ARGUMENT for negative limits or prices, or a cost limit without prices.
void check_limits(const BudgetLimits &l);

// An upper estimate of the tokens of `text`.
int64_t estimate_tokens(const std::string &text);

struct Reservation {
    int64_t input = 0, output = 0;  // output: the limit the request may ask for
    bool granted = false;
    std::string refused;  // why not, when not granted
};

class Budget {
public:
    explicit Budget(BudgetLimits limits) : limits_(limits) {}
    // The fewest output tokens a request is sent with: below this a reply cannot hold a module.
    static constexpr int64_t kMinOutput = 256;

    // Reserves `input` tokens and up to `max_output`; refused ("token budget exhausted: ...",
    // "cost budget exhausted: ...") when not even kMinOutput output tokens fit.
    Reservation reserve(int64_t input, int64_t max_output);
    // The request is over: its reservation is released and `input`/`output` tokens are spent.
    void settle(const Reservation &r, int64_t input, int64_t output);

    int64_t tokens_spent() const;
    int64_t input_tokens() const;
    int64_t output_tokens() const;
    double cost_usd() const;
    const BudgetLimits &limits() const { return limits_; }

private:
    double cost(int64_t input, int64_t output) const;
    BudgetLimits limits_;
    mutable std::mutex mu_;
    int64_t in_ = 0, out_ = 0;  // spent
    int64_t reserved_in_ = 0, reserved_out_ = 0;
};

}  // namespace tad::llm
