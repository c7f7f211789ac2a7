// The schedule tests: every tests/schedule/*.ir file is one test. Its `// RUN: gradient-writes
// wrt=X,... outputs=Y,...` line names the launch's gradient spec, the function in it is the forward
// kernel, and its `// CHECK` lines (tests/passes/filecheck.h) must match the write-plan variants
// schedule::gradient_writes chooses, printed in order ("variant 0:", then schedule::print).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/ir_files.h"
#include "../passes/filecheck.h"
#include "ir/ir.h"
#include "schedule/closed_form.h"
#include "schedule/regrid.h"
#include "schedule/schedule.h"
#include "schedule/transpose.h"
#include "support/error.h"

namespace fs = std::filesystem;
using namespace tad;

namespace {

const fs::path kRoot = fs::path(TAD_SOURCE_DIR) / "tests" / "schedule";

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, sep);)
        if (!item.empty()) out.push_back(item);
    return out;
}

// The spec from `// RUN: gradient-writes wrt=A,B outputs=Y`.
ad::GradSpec spec_of(const std::string &text) {
    const size_t at = text.find("// RUN: gradient-writes");
    if (at == std::string::npos) fail(TAD_ERR_INVALID_ARGUMENT, "no '// RUN: gradient-writes' line");
    ad::GradSpec spec;
    for (const std::string &word : split(text.substr(at, text.find('\n', at) - at), ' ')) {
        if (word.rfind("wrt=", 0) == 0) spec.wrt = split(word.substr(4), ',');
        if (word.rfind("outputs=", 0) == 0) spec.outputs = split(word.substr(8), ',');
    }
    return spec;
}

std::string variants_text(const std::string &text) {
    const ir::Function f = ir::parse(text);
    const std::vector<schedule::WritePlan> plans = schedule::gradient_writes(f, spec_of(text), {});
    std::string out;
    for (size_t i = 0; i < plans.size(); ++i) out += "variant " + std::to_string(i) + ":\n" + schedule::print(plans[i]);
    return out;
}

class ScheduleFile : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(ScheduleFile, VariantsMatchChecks) {
    const std::string text = tad::testing::read_text(kRoot / GetParam());
    const std::vector<tad::testing::Check> checks = tad::testing::parse_checks(text);
    ASSERT_FALSE(checks.empty()) << GetParam() << " has no // CHECK lines";
    const std::string output = variants_text(text);
    EXPECT_EQ(tad::testing::run_checks(checks, output), "") << GetParam() << "\noutput:\n" << output;
}

INSTANTIATE_TEST_SUITE_P(Files, ScheduleFile, ::testing::ValuesIn(tad::testing::ir_files(kRoot)),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                             return tad::testing::ir_test_name(i.param);
                         });

// The exact message a setting's parser gives for a value it does not take.
template <typename Parse> std::string refusal(Parse parse, const char *value) {
    try {
        parse(value);
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
        return e.what();
    }
    return std::string("accepted '") + value + "'";
}

// The settings the generation environment may hold, and the exact message for any other value.
TEST(ScheduleEnv, TransposeGridReductionAndClosedFormSettings) {
    EXPECT_EQ(tad::schedule::transposing(nullptr), 8);
    EXPECT_EQ(tad::schedule::transposing("on"), 8);
    EXPECT_EQ(tad::schedule::transposing("off"), 0);
    EXPECT_EQ(tad::schedule::transposing("1"), 1);
    EXPECT_EQ(tad::schedule::transposing("8"), 8);
    EXPECT_EQ(refusal(tad::schedule::transposing, "9"),
              "TAD_TRANSPOSE='9': expected on, off or 1..8 (iterations per program)");
    EXPECT_EQ(tad::schedule::recomputing(nullptr), 0);
    EXPECT_EQ(tad::schedule::recomputing("0"), 0);
    EXPECT_EQ(tad::schedule::recomputing("1"), 1);
    EXPECT_EQ(refusal(tad::schedule::recomputing, "2"), "TAD_TRANSPOSE_RECOMPUTE='2': expected 0 or 1");
    EXPECT_TRUE(tad::schedule::stashing(nullptr));
    EXPECT_TRUE(tad::schedule::stashing("on"));
    EXPECT_FALSE(tad::schedule::stashing("off"));
    EXPECT_EQ(refusal(tad::schedule::stashing, "no"), "TAD_STASH='no': expected on or off");
    EXPECT_TRUE(tad::schedule::early_loading(nullptr));
    EXPECT_TRUE(tad::schedule::early_loading("on"));
    EXPECT_FALSE(tad::schedule::early_loading("off"));
    EXPECT_EQ(refusal(tad::schedule::early_loading, "1"), "TAD_EARLY_LOADS='1': expected on or off");
    EXPECT_TRUE(tad::schedule::lifting_reductions(nullptr));
    EXPECT_FALSE(tad::schedule::lifting_reductions("off"));
    EXPECT_EQ(refusal(tad::schedule::lifting_reductions, "yes"), "TAD_LIFT_REDUCTIONS='yes': expected on or off");
    EXPECT_TRUE(tad::schedule::fusing_loops(nullptr));
    EXPECT_TRUE(tad::schedule::fusing_loops("on"));
    EXPECT_FALSE(tad::schedule::fusing_loops("off"));
    EXPECT_EQ(refusal(tad::schedule::fusing_loops, "0"), "TAD_FUSE_LOOPS='0': expected on or off");
    EXPECT_EQ(tad::schedule::grid_reduction(nullptr), tad::schedule::GridReduction::Partial);
    EXPECT_EQ(tad::schedule::grid_reduction("off"), tad::schedule::GridReduction::Off);
    EXPECT_EQ(refusal(tad::schedule::grid_reduction, "sum"),
              "TAD_GRID_REDUCTION='sum': expected partial, atomic or off");
    using tad::schedule::ClosedForms;
    EXPECT_EQ(tad::schedule::closed_forms(nullptr), ClosedForms::On);
    EXPECT_EQ(tad::schedule::closed_forms("on"), ClosedForms::On);
    EXPECT_EQ(tad::schedule::closed_forms("recompute"), ClosedForms::Recompute);
    EXPECT_EQ(tad::schedule::closed_forms("off"), ClosedForms::Off);
    EXPECT_EQ(refusal(tad::schedule::closed_forms, "1"), "TAD_CLOSED_FORM='1': expected on, recompute or off");
}
