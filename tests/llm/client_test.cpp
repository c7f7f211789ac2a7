// The client's retries, budget and log over a scripted transport (llm/client.h): no network.
#include <gtest/gtest.h>

#include <functional>

#include "llm/client.h"
#include "support/fs.h"

using namespace tad;
using namespace tad::llm;

namespace {

const char kKey[] = "sk-test-key-0123456789";

std::string ok_body(const std::string &text, int in = 100, int out = 20) {
    Json b = Json::object();
    JsonRef m = b.set_array("choices").push_object().set_object("message");
    m.set("role", "assistant");
    m.set("content", text);
    JsonRef u = b.set_object("usage");
    u.set("prompt_tokens", in);
    u.set("completion_tokens", out);
    return b.dump();
}

HttpResponse response(long status, const std::string &body, std::vector<Header> headers = {}) {
    HttpResponse r;
    r.status = status;
    r.body = body;
    r.headers = std::move(headers);
    return r;
}

// Answers each post with the next step: a response, or a thrown TransportError.
struct Scripted : Transport {
    std::vector<std::function<HttpResponse()>> steps;
    std::vector<HttpRequest> seen;
    HttpResponse post(const HttpRequest &req, const std::atomic<bool> *) override {
        seen.push_back(req);
        if (seen.size() > steps.size()) throw TransportError(TAD_ERR_IO, "script ended");
        return steps[seen.size() - 1]();
    }
    void reply(HttpResponse r) {
        steps.push_back([r] { return r; });
    }
    void fail(int status, const std::string &why) {
        steps.push_back([status, why]() -> HttpResponse { throw TransportError(status, why); });
    }
};

struct Fixture {
    explicit Fixture(BudgetLimits limits = {}) : budget(limits) {}
    Scripted transport;
    Budget budget;
    std::vector<double> waits;
    bool sleep_ok = true;
    ClientOptions options() {
        ClientOptions o;
        o.chat.model = "m";
        o.api_key = kKey;
        return o;
    }
    Exchange run(ClientOptions o, ExchangeLog *log = nullptr, CallLimits limits = {}) {
        Client c(o, transport, budget, log, [this](double s, const std::atomic<bool> *) {
            waits.push_back(s);
            return sleep_ok;
        });
        return c.complete({"sys", "user"}, "test", limits);
    }
};

TEST(Client, RateLimitThenSuccessHonorsRetryAfter) {
    Fixture f;
    f.transport.reply(response(429, R"({"error": {"message": "slow down"}})", {{"Retry-After", "3"}}));
    f.transport.reply(response(200, ok_body("done", 100, 20)));
    Exchange ex = f.run(f.options());
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.completion.text, "done");
    EXPECT_EQ(ex.attempts, 2);
    EXPECT_EQ(ex.retries, 1);
    EXPECT_EQ(f.waits, (std::vector<double>{3}));
    EXPECT_EQ(f.budget.tokens_spent(), 120);
}

TEST(Client, ServerErrorsBackOffExponentiallyThenGiveUp) {
    Fixture f;
    for (int i = 0; i < 5; ++i) f.transport.reply(response(503, R"({"error": {"message": "overloaded"}})"));
    ClientOptions o = f.options();
    o.retry.max_retries = 3;
    Exchange ex = f.run(o);
    EXPECT_FALSE(ex.ok);
    EXPECT_EQ(ex.status, TAD_ERR_IO);
    EXPECT_EQ(ex.error, "HTTP 503: overloaded (gave up after 4 attempts)");
    EXPECT_EQ(ex.attempts, 4);
    EXPECT_EQ(ex.retries, 3);
    EXPECT_EQ(f.waits, (std::vector<double>{1, 2, 4}));
    EXPECT_EQ(f.budget.tokens_spent(), 0);
}

TEST(Client, ClientErrorsAreNotRetried) {
    Fixture f;
    f.transport.reply(response(401, R"({"error": {"message": "invalid x-api-key"}})"));
    Exchange ex = f.run(f.options());
    EXPECT_EQ(ex.error, "HTTP 401: invalid x-api-key");
    EXPECT_EQ(ex.attempts, 1);
    EXPECT_TRUE(f.waits.empty());
}

TEST(Client, NetworkFailuresAndTimeoutsAreRetried) {
    Fixture f;
    f.transport.fail(TAD_ERR_TIMEOUT, "http://x: timed out");
    f.transport.fail(TAD_ERR_IO, "http://x: the response ended early after 10 bytes of its body");
    f.transport.reply(response(200, ok_body("third time")));
    Exchange ex = f.run(f.options());
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(ex.attempts, 3);
    EXPECT_EQ(f.waits, (std::vector<double>{1, 2}));
}

TEST(Client, MalformedRepliesAreNotRetried) {
    Fixture f;
    f.transport.reply(response(200, R"({"choices": [{"message": )"));
    Exchange ex = f.run(f.options());
    EXPECT_FALSE(ex.ok);
    EXPECT_EQ(ex.status, TAD_ERR_IO);
    EXPECT_EQ(ex.error.rfind("malformed response: not JSON (", 0), 0u) << ex.error;
    EXPECT_EQ(ex.attempts, 1);
}

TEST(Client, TheDeadlineStopsRetriesThatCouldNotFinish) {
    Fixture f;
    f.transport.reply(response(429, "{}", {{"Retry-After", "30"}}));
    CallLimits limits;
    limits.deadline = Clock::now() + std::chrono::seconds(5);
    Exchange ex = f.run(f.options(), nullptr, limits);
    EXPECT_EQ(ex.error, "HTTP 429: {}; a retry in 30s would pass the wall-clock budget");
    EXPECT_TRUE(f.waits.empty());
    limits.deadline = Clock::now() - std::chrono::seconds(1);
    Exchange late = f.run(f.options(), nullptr, limits);
    EXPECT_EQ(late.status, TAD_ERR_STATE);
    EXPECT_EQ(late.error, "out of time: the wall-clock budget ended");
    EXPECT_EQ(late.attempts, 0);
}

TEST(Client, CancellingDuringABackoffEndsTheExchange) {
    Fixture f;
    f.sleep_ok = false;
    f.transport.reply(response(500, "{}"));
    Exchange ex = f.run(f.options());
    EXPECT_EQ(ex.status, TAD_ERR_CANCELLED);
    EXPECT_EQ(ex.error, "cancelled");
    std::atomic<bool> cancel{true};
    EXPECT_FALSE(sleep_unless_cancelled(10, &cancel));
    EXPECT_TRUE(sleep_unless_cancelled(0.01, nullptr));
}

TEST(Client, TheBudgetRefusesBeforeSendingAndCutsTheOutputLimit) {
    BudgetLimits l;
    l.max_tokens = 1000;
    Fixture f(l);
    f.transport.reply(response(200, ok_body("short", 30, 10)));
    Exchange ex = f.run(f.options());
    ASSERT_TRUE(ex.ok) << ex.error;
    EXPECT_EQ(Json::parse(f.transport.seen[0].body, "body").at("max_completion_tokens").integer(),
              1000 - estimate_tokens("sysuser"));
    BudgetLimits tiny;
    tiny.max_tokens = 100;
    Fixture g(tiny);
    Exchange no = g.run(g.options());
    EXPECT_EQ(no.status, TAD_ERR_STATE);
    EXPECT_EQ(no.error.rfind("token budget exhausted: ", 0), 0u) << no.error;
    EXPECT_TRUE(g.transport.seen.empty());  // nothing sent
}

TEST(Client, LogsEveryRequestAndResponseWithTheKeyRedacted) {
    Fixture f;
    // The server echoes the key in an error body, as some proxies do.
    f.transport.reply(response(429, std::string(R"({"error": {"message": "key )") + kKey + R"( is rate limited"}})"));
    f.transport.reply(response(200, ok_body("fine")));
    fs::TempDir dir;
    ExchangeLog log(dir.path(), {kKey});
    Exchange ex = f.run(f.options(), &log);
    ASSERT_TRUE(ex.ok);
    EXPECT_EQ(ex.log_seq, 1);
    const std::string req = fs::read_file(fs::join(dir.path(), "0001-request.json"));
    const std::string resp = fs::read_file(fs::join(dir.path(), "0001-response.json"));
    EXPECT_EQ(req.find(kKey), std::string::npos);
    EXPECT_EQ(resp.find(kKey), std::string::npos);
    Json r = Json::parse(req, "request");
    EXPECT_EQ(r.at("headers").at("Authorization").str(), "[REDACTED]");
    EXPECT_EQ(r.at("body").at("model").str(), "m");
    Json p = Json::parse(resp, "response");
    EXPECT_EQ(p.at("attempts").size(), 2u);
    EXPECT_EQ(p.at("attempts")[0].at("http_status").integer(), 429);
    EXPECT_NE(p.at("attempts")[0].at("body").str().find("key [REDACTED] is rate limited"), std::string::npos);
    EXPECT_EQ(p.at("completion").at("text").str(), "fine");
    // The key itself went to the server.
    EXPECT_EQ(header(f.transport.seen[0].headers, "authorization").value_or(""), std::string("Bearer ") + kKey);
}

}  // namespace
