// The two wire protocols: OpenAI-compatible chat completions (OpenAI itself, and local servers such
// as vLLM or llama.cpp that speak it at another base URL) and Anthropic Messages. Building a request
// and reading a reply are pure functions of text; the Client sends them (client.h).
#pragma once

#include <cstdint>
#include <string>

#include "llm/http.h"

namespace tad::llm {

enum class Provider { OpenAI, Anthropic };

// "openai" or "anthropic"; TAD_ERR_INVALID_ARGUMENT "unknown provider '<name>' (available: openai,
// anthropic)".
Provider provider_named(const std::string &name);
const char *provider_name(Provider p);
// "https://api.openai.com/v1", "https://api.anthropic.com"
const char *default_base_url(Provider p);
// "OPENAI_API_KEY", "ANTHROPIC_API_KEY"
const char *default_key_env(Provider p);

struct ChatSettings {
    Provider provider = Provider::OpenAI;
    std::string model;
    std::string base_url;  // empty: default_base_url
    double temperature = 0;  // 0: not sent (the server's default)
    std::string reasoning_effort;  // "", "low", "medium" or "high"
    int64_t max_output_tokens = 16384;  // the reply's limit (Anthropic: besides the thinking budget)
};

// TAD_ERR_INVALID_ARGUMENT for a reasoning effort other than those above, a temperature outside
// [0, 2], a max_output_tokens below 1, an empty model, or a base URL that is not http(s)://.
void check_settings(const ChatSettings &s);

struct Prompt {
    std::string system, user;
};

// The tokens Anthropic may think with at an effort (0 without one): low 2048, medium 8192, high
// 24576.
int64_t thinking_budget(const std::string &effort);

// The POST of one completion:
// - OpenAI: <base>/chat/completions, "Authorization: Bearer <key>"; body {model, messages: [system,
//   user], max_completion_tokens, temperature?, reasoning_effort?}.
// - Anthropic: <base>/v1/messages, "x-api-key: <key>", "anthropic-version: 2023-06-01"; body {model,
//   system, messages: [user], max_tokens, temperature?, thinking?}. With a reasoning effort the body
//   asks for extended thinking ({"type": "enabled", "budget_tokens": thinking_budget}), max_tokens
//   grows by that budget, and temperature is left out (the API requires its default with thinking).
HttpRequest build_request(const ChatSettings &s, const Prompt &p, const std::string &api_key);

struct Completion {
    std::string text;  // the reply's text (Anthropic: its text blocks joined; thinking left out)
    int64_t input_tokens = 0, output_tokens = 0;  // as the server reports them (usage)
    std::string finish;  // finish_reason / stop_reason, e.g. "stop", "length", "end_turn", "max_tokens"
};

// The completion in a 2xx body. TAD_ERR_IO "malformed response: <why>" when the body is not JSON
// or lacks the reply ("no choices", "no content").
Completion parse_completion(Provider p, const std::string &body);

// A failed request's explanation from its body: the API's error.message (both protocols use
// {"error": {"message": ...}}), else the body's first 300 bytes.
std::string error_message(const std::string &body);

}  // namespace tad::llm
