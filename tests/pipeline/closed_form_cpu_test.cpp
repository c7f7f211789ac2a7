// The closed form of the online softmax on the CPU tier: with it, the backward of FlashAttention's
// forward and of an online logsumexp reverses the loop in one forward-order pass (no loop nested in
// the reverse loop to recover the running maximum); without it (TAD_CLOSED_FORM=off), or where the
// running maximum is itself a differentiated output, the loop is reversed by recomputation. Either
// way the gradients match finite differences.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;
using tad::testing::ScopedEnv;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

// Recomputation nests a rerun of the forward loop (its iterator renamed `<name>_1`) in the reverse loop.
bool recomputes(const std::string &src, const std::string &iterator) {
    return has(src, "for " + iterator + "_1 in range(");
}

struct Case {
    const char *name, *file, *iterator;
};

class ClosedFormCpu : public ::testing::TestWithParam<Case> {};

TEST_P(ClosedFormCpu, OnePassMatchesFiniteDifferences) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_CLOSED_FORM", "on");
    const std::string src = tad::test::generate_and_verify(GetParam().file, "closed form", 2);
    EXPECT_FALSE(recomputes(src, GetParam().iterator)) << src;
}

TEST_P(ClosedFormCpu, OffRecomputesAndMatchesToo) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_CLOSED_FORM", "off");
    const std::string src = tad::test::generate_and_verify(GetParam().file, "recompute", 2);
    EXPECT_TRUE(recomputes(src, GetParam().iterator)) << src;
}

INSTANTIATE_TEST_SUITE_P(Files, ClosedFormCpu,
                         ::testing::Values(Case{"flash_attention", "dataset/flash_attention.py", "start_n"},
                                           Case{"online_lse", "tests/pipeline/data/closed_form/online_lse.py",
                                                "start"}),
                         [](const auto &info) { return std::string(info.param.name); });

}  // namespace
