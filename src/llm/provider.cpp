#include "llm/provider.h"

#include <cstdio>

#include "support/json.h"

namespace tad::llm {

namespace {

std::string trimmed_base(const ChatSettings &s) {
    std::string b = s.base_url.empty() ? default_base_url(s.provider) : s.base_url;
    while (!b.empty() && b.back() == '/') b.pop_back();
    return b;
}

JsonRef message(JsonRef messages, const char *role, const std::string &content) {
    JsonRef m = messages.push_object();
    m.set("role", role);
    m.set("content", content);
    return m;
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

[[noreturn]] void malformed(const std::string &why) { fail(TAD_ERR_IO, "malformed response: " + why); }

Json parse_body(const std::string &body) {
    try {
        return Json::parse(body, "response");
    } catch (const Error &e) {
        malformed(std::string("not JSON (") + e.what() + ")");
    }
}

// usage.<in> and usage.<out>, 0 when the server reports none (a local server may not).
void read_usage(JsonRef reply, const char *in, const char *out, Completion &c) {
    JsonRef usage = reply.get("usage");
    if (!usage.is_object()) return;
    c.input_tokens = usage.get(in).is_number() ? usage.get(in).integer() : 0;
    c.output_tokens = usage.get(out).is_number() ? usage.get(out).integer() : 0;
}

// A content that is a string, or a list of parts whose text parts are joined.
std::string text_of(JsonRef content, const char *type_key, const char *text_key) {
    if (content.is_string()) return content.str();
    std::string out;
    for (size_t i = 0; content.is_array() && i < content.size(); ++i)
        if (content[i].str_or(type_key, "") == "text") out += content[i].str_or(text_key, "");
    return out;
}

Completion openai_completion(JsonRef reply) {
    JsonRef choices = reply.get("choices");
    if (!choices.is_array() || choices.size() == 0) malformed("no choices");
    JsonRef msg = choices[0].get("message");
    if (!msg.is_object()) malformed("choices[0] has no message");
    Completion c;
    c.text = text_of(msg.get("content"), "type", "text");
    c.finish = choices[0].str_or("finish_reason", "");
    if (c.text.empty() && msg.get("refusal").is_string()) malformed("the model refused: " + msg.get("refusal").str());
    read_usage(reply, "prompt_tokens", "completion_tokens", c);
    return c;
}

Completion anthropic_completion(JsonRef reply) {
    JsonRef content = reply.get("content");
    if (!content.is_array()) malformed("no content");
    Completion c;
    c.text = text_of(content, "type", "text");
    c.finish = reply.str_or("stop_reason", "");
    read_usage(reply, "input_tokens", "output_tokens", c);
    return c;
}

}  // namespace

Provider provider_named(const std::string &name) {
    if (name == "openai") return Provider::OpenAI;
    if (name == "anthropic") return Provider::Anthropic;
    fail(TAD_ERR_INVALID_ARGUMENT, "unknown provider '" + name + "' (available: openai, anthropic)");
}

const char *provider_name(Provider p) { return p == Provider::OpenAI ? "openai" : "anthropic"; }

const char *default_base_url(Provider p) {
    return p == Provider::OpenAI ? "https://api.openai.com/v1" : "https://api.anthropic.com";
}

const char *default_key_env(Provider p) { return p == Provider::OpenAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY"; }

int64_t thinking_budget(const std::string &effort) {
    if (effort == "low") return 2048;
    if (effort == "medium") return 8192;
    if (effort == "high") return 24576;
    return 0;
}

void check_settings(const ChatSettings &s) {
    if (s.model.empty()) fail(TAD_ERR_INVALID_ARGUMENT, "no model given");
    if (!s.reasoning_effort.empty() && thinking_budget(s.reasoning_effort) == 0)
        fail(TAD_ERR_INVALID_ARGUMENT,
             "unknown reasoning effort '" + s.reasoning_effort + "' (available: low, medium, high)");
    if (!(s.temperature >= 0 && s.temperature <= 2))
        fail(TAD_ERR_INVALID_ARGUMENT, "temperature must be from 0 to 2, got " + number(s.temperature));
    if (s.max_output_tokens < 1) fail(TAD_ERR_INVALID_ARGUMENT, "max_output_tokens must be positive");
    const std::string b = s.base_url;
    if (!b.empty() && b.rfind("http://", 0) != 0 && b.rfind("https://", 0) != 0)
        fail(TAD_ERR_INVALID_ARGUMENT, "base URL '" + b + "' is not http:// or https://");
}

HttpRequest build_request(const ChatSettings &s, const Prompt &p, const std::string &api_key) {
    HttpRequest req;
    Json body = Json::object();
    body.set("model", s.model);
    if (s.provider == Provider::OpenAI) {
        req.url = trimmed_base(s) + "/chat/completions";
        req.headers.push_back({"Authorization", "Bearer " + api_key});
        JsonRef messages = body.set_array("messages");
        if (!p.system.empty()) message(messages, "system", p.system);
        message(messages, "user", p.user);
        body.set("max_completion_tokens", s.max_output_tokens);
        if (s.temperature > 0) body.set("temperature", s.temperature);
        if (!s.reasoning_effort.empty()) body.set("reasoning_effort", s.reasoning_effort);
    } else {
        req.url = trimmed_base(s) + "/v1/messages";
        req.headers.push_back({"x-api-key", api_key});
        req.headers.push_back({"anthropic-version", "2023-06-01"});
        if (!p.system.empty()) body.set("system", p.system);
        message(body.set_array("messages"), "user", p.user);
        const int64_t thinking = thinking_budget(s.reasoning_effort);
        body.set("max_tokens", s.max_output_tokens + thinking);
        if (thinking > 0) {
            JsonRef t = body.set_object("thinking");
            t.set("type", "enabled");
            t.set("budget_tokens", thinking);
        } else if (s.temperature > 0) {
            body.set("temperature", s.temperature);
        }
    }
    req.body = body.dump();
    return req;
}

Completion parse_completion(Provider p, const std::string &body) {
    Json reply = parse_body(body);
    if (!reply.is_object()) malformed("not a JSON object");
    return p == Provider::OpenAI ? openai_completion(reply) : anthropic_completion(reply);
}

std::string error_message(const std::string &body) {
    try {
        Json j = Json::parse(body, "error");
        JsonRef e = j.get("error");
        if (e.is_object() && e.get("message").is_string()) return e.get("message").str();
        if (e.is_string()) return e.str();
    } catch (const Error &) {}
    return body.substr(0, 300);
}

}  // namespace tad::llm
