// Kernels as people write them, on the CPU tier: constexpr specializations the generated module
// must key its backwards on (tests/pipeline/data/spec/), and valid kernels whose backward used to
// crash tad or come out as invalid Triton (tests/pipeline/data/valid/). The CPU tier re-parses and
// lowers the emitted module, so emitted code that is not valid Python or that tad's lowering (which
// follows Triton's rules) refuses fails here too.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

struct Case {
    const char *file;  // under tests/pipeline/data/
    size_t entries;  // SWEEP entries
    std::vector<const char *> present, absent;  // text the generated module has / lacks
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.file; }

class KernelsCpu : public ::testing::TestWithParam<Case> {};

// Every SWEEP entry matches finite differences, each through the backward of its own
// specialization (the oracle runs the kernels the module's launcher would pick).
TEST_P(KernelsCpu, EverySweepEntryMatchesFiniteDifferences) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    const Case &c = GetParam();
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string("tests/pipeline/data/") + c.file + ".py");
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    for (const char *text : c.present) EXPECT_NE(src.find(text), std::string::npos) << text << "\n" << src;
    for (const char *text : c.absent) EXPECT_EQ(src.find(text), std::string::npos) << text << "\n" << src;
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("results").size(), c.entries);
}

const char *kRaise = "raise RuntimeError(f\"no backward of ";

INSTANTIATE_TEST_SUITE_P(
    Data, KernelsCpu,
    ::testing::Values(
        // An activation switched on inside a helper: one backward each.
        Case{"spec/helper_activation",
             2,
             {"def _act_fwd_bwd_ACT_tanh(", "def _act_fwd_bwd_ACT_softplus(", "    if a[\"ACT\"] == 'tanh':\n"},
             {}},
        // A boundary check only a helper makes, on N % BLOCK.
        Case{"spec/helper_boundary",
             2,
             {"def _square_fwd_bwd_N_16_BLOCK_16(", "def _square_fwd_bwd_N_20_BLOCK_32("},
             {}},
        // cdiv and tl.full stay symbolic; static_range's trip count keys the backward.
        Case{"spec/folded",
             3,
             {"def _fold_fwd_bwd_W_2(", "def _fold_fwd_bwd_W_3(", "    for b in range((D + (BD - 1)) // BD):\n",
              " + EPS\n"},
             {"_EPS_", "_D_", "range(1)"}},
        // BLOCK only as a size: one backward, no dispatch.
        Case{"spec/symbolic_block", 2, {"def _rows_fwd_bwd(X, DX, DY, N, BLOCK: tl.constexpr):"}, {kRaise}},
        // A tile spelled 2 * BLOCK: guards on it spell the launch's BLOCK.
        Case{"spec/doubled_tile", 2, {"2*a[\"BLOCK\"] >= a[\"N\"]"}, {"a[\"2 * BLOCK\"]"}},
        // A forward store short of its output's rows: the mirroring stores' buffer is zero-filled there.
        Case{"valid/store_short_of_the_row", 2, {"_covered_buffer(x, ((1, a[\"N\"] - 1), "}, {"_store_buffer(x"}},
        // A half of the row that only decides a tl.where: its gradient's zeros are stored.
        Case{"valid/unread_half", 2, {"_covered_buffer(x, "}, {}},
        Case{"valid/barriers", 2, {"    tl.debug_barrier()\n"}, {}}, Case{"valid/scalar_cast", 2, {}, {}},
        Case{"valid/where_literals", 2, {"tl.where(x > 0.0, 0.0, -1.5)"}, {"0.to("}},
        Case{"valid/cast_constexpr", 2, {"tl.cast(K, tl.float32)"}, {"K.to(", "BLOCK.to("}},
        Case{"valid/tile_init", 2, {"best = tl.full((BLOCK,), 0.0, tl.float32) - float(\"inf\")\n"}, {}},
        Case{"valid/names", 2, {"del_"}, {"del =", "    do = "}},
        Case{"valid/string_newline", 2, {"a[\"MODE\"] == \"square\\nit's\"", "a[\"MODE\"] == 'exp\\tx'"}, {}}),
    [](const auto &info) {
        std::string name = info.param.file;
        for (char &ch : name)
            if (ch == '/') ch = '_';
        return name;
    });

// The launcher runs each activation's own backward, and for an activation it was not generated for
// raises RuntimeError instead of running another one's (the emitted module, with fake kernels).
// Generates `file`'s module and runs `check` (a script under tests/pipeline) on it with fake kernels;
// expects it to print `ok`.
void expect_launcher_check(const std::string &file, const std::string &check, const std::string &ok) {
    if (!torch_available())
        GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch (apt-get install python3-torch)";
    fs::TempDir dir;
    auto s = cpu_session(dir, file);
    std::string module = fs::join(dir.path(), "generated_bwd.py");
    fs::write_file_atomic(module, s->candidate_source(s->generate(GenerateOptions{})));
    std::string cmd = "PYTHONPATH=" + std::string(TAD_SOURCE_DIR) + "/src/runtime/python/standin " + kPython + " " +
                      TAD_SOURCE_DIR + "/tests/pipeline/" + check + " " + module + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    EXPECT_EQ(pclose(p), 0) << out;
    EXPECT_NE(out.find(ok), std::string::npos) << out;
}

TEST(SpecializationLauncher, RefusesAnActivationItWasNotGeneratedFor) {
    expect_launcher_check("tests/pipeline/data/spec/helper_activation.py", "spec_check.py",
                          "specialization launcher ok");
}

// A backward specialized on `if B is not None` with a tensor runs for tensors, and a launch with
// None raises the launcher's RuntimeError (naming the tensor arguments without failing on them).
TEST(SpecializationLauncher, RefusesNoneWhereItWasGeneratedForATensor) {
    expect_launcher_check("tests/pipeline/data/library/optional_pointers.py", "optional_check.py",
                          "optional pointers launcher ok");
}

}  // namespace
