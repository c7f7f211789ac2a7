// generate probes the SWEEP's further entries on the meta device (driver/session_impl.h:
// probe_entry): an entry that brings no new specialization is not traced with real tensors (label
// smoothing's N=8192, V=128256 entry would allocate 4 GB and took 25 of generate's 27 s), and an
// entry the meta device cannot run (a host read of a tensor's value) is traced as before, its
// specialization found.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_session.h"

namespace {

using tad::driver::GenerateOptions;
using tad::driver::Session;
using tad::driver::SessionOptions;

struct Generated {
    std::string source;
    std::vector<std::string> messages;  // "stage: message" of every report
};

Generated generate_reporting(const std::string &file) {
    tad::fs::TempDir dir;
    Generated run;
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = tad::test::kPython;
    opts.progress = [&run](const std::string &stage, const std::string &m, double) {
        run.messages.push_back(stage + ": " + m);
        return true;
    };
    Session s(opts);
    s.load_forward(std::string(TAD_SOURCE_DIR) + "/" + file, std::nullopt);
    run.source = s.candidate_source(s.generate(GenerateOptions{}));
    return run;
}

bool said(const Generated &r, const std::string &m) {
    for (const std::string &x : r.messages)
        if (x == m) return true;
    return false;
}

TEST(SweepProbe, EntriesWithoutNewSpecializationsAreNotTraced) {
    REQUIRE_TORCH();
    const Generated r = generate_reporting("dataset/label_smoothing_ce.py");
    const std::string big = R"({"N":8192,"V":128256,"required":false})";
    EXPECT_TRUE(said(r, "trace: probing label_smoothing_ce with " + big + " on the meta device"));
    EXPECT_FALSE(said(r, "trace: tracing label_smoothing_ce with " + big + " for its specializations and launches"));
}

TEST(SweepProbe, AnEntryTheMetaDeviceCannotRunIsTraced) {
    REQUIRE_TORCH();
    const Generated r = generate_reporting("tests/pipeline/data/probe/host_read.py");
    EXPECT_TRUE(said(r, R"(trace: probing square_or_double with {"N":100} on the meta device)"));
    EXPECT_TRUE(said(r, R"(trace: tracing square_or_double with {"N":100} for its specializations and launches)"));
    EXPECT_NE(r.source.find("def _square_or_double_bwd_SQUARE_True("), std::string::npos) << r.source;
    EXPECT_NE(r.source.find("def _square_or_double_bwd_SQUARE_False("), std::string::npos) << r.source;
    tad::test::generate_and_verify("tests/pipeline/data/probe/host_read.py", "host read", 2);
}

}  // namespace
