// The two wire protocols: requests as built, replies as read (llm/provider.h).
#include <gtest/gtest.h>

#include "llm/provider.h"
#include "support/json.h"

using namespace tad;
using namespace tad::llm;

namespace {

std::string error_of(void (*f)()) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

ChatSettings settings(Provider p) {
    ChatSettings s;
    s.provider = p;
    s.model = "m-1";
    return s;
}

TEST(Provider, OpenAIRequestHasTheKeyHeaderAndTheChatBody) {
    ChatSettings s = settings(Provider::OpenAI);
    s.base_url = "http://localhost:8000/v1/";
    HttpRequest r = build_request(s, {"be brief", "hello"}, "sk-1");
    EXPECT_EQ(r.url, "http://localhost:8000/v1/chat/completions");
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].name, "Authorization");
    EXPECT_EQ(r.headers[0].value, "Bearer sk-1");
    Json b = Json::parse(r.body, "body");
    EXPECT_EQ(b.at("model").str(), "m-1");
    EXPECT_EQ(b.at("messages").size(), 2u);
    EXPECT_EQ(b.at("messages")[0].at("role").str(), "system");
    EXPECT_EQ(b.at("messages")[1].at("content").str(), "hello");
    EXPECT_EQ(b.at("max_completion_tokens").integer(), 16384);
    EXPECT_FALSE(b.has("temperature"));  // 0: the server's default
    EXPECT_FALSE(b.has("reasoning_effort"));
}

TEST(Provider, OpenAISendsTemperatureAndReasoningEffortWhenGiven) {
    ChatSettings s = settings(Provider::OpenAI);
    s.temperature = 0.7;
    s.reasoning_effort = "high";
    Json b = Json::parse(build_request(s, {"", "hi"}, "k").body, "body");
    EXPECT_DOUBLE_EQ(b.at("temperature").num(), 0.7);
    EXPECT_EQ(b.at("reasoning_effort").str(), "high");
    EXPECT_EQ(b.at("messages").size(), 1u);  // no system message when there is none
    EXPECT_EQ(build_request(s, {"", "hi"}, "k").url, "https://api.openai.com/v1/chat/completions");
}

TEST(Provider, AnthropicRequestHasItsHeadersAndMessagesBody) {
    ChatSettings s = settings(Provider::Anthropic);
    s.temperature = 0.5;
    HttpRequest r = build_request(s, {"sys", "hello"}, "ak-2");
    EXPECT_EQ(r.url, "https://api.anthropic.com/v1/messages");
    EXPECT_EQ(header(r.headers, "X-API-Key").value_or(""), "ak-2");
    EXPECT_EQ(header(r.headers, "anthropic-version").value_or(""), "2023-06-01");
    Json b = Json::parse(r.body, "body");
    EXPECT_EQ(b.at("system").str(), "sys");
    EXPECT_EQ(b.at("messages").size(), 1u);
    EXPECT_EQ(b.at("messages")[0].at("role").str(), "user");
    EXPECT_EQ(b.at("max_tokens").integer(), 16384);
    EXPECT_DOUBLE_EQ(b.at("temperature").num(), 0.5);
    EXPECT_FALSE(b.has("thinking"));
}

TEST(Provider, AnthropicReasoningEffortAsksForThinkingWithoutTemperature) {
    ChatSettings s = settings(Provider::Anthropic);
    s.temperature = 0.5;
    s.reasoning_effort = "medium";
    s.max_output_tokens = 1000;
    Json b = Json::parse(build_request(s, {"", "hi"}, "k").body, "body");
    EXPECT_EQ(b.at("thinking").at("type").str(), "enabled");
    EXPECT_EQ(b.at("thinking").at("budget_tokens").integer(), 8192);
    EXPECT_EQ(b.at("max_tokens").integer(), 1000 + 8192);
    EXPECT_FALSE(b.has("temperature"));
    EXPECT_EQ(thinking_budget("low"), 2048);
    EXPECT_EQ(thinking_budget("high"), 24576);
    EXPECT_EQ(thinking_budget(""), 0);
}

TEST(Provider, ReadsOpenAIReplies) {
    Completion c = parse_completion(Provider::OpenAI, R"({"choices": [{"message": {"role": "assistant",
        "content": "the text"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 12, "completion_tokens": 34}})");
    EXPECT_EQ(c.text, "the text");
    EXPECT_EQ(c.finish, "length");
    EXPECT_EQ(c.input_tokens, 12);
    EXPECT_EQ(c.output_tokens, 34);
    // A local server without usage: zero tokens.
    Completion d = parse_completion(Provider::OpenAI, R"({"choices": [{"message": {"content": "x"}}]})");
    EXPECT_EQ(d.input_tokens, 0);
    EXPECT_EQ(d.text, "x");
}

TEST(Provider, ReadsAnthropicRepliesWithoutTheirThinking) {
    Completion c = parse_completion(Provider::Anthropic, R"({"content": [{"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "part 1, "}, {"type": "text", "text": "part 2"}], "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 6}})");
    EXPECT_EQ(c.text, "part 1, part 2");
    EXPECT_EQ(c.finish, "max_tokens");
    EXPECT_EQ(c.input_tokens, 5);
    EXPECT_EQ(c.output_tokens, 6);
}

TEST(Provider, MalformedRepliesAreIOErrorsSayingWhy) {
    EXPECT_EQ(error_of([] {
                  parse_completion(Provider::OpenAI, R"({"choices": [})");
              }).rfind("malformed response: not JSON (", 0),
              0u);
    EXPECT_EQ(error_of([] { parse_completion(Provider::OpenAI, R"({"choices": []})"); }),
              "malformed response: no choices");
    EXPECT_EQ(error_of([] { parse_completion(Provider::OpenAI, "[1]"); }), "malformed response: not a JSON object");
    EXPECT_EQ(error_of([] { parse_completion(Provider::Anthropic, R"({"id": "x"})"); }),
              "malformed response: no content");
    EXPECT_EQ(error_of([] {
                  parse_completion(Provider::OpenAI,
                                   R"({"choices": [{"message": {"content": null, "refusal": "no, sorry"}}]})");
              }),
              "malformed response: the model refused: no, sorry");
    try {
        parse_completion(Provider::OpenAI, "{");
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
    }
}

TEST(Provider, ErrorMessagesComeFromTheErrorObjectOrTheBody) {
    EXPECT_EQ(error_message(R"({"error": {"message": "Rate limit reached", "type": "rate_limit"}})"),
              "Rate limit reached");
    EXPECT_EQ(error_message(R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})"),
              "Overloaded");
    EXPECT_EQ(error_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
    EXPECT_EQ(error_message(std::string(1000, 'x')).size(), 300u);
}

TEST(Provider, SettingsAreChecked) {
    EXPECT_EQ(error_of([] { provider_named("mistral"); }), "unknown provider 'mistral' (available: openai, anthropic)");
    EXPECT_EQ(provider_named("anthropic"), Provider::Anthropic);
    EXPECT_EQ(error_of([] { check_settings(ChatSettings{}); }), "no model given");
    EXPECT_EQ(error_of([] {
                  ChatSettings s = settings(Provider::OpenAI);
                  s.reasoning_effort = "max";
                  check_settings(s);
              }),
              "unknown reasoning effort 'max' (available: low, medium, high)");
    EXPECT_EQ(error_of([] {
                  ChatSettings s = settings(Provider::OpenAI);
                  s.temperature = 3;
                  check_settings(s);
              }),
              "temperature must be from 0 to 2, got 3");
    EXPECT_EQ(error_of([] {
                  ChatSettings s = settings(Provider::OpenAI);
                  s.base_url = "ftp://host";
                  check_settings(s);
              }),
              "base URL 'ftp://host' is not http:// or https://");
    EXPECT_EQ(std::string(default_key_env(Provider::Anthropic)), "ANTHROPIC_API_KEY");
    EXPECT_EQ(std::string(default_key_env(Provider::OpenAI)), "OPENAI_API_KEY");
}

}  // namespace
