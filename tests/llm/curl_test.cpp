// The libcurl transport and the clients against the scripted server (tests/common/fake_llm.h) on
// 127.0.0.1: both protocols, retries, a timeout, a body cut short, a refused connection.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "../common/fake_llm.h"
#include "llm/client.h"

using namespace tad;
using namespace tad::llm;
using tad::test::FakeLlm;

namespace {

const char kKey[] = "sk-test-curl-0123456789";

int transport_status(FakeLlm &server, double timeout_s, std::string *message) {
    CurlTransport t;
    HttpRequest req;
    req.url = server.url("/v1/chat/completions");
    req.body = "{}";
    req.timeout_s = timeout_s;
    try {
        t.post(req, nullptr);
    } catch (const TransportError &e) {
        *message = e.what();
        return e.status();
    }
    return TAD_OK;
}

Exchange complete(FakeLlm &server, Provider p, RetryPolicy retry = {}) {
    ClientOptions o;
    o.chat.provider = p;
    o.chat.model = "fake-model";
    o.chat.base_url = server.url(p == Provider::OpenAI ? "/v1" : "");
    o.api_key = kKey;
    o.retry = retry;
    o.timeout_s = 10;
    CurlTransport t;
    Budget b{BudgetLimits{}};
    Client c(o, t, b, nullptr);
    return c.complete({"system text", "user text"}, "curl test", {});
}

TEST(Curl, OpenAIProtocolEndToEnd) {
    FakeLlm server(tad::test::replies({tad::test::reply("hello from the fake", R"({"usage": [11, 22]})")}));
    Exchange ex = complete(server, Provider::OpenAI);
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.completion.text, "hello from the fake");
    EXPECT_EQ(ex.completion.input_tokens, 11);
    EXPECT_EQ(ex.completion.output_tokens, 22);
    std::vector<Json> seen = server.requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].at("path").str(), "/v1/chat/completions");
    EXPECT_EQ(seen[0].at("headers").at("Authorization").str(), std::string("Bearer ") + kKey);
    EXPECT_EQ(seen[0].at("body").at("model").str(), "fake-model");
    EXPECT_EQ(seen[0].at("body").at("messages")[1].at("content").str(), "user text");
}

TEST(Curl, AnthropicProtocolEndToEnd) {
    FakeLlm server(tad::test::replies({tad::test::reply("hello, says claude's stand-in")}));
    Exchange ex = complete(server, Provider::Anthropic);
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.completion.text, "hello, says claude's stand-in");
    EXPECT_EQ(ex.completion.finish, "end_turn");
    std::vector<Json> seen = server.requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].at("path").str(), "/v1/messages");
    EXPECT_EQ(seen[0].at("headers").at("x-api-key").str(), kKey);
    EXPECT_EQ(seen[0].at("headers").at("anthropic-version").str(), "2023-06-01");
    EXPECT_EQ(seen[0].at("body").at("system").str(), "system text");
}

TEST(Curl, RateLimitThenSuccessWaitsForRetryAfter) {
    FakeLlm server(tad::test::replies({Json::parse(R"({"status": 429, "error": "rate limited",
                                                        "headers": {"Retry-After": "1"}})",
                                                   "reply"),
                                       tad::test::reply("after the wait")}));
    const auto t0 = std::chrono::steady_clock::now();
    Exchange ex = complete(server, Provider::OpenAI);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.completion.text, "after the wait");
    EXPECT_EQ(ex.attempts, 2);
    EXPECT_GE(took, 1.0);
    EXPECT_EQ(server.requests().size(), 2u);
}

TEST(Curl, ATimeoutIsATimeout) {
    FakeLlm server(tad::test::replies({Json::parse(R"({"text": "late", "delay_s": 3})", "reply")}));
    std::string message;
    EXPECT_EQ(transport_status(server, 0.5, &message), TAD_ERR_TIMEOUT);
    EXPECT_EQ(message.rfind(server.url("/v1/chat/completions") + ": timed out (", 0), 0u) << message;
}

TEST(Curl, ABodyCutShortIsAnIOError) {
    FakeLlm server(
        tad::test::replies({Json::parse(R"({"text": "half of this goes missing", "truncate": true})", "reply")}));
    std::string message;
    EXPECT_EQ(transport_status(server, 10, &message), TAD_ERR_IO);
    EXPECT_NE(message.find(": the response ended early after "), std::string::npos) << message;
}

TEST(Curl, ATruncatedBodyIsRetriedByTheClient) {
    FakeLlm server(
        tad::test::replies({Json::parse(R"({"text": "cut", "truncate": true})", "reply"), tad::test::reply("whole")}));
    RetryPolicy fast;
    fast.base_s = 0.05;
    Exchange ex = complete(server, Provider::OpenAI, fast);
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.completion.text, "whole");
    EXPECT_EQ(ex.retries, 1);
}

TEST(Curl, ARefusedConnectionIsAnIOError) {
    // A port that was free a moment ago: nothing listens there.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    CurlTransport t;
    HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/v1/chat/completions";
    try {
        t.post(req, nullptr);
        FAIL() << "no error";
    } catch (const TransportError &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_EQ(std::string(e.what()).rfind(req.url + ": ", 0), 0u);
    }
}

TEST(Curl, CancellingStopsARequestInFlight) {
    FakeLlm server(tad::test::replies({Json::parse(R"({"text": "never seen", "delay_s": 5})", "reply")}));
    CurlTransport t;
    HttpRequest req;
    req.url = server.url("/v1/chat/completions");
    req.body = "{}";
    std::atomic<bool> cancel{false};
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancel = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    try {
        t.post(req, &cancel);
        ADD_FAILURE() << "no error";
    } catch (const TransportError &e) {
        EXPECT_EQ(e.status(), TAD_ERR_CANCELLED);
    }
    stopper.join();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.0);
}

}  // namespace
