// Every request a client sends and every response it gets, written to a directory as JSON files
// (docs/llm.md, "Logs"): <dir>/<seq>-request.json before the first attempt, <dir>/<seq>-response.json
// when the exchange ends. Secrets (the API key) are replaced by "[REDACTED]" wherever they appear,
// and the headers that carry them are written as "[REDACTED]" whatever their value.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "llm/http.h"
#include "support/json.h"

namespace tad::llm {

// `text` with every occurrence of each secret (of at least 4 bytes; shorter ones would blank out
// common words) replaced by "[REDACTED]".
std::string redact(std::string text, const std::vector<std::string> &secrets);

// The headers as a JSON object, the value of Authorization, x-api-key and api-key as "[REDACTED]".
Json redacted_headers(const std::vector<Header> &headers, const std::vector<std::string> &secrets);

class ExchangeLog {
public:
    // Creates `dir` as needed. An empty dir logs nothing.
    ExchangeLog(std::string dir, std::vector<std::string> secrets);
    // A new exchange's number (1, 2, ...): unique within this log, safe from several threads.
    int next();
    // Writes <seq>-<part>.json ("0007-request.json"): `record` dumped, then redacted.
    void write(int seq, const std::string &part, JsonRef record) const;
    const std::string &dir() const { return dir_; }
    const std::vector<std::string> &secrets() const { return secrets_; }

private:
    std::string dir_;
    std::vector<std::string> secrets_;
    std::mutex mu_;
    int seq_ = 0;
};

}  // namespace tad::llm
