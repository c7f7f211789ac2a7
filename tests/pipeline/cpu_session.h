// What the CPU-tier pipeline tests share: sessions whose worker runs Debian's CPU torch (with tad's
// recording stand-in for triton).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "driver/session.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::test {

using driver::GenerateOptions;
using driver::Session;
using driver::SessionOptions;

inline const char *kPython = "/usr/bin/python3";

inline bool torch_available() {
    return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

// Skips a test, visibly, where Debian's python3 cannot import torch.
#define REQUIRE_TORCH()                  \
    if (!::tad::test::torch_available()) \
    GTEST_SKIP() << "[SKIP] " << ::tad::test::kPython << " cannot import torch (apt-get install python3-torch)"

// A session in `dir` with `file` loaded: an absolute path, or one relative to the source tree.
inline std::unique_ptr<Session> cpu_session(const fs::TempDir &dir, const std::string &file) {
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = kPython;
    auto s = std::make_unique<Session>(opts);
    s->load_forward(file.rfind('/', 0) == 0 ? file : std::string(TAD_SOURCE_DIR) + "/" + file, std::nullopt);
    return s;
}

// Generates `file` (as cpu_session takes it) and checks it on the CPU tier, which must pass with at
// least `min_passed` SWEEP entries checked; returns the generated module. `what` names the case in
// failures (a mode the caller set).
inline std::string generate_and_verify(const std::string &file, const std::string &what, int min_passed) {
    fs::TempDir dir;
    auto s = cpu_session(dir, file);
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    driver::VerifyOptions v;
    v.cpu = true;
    v.max_elements = 1 << 16;
    bool passed = false;
    const std::string report = s->verify(v, &passed);
    EXPECT_TRUE(passed) << file << " (" << what << "): " << report;
    Json r = Json::parse(report, "report");
    int checked = 0;
    for (size_t i = 0; i < r.at("results").size(); ++i) checked += r.at("results")[i].at("status").str() == "pass";
    EXPECT_GE(checked, min_passed) << report;
    return src;
}

// How many times `what` occurs in `src`.
inline int count(const std::string &src, const std::string &what) {
    int n = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
    return n;
}

// The text of the first kernel named `name` in a generated module, up to the next blank line.
inline std::string kernel(const std::string &src, const std::string &name) {
    const size_t at = src.find("def " + name + "(");
    if (at == std::string::npos) return "";
    return src.substr(at, src.find("\n\n", at) - at);
}

// A data file `generate` must refuse, and what the refusal must say.
struct Refused {
    const char *file, *message;
};
inline void PrintTo(const Refused &r, std::ostream *os) { *os << r.file; }

// Generating `file` (as cpu_session takes it) fails with TAD_ERR_UNSUPPORTED, its message containing
// `message`.
inline void expect_refused(const std::string &file, const std::string &message) {
    fs::TempDir dir;
    auto s = cpu_session(dir, file);
    try {
        s->generate(GenerateOptions{});
        ADD_FAILURE() << file << ": expected a refusal";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_UNSUPPORTED);
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

}  // namespace tad::test
