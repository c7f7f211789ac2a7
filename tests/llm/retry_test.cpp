// When the clients retry and how long they wait (llm/retry.h).
#include <gtest/gtest.h>

#include <ctime>

#include "llm/retry.h"

using namespace tad::llm;

namespace {

TEST(Retry, BackoffDoublesFromTheBaseUpToTheCap) {
    RetryPolicy p;  // base 1 s, at most 60 s
    std::vector<double> waits;
    for (int retry = 1; retry <= 8; ++retry) waits.push_back(backoff_s(p, retry, std::nullopt));
    EXPECT_EQ(waits, (std::vector<double>{1, 2, 4, 8, 16, 32, 60, 60}));
    p.base_s = 0.25;
    p.max_s = 1;
    EXPECT_DOUBLE_EQ(backoff_s(p, 1, std::nullopt), 0.25);
    EXPECT_DOUBLE_EQ(backoff_s(p, 3, std::nullopt), 1);
}

TEST(Retry, RetryAfterReplacesTheBackoffAsSent) {
    RetryPolicy p;
    EXPECT_DOUBLE_EQ(backoff_s(p, 1, 7.0), 7);
    EXPECT_DOUBLE_EQ(backoff_s(p, 5, 0.0), 0);
    EXPECT_DOUBLE_EQ(backoff_s(p, 1, 120.0), 120);  // longer than max_s: the server said so
}

TEST(Retry, RetryAfterIsSecondsOrAnHttpDate) {
    const std::time_t now = 1445412450;  // Wed, 21 Oct 2015 07:27:30 GMT
    EXPECT_EQ(parse_retry_after("120", now), 120.0);
    EXPECT_EQ(parse_retry_after(" 5 ", now), 5.0);
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), 30.0);
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), 0.0);  // past
    EXPECT_FALSE(parse_retry_after("soon", now));
    EXPECT_FALSE(parse_retry_after("-1", now));
    EXPECT_FALSE(parse_retry_after("", now));
    EXPECT_FALSE(parse_retry_after("99999999999", now));
}

TEST(Retry, OnlyStatusesALaterAttemptMayNotHaveAreRetried) {
    for (long s : {408L, 409L, 429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(retryable_status(s)) << s;
    for (long s : {400L, 401L, 403L, 404L, 413L, 422L, 301L}) EXPECT_FALSE(retryable_status(s)) << s;
}

}  // namespace
