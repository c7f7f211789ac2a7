// Reading a recurrence's states back where its forward stored them (passes/stored_states.h), on the
// CPU tier: the backward is one reverse-time loop that loads the state each step started from, with
// neither a tape nor a rerun of the forward loop; a buffer a later launch overwrites is not read.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;

namespace {

using tad::test::count;
using tad::test::kernel;

// The reverse kernel `name` of `src`: its stored states read back, no tape, one loop.
void expect_read_back(const std::string &src, const std::string &name, const std::string &load) {
    const std::string k = kernel(src, name);
    EXPECT_EQ(count(k, load), 1) << k;
    EXPECT_EQ(count(k, "tape"), 0) << k;
    EXPECT_EQ(count(k, "for back in range(trips):"), 1) << k;
    EXPECT_EQ(count(k, "for t in range("), 0) << k;  // no forward loop
}

// dataset/linear_recurrence.py at its own [B, T, C] layout: the launcher's first variant (states
// read back, plain stores) holds where time is inside the batch (the proof's order with the
// iteration below the batch's program id, trip_bound in access.cpp).
TEST(StoredStatesCpu, LinearRecurrence) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/linear_recurrence.py", "states", 2);
    expect_read_back(src, "_linear_recurrence_fwd_bwd",
                     "tl.load(Hs_final + (base + ((t - 1) * stride_t).to(tl.int64)), mask=mask & (t != 0), other=0.0)");
    const size_t first =
        src.find("    if ((a_[\"stride_t\"] >= a_[\"C\"] and a_[\"stride_b\"] >= a_[\"T\"]*a_[\"stride_t\"]");
    const size_t launch = src.find("_linear_recurrence_fwd_bwd[");
    EXPECT_NE(first, std::string::npos) << src;
    EXPECT_LT(first, launch);
}

// A nonlinear state (tanh), started from a loaded h0 whose gradient the first step's state passes
// on; w's gradient summed over the programs.
TEST(StoredStatesCpu, NonlinearStateFromALoadedStart) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/states/rnn_tanh.py", "states", 2);
    expect_read_back(src, "_rnn_tanh_bwd", "(t - 1) * stride_t + cols), mask=mask & (t != 0), other=0.0)");
    EXPECT_EQ(count(kernel(src, "_rnn_tanh_bwd"), "tl.where(t == 0, h, "), 1) << src;
}

// A scalar state over range(1, T, 2): the state entering step t is step t - 2's, the start value at
// t = 1; the writes are proved distinct without guards.
TEST(StoredStatesCpu, ScalarStateOverAStridedRange) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/states/strided_scalar.py", "states", 2);
    expect_read_back(src, "_strided_scalar_bwd", "tl.load(Hs_final + t0 + (t - 2), mask=t != 1, other=0.0)");
    EXPECT_EQ(count(src, "_strided_scalar_bwd_atomic["), 0) << src;
}

// Pointers that advance by D every step (`p += D`): the state is read one step behind the output's
// pointer, from the final buffer (a review of the first version found it read through the carried
// pointer, rooted at the buffer before the launch: wrong gradients), and the reverse loop computes
// each step's pointers as init + k * D instead of running the forward loop up to the step.
TEST(StoredStatesCpu, AdvancingPointers) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/states/advancing_pointers.py", "states", 2);
    const std::string k = kernel(src, "_gated_scan_bwd");
    EXPECT_EQ(count(k, "tl.load(O_final + "), 1) << k;
    EXPECT_EQ(count(k, "for "), 1) << k;  // the reverse loop alone
    EXPECT_EQ(count(k, "tape"), 0) << k;
}

// The same pointers, and a counter advancing by a constant, in a loop that stores no state
// (o = h * q): h is taped, and the reverse loop still computes each step's pointers and counter
// directly (before, it ran the forward loop's updates up to each step inside the reverse loop:
// quadratic in T).
TEST(StoredStatesCpu, TapedLoopAdvancesItsPointers) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/states/taped_pointers.py", "states", 2);
    const std::string k = kernel(src, "_taped_bwd");
    EXPECT_EQ(count(k, "for "), 2) << k;  // the taping loop, then the reverse loop; none inside it
    EXPECT_EQ(count(k, "tl.store(tape + "), 1) << k;
}

TEST(StoredStatesCpu, OverwrittenBufferIsNotReadBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/states/overwritten_later.py", "states", 2);
    EXPECT_EQ(count(src, "Hs_final"), 0) << src;
}

}  // namespace
