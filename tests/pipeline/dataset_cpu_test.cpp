// The CPU tier over dataset/: every kernel tad supports must pass; the others must be rejected
// with a diagnostic naming the construct (listed with [SKIP] so they are visible, not silent).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/session.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;

namespace {

// Kernels whose backward is generated today. Growing this list is progress; shrinking it fails.
const std::set<std::string> kSupported = {"add_layernorm",
                                          "bias_softplus",
                                          "embedding",
                                          "group_norm",
                                          "log_softmax",
                                          "matmul",
                                          "matmul_bias_act",
                                          "dropout",
                                          "geglu",
                                          "cross_entropy",
                                          "flash_attention",
                                          "linear_recurrence",
                                          "rmsnorm",
                                          "rope",
                                          "swiglu",
                                          "scatter_add",
                                          "cumsum",
                                          "matmul_block_ptr",
                                          "layernorm_two_pass",
                                          "rope_inplace",
                                          "matmul_tensor_desc",
                                          "rmsnorm_tensor_desc",
                                          "persistent_matmul",
                                          "activation_modes",
                                          "alibi_attention",
                                          "batch_norm_train",
                                          "bias_dropout_add",
                                          "causal_conv1d",
                                          "chunked_gated_scan",
                                          "chunked_linear_attention",
                                          "cosine_similarity",
                                          "decode_attention_split",
                                          "film",
                                          "fused_add_rmsnorm",
                                          "gated_rmsnorm",
                                          "huber_loss",
                                          "kl_div",
                                          "l2_normalize",
                                          "label_smoothing_ce",
                                          "layer_scale",
                                          "layernorm_multi_row",
                                          "layernorm_optional_bias",
                                          "logsumexp_split",
                                          "moe_dispatch_combine",
                                          "prelu",
                                          "qk_rmsnorm",
                                          "rmsnorm_persistent",
                                          "softcap",
                                          "softmax_persistent",
                                          "sparsemax",
                                          "squared_relu",
                                          "token_shift",
                                          "weight_norm_linear",
                                          "gae",
                                          "selective_scan_chunked",
                                          "welford_layernorm"};

// Kernels tad refuses today, each with its exact message (paths relative to the source tree). An
// unlisted refusal fails, and so does a listed kernel that stops being refused.
const std::map<std::string, std::string> kRefused = {};

class DatasetCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(DatasetCpu, SupportedKernelsPassOthersAreRejectedClearly) {
    if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string &name = GetParam();
    fs::TempDir dir;
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = kPython;
    Session s(opts);
    std::string path = std::string(TAD_SOURCE_DIR) + "/dataset/" + name + ".py";
    s.load_forward(path, std::nullopt);
    try {
        s.generate(GenerateOptions{});
    } catch (const Error &e) {
        EXPECT_FALSE(kSupported.count(name)) << name << " regressed: " << e.what();
        EXPECT_TRUE(e.status() == TAD_ERR_UNSUPPORTED) << e.what();
        std::string msg = e.what();
        const std::string root = std::string(TAD_SOURCE_DIR) + "/";
        if (msg.compare(0, root.size(), root) == 0) msg = msg.substr(root.size());
        auto refused = kRefused.find(name);
        EXPECT_TRUE(refused != kRefused.end()) << name << " is refused but not listed in kRefused: " << msg;
        if (refused != kRefused.end()) {
            EXPECT_EQ(msg, refused->second);
        }
        std::printf("[SKIP] %s not supported yet: %s\n", name.c_str(), e.what());
        GTEST_SKIP() << "[SKIP] " << name << " not supported yet: " << e.what();
    }
    EXPECT_FALSE(kRefused.count(name)) << name << " is no longer refused: remove it from kRefused";
    VerifyOptions v;
    v.cpu = true;
    v.max_elements = 1 << 16;
    bool passed = false;
    std::string report = s.verify(v, &passed);
    EXPECT_TRUE(passed) << report;
    EXPECT_TRUE(kSupported.count(name)) << name << " now passes: add it to kSupported";
}

// Loops with nonlinear state under every policy: each passes the CPU tier; the tape's reverse loop
// reads the state back instead of rerunning the forward loop inside it (no loop nested in `back`).
// These loops run `range(0, T)`-like bounds, the same in every program: the launcher sizes the tape
// from the launch's arguments, with no sizing kernel and no read back to the host (`.item()`);
// `auto` tapes them too.
// A CPU session on dataset/<name>.py in `dir`.
std::unique_ptr<Session> open_dataset(const fs::TempDir &dir, const std::string &name) {
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = kPython;
    auto s = std::make_unique<Session>(opts);
    s->load_forward(std::string(TAD_SOURCE_DIR) + "/dataset/" + name + ".py", std::nullopt);
    return s;
}

class LoopPolicies : public ::testing::TestWithParam<std::string> {};

TEST_P(LoopPolicies, TapeAndRecomputeBothPass) {
    if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    // The online softmax in closed form leaves cross_entropy and flash_attention no nonlinear loop.
    tad::testing::ScopedEnv closed_form("TAD_CLOSED_FORM", "off");
    for (const char *policy : {"recompute", "tape", "auto"}) {
        fs::TempDir dir;
        std::unique_ptr<Session> session = open_dataset(dir, GetParam());
        Session &s = *session;
        GenerateOptions g;
        g.loops = policy;
        std::string src = s.candidate_source(s.generate(g));
        bool tape = std::string(policy) != "recompute";
        EXPECT_EQ(src.find("tape_stride = max(") != std::string::npos, tape) << policy;
        // Causal attention's key loop ends at the program's query block: a sizing kernel per program.
        if (GetParam() == "flash_attention" && std::string(policy) == "tape") {
            EXPECT_NE(src.find("_tape_size["), std::string::npos) << src;
        }
        if (std::string(policy) == "auto") {
            EXPECT_EQ(src.find("_tape_size"), std::string::npos) << policy << ":\n" << src;
            EXPECT_EQ(src.find(".item()"), std::string::npos) << policy << ":\n" << src;
        }
        std::string back = src.substr(src.find("for back in range("));
        back = back.substr(0, back.find("\n\n\n"));
        EXPECT_EQ(back.find("\n        for ") == std::string::npos, tape) << policy << ":\n" << back;
        VerifyOptions v;
        v.cpu = true;
        v.max_elements = 1 << 16;
        bool passed = false;
        std::string report = s.verify(v, &passed);
        EXPECT_TRUE(passed) << policy << ": " << report;
    }
}

INSTANTIATE_TEST_SUITE_P(Dataset, LoopPolicies,
                         ::testing::Values("cross_entropy", "flash_attention", "linear_recurrence"),
                         [](const auto &info) { return info.param; });

// The default policy, auto, tapes a loop only where the backward still reruns it after cleanup: not
// where a closed form replaced the loop (cross_entropy's online softmax, label smoothing's with its
// plain sum of logits beside it), nor where the backward never reads the state a rerun would recover
// (cumsum's running total, GAE's advantage: their adjoints do not depend on it); linear_recurrence's
// state is read at every reversed step, so it is taped.
TEST(LoopPolicyAuto, TapesOnlyTheLoopsTheBackwardReruns) {
    if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    for (const auto &[name, taped] : std::vector<std::pair<std::string, bool>>{{"cross_entropy", false},
                                                                               {"label_smoothing_ce", false},
                                                                               {"cumsum", false},
                                                                               {"gae", false},
                                                                               {"linear_recurrence", true}}) {
        fs::TempDir dir;
        std::unique_ptr<Session> session = open_dataset(dir, name);
        std::string src = session->candidate_source(session->generate(GenerateOptions{}));
        EXPECT_EQ(src.find("Tape") != std::string::npos, taped) << name << ":\n" << src;
        const size_t back = src.find("for back in range(");
        if (back == std::string::npos) continue;
        std::string loop = src.substr(back, src.find("\n\n\n", back) - back);
        EXPECT_EQ(loop.find("\n        for "), std::string::npos) << name << ": a rerun survived:\n" << loop;
    }
}

// A list of dims given to generate is scanned for static-if specializations as the SWEEP is.
TEST(GenerateDims, ListGetsEverySpecialization) {
    if (std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    fs::TempDir dir;
    std::unique_ptr<Session> session = open_dataset(dir, "matmul_bias_act");
    Session &s = *session;
    GenerateOptions g;
    g.dims_json = R"([{"M": 8, "N": 8, "K": 8, "activation": "gelu"}, {"M": 8, "N": 8, "K": 8, "activation": "relu"}])";
    std::string src = s.candidate_source(s.generate(g));
    EXPECT_NE(src.find("[\"ACTIVATION\"] == 'gelu'"), std::string::npos);
    EXPECT_NE(src.find("[\"ACTIVATION\"] == 'relu'"), std::string::npos);
    g.dims_json = R"({"M": 8, "N": 8, "K": 8, "activation": "gelu"})";
    src = s.candidate_source(s.generate(g));
    EXPECT_EQ(src.find("[\"ACTIVATION\"] == 'relu'"), std::string::npos);
}

TEST(LoopPolicies, UnknownPolicyIsRejected) {
    fs::TempDir dir;
    std::unique_ptr<Session> session = open_dataset(dir, "linear_recurrence");
    Session &s = *session;
    GenerateOptions g;
    g.loops = "checkpoint";
    try {
        s.generate(g);
        FAIL() << "generate accepted an unknown loops policy";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
        EXPECT_STREQ(e.what(), "tad_generate: unknown loops policy 'checkpoint' (available: recompute, tape, auto)");
    }
}

std::vector<std::string> dataset_files() {
    std::vector<std::string> out;
    for (const std::string &f : fs::list_dir(std::string(TAD_SOURCE_DIR) + "/dataset"))
        if (f.size() > 3 && f.substr(f.size() - 3) == ".py") out.push_back(f.substr(0, f.size() - 3));
    return out;
}

INSTANTIATE_TEST_SUITE_P(Dataset, DatasetCpu, ::testing::ValuesIn(dataset_files()),
                         [](const auto &info) { return info.param; });

}  // namespace
