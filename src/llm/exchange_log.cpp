#include "llm/exchange_log.h"

#include <cstdio>

#include "support/fs.h"

namespace tad::llm {

namespace {

bool is_secret_header(const std::string &name) {
    for (const char *h : {"authorization", "x-api-key", "api-key"})
        if (header({{name, ""}}, h)) return true;
    return false;
}

}  // namespace

std::string redact(std::string text, const std::vector<std::string> &secrets) {
    for (const std::string &s : secrets) {
        if (s.size() < 4) continue;
        for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 10))
            text.replace(at, s.size(), "[REDACTED]");
    }
    return text;
}

Json redacted_headers(const std::vector<Header> &headers, const std::vector<std::string> &secrets) {
    Json out = Json::object();
    for (const Header &h : headers) out.set(h.name, is_secret_header(h.name) ? "[REDACTED]" : redact(h.value, secrets));
    return out;
}

ExchangeLog::ExchangeLog(std::string dir, std::vector<std::string> secrets)
    : dir_(std::move(dir)), secrets_(std::move(secrets)) {
    if (!dir_.empty()) fs::make_dirs(dir_);
}

int ExchangeLog::next() {
    std::lock_guard<std::mutex> lock(mu_);
    return ++seq_;
}

void ExchangeLog::write(int seq, const std::string &part, JsonRef record) const {
    if (dir_.empty()) return;
    char name[32];
    std::snprintf(name, sizeof name, "%04d-", seq);
    fs::write_file_atomic(fs::join(dir_, name + part + ".json"), redact(record.dump(true), secrets_) + "\n");
}

}  // namespace tad::llm
