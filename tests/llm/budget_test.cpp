// The token and cost budget (llm/budget.h).
#include <gtest/gtest.h>

#include "llm/budget.h"
#include "support/error.h"

using namespace tad;
using namespace tad::llm;

namespace {

TEST(Budget, WithoutLimitsEveryRequestGetsItsOutputLimit) {
    Budget b(BudgetLimits{});
    Reservation r = b.reserve(1'000'000, 16384);
    EXPECT_TRUE(r.granted);
    EXPECT_EQ(r.output, 16384);
    b.settle(r, 900, 100);
    EXPECT_EQ(b.tokens_spent(), 1000);
    EXPECT_EQ(b.input_tokens(), 900);
    EXPECT_EQ(b.output_tokens(), 100);
}

TEST(Budget, TokenLimitCutsTheOutputAndRefusesWhatCannotFit) {
    BudgetLimits l;
    l.max_tokens = 10000;
    Budget b(l);
    Reservation first = b.reserve(2000, 16384);
    ASSERT_TRUE(first.granted);
    EXPECT_EQ(first.output, 8000);  // what is left after the input
    Reservation second = b.reserve(2000, 16384);  // the first still holds everything
    EXPECT_FALSE(second.granted);
    EXPECT_EQ(second.refused,
              "token budget exhausted: 0 of 10000 tokens spent, 10000 reserved, and this request needs up to 2256");
    b.settle(first, 1500, 700);
    EXPECT_EQ(b.tokens_spent(), 2200);
    Reservation third = b.reserve(2000, 16384);
    ASSERT_TRUE(third.granted);
    EXPECT_EQ(third.output, 10000 - 2200 - 2000);
    b.settle(third, 2000, third.output);
    EXPECT_LE(b.tokens_spent(), l.max_tokens);
    EXPECT_FALSE(b.reserve(10, 16384).granted);
}

TEST(Budget, CostLimitUsesThePrices) {
    BudgetLimits l;
    l.max_cost_usd = 0.10;
    l.usd_per_mtok_input = 3;  // $3 per million input tokens
    l.usd_per_mtok_output = 15;
    Budget b(l);
    Reservation r = b.reserve(10000, 100000);  // input $0.03; $0.07 left: 4666 output tokens
    ASSERT_TRUE(r.granted);
    EXPECT_EQ(r.output, 4666);
    b.settle(r, 10000, 4666);
    EXPECT_NEAR(b.cost_usd(), 0.03 + 4666 * 15e-6, 1e-12);
    Reservation no = b.reserve(10000, 100000);
    EXPECT_FALSE(no.granted);
    EXPECT_EQ(no.refused, "cost budget exhausted: $0.1000 of $0.1000 spent, and this request may cost up to $0.0338");
}

TEST(Budget, LimitsAreChecked) {
    auto message = [](BudgetLimits l) {
        try {
            check_limits(l);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string();
    };
    BudgetLimits l;
    EXPECT_EQ(message(l), "");
    l.max_cost_usd = 1;
    EXPECT_EQ(message(l), "a cost budget needs the prices per million input and output tokens");
    l.usd_per_mtok_output = -1;
    EXPECT_EQ(message(l), "the cost budget and the prices must be finite and not negative");
    BudgetLimits t;
    t.max_tokens = -5;
    EXPECT_EQ(message(t), "the token budget must not be negative");
}

TEST(Budget, EstimatesAreGenerous) {
    EXPECT_EQ(estimate_tokens(""), 16);
    EXPECT_EQ(estimate_tokens(std::string(3000, 'x')), 1016);
}

}  // namespace
