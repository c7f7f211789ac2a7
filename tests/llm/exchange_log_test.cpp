// Redaction and the request/response files (llm/exchange_log.h).
#include <gtest/gtest.h>

#include "llm/exchange_log.h"
#include "support/fs.h"

using namespace tad;
using namespace tad::llm;

namespace {

TEST(Redact, EveryOccurrenceOfASecretGoes) {
    EXPECT_EQ(redact("key sk-abc123 and again sk-abc123.", {"sk-abc123"}), "key [REDACTED] and again [REDACTED].");
    EXPECT_EQ(redact("nothing here", {"sk-abc123"}), "nothing here");
    EXPECT_EQ(redact("a b c", {"b"}), "a b c");  // too short to be told from text
    EXPECT_EQ(redact("xxxx", {"xx"
                              "xx",
                              "yyyy"}),
              "[REDACTED]");
}

TEST(Redact, KeyHeadersAreRedactedWhateverTheirValue) {
    Json h = redacted_headers({{"Authorization", "Bearer whatever"},
                               {"X-Api-Key", "k"},
                               {"api-key", "k2"},
                               {"Content-Type", "application/json"},
                               {"X-Echo", "saw sk-secret-1"}},
                              {"sk-secret-1"});
    EXPECT_EQ(h.at("Authorization").str(), "[REDACTED]");
    EXPECT_EQ(h.at("X-Api-Key").str(), "[REDACTED]");
    EXPECT_EQ(h.at("api-key").str(), "[REDACTED]");
    EXPECT_EQ(h.at("Content-Type").str(), "application/json");
    EXPECT_EQ(h.at("X-Echo").str(), "saw [REDACTED]");
}

TEST(ExchangeLog, WritesNumberedFilesWithoutTheSecret) {
    fs::TempDir dir;
    ExchangeLog log(fs::join(dir.path(), "requests"), {"sk-secret-1"});
    EXPECT_EQ(log.next(), 1);
    EXPECT_EQ(log.next(), 2);
    Json rec = Json::object();
    rec.set("echo", "the key is sk-secret-1");
    log.write(2, "request", rec);
    const std::string text = fs::read_file(fs::join(dir.path(), "requests/0002-request.json"));
    EXPECT_EQ(text.find("sk-secret-1"), std::string::npos);
    EXPECT_EQ(Json::parse(text, "log").at("echo").str(), "the key is [REDACTED]");
    ExchangeLog none("", {});
    none.write(1, "request", rec);  // logs nothing
}

}  // namespace
