// The checker itself: checks that hold pass, checks that should fail do fail, with the message
// that says which check and why.
#include <gtest/gtest.h>

#include <stdexcept>

#include "filecheck.h"
#include "pass_runner.h"

using tad::testing::parse_checks;
using tad::testing::run_checks;

namespace {

const char *const kOutput =
    "func @k(X: ptr<f32>) {\n"
    "  %1 = arange 0, 4 : i32[BLOCK=4]\n"
    "  %2 = broadcast %0 : ptr<f32>[BLOCK=4]\n"
    "  %3 = add_ptr %2, %1 : ptr<f32>[BLOCK=4]\n"
    "  %4 = load %3 : f32[BLOCK=4]  // x\n"
    "  store %3, %4\n"
    "}\n";

std::string check(const std::string &check_lines) { return run_checks(parse_checks(check_lines), kOutput); }

}  // namespace

TEST(FileCheck, ParsesDirectivesWithTheirLines) {
    auto checks = parse_checks("func\n// CHECK: a  b\n  //CHECK-NEXT:c\n// CHECK-NOT: d\n// CHECKS: e\n");
    ASSERT_EQ(checks.size(), 3u);
    EXPECT_EQ(checks[0].kind, tad::testing::Check::Match);
    EXPECT_EQ(checks[0].pattern, "a b");
    EXPECT_EQ(checks[0].line, 2);
    EXPECT_EQ(checks[1].kind, tad::testing::Check::Next);
    EXPECT_EQ(checks[1].pattern, "c");
    EXPECT_EQ(checks[2].kind, tad::testing::Check::Not);
}

TEST(FileCheck, AnUnknownDirectiveIsAnError) {
    try {
        parse_checks("func\n// CHECK: a\n// CHECK-SAME: b\n");
        FAIL() << "CHECK-SAME was taken";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "line 3: unknown directive (CHECK, CHECK-NEXT, CHECK-NOT): // CHECK-SAME: b");
    }
}

TEST(FileCheck, PassingChecks) {
    EXPECT_EQ(check("// CHECK: arange 0, 4\n// CHECK: load\n"), "");
    EXPECT_EQ(check("// CHECK: broadcast\n// CHECK-NEXT: add_ptr\n// CHECK-NEXT: load\n"), "");
    EXPECT_EQ(check("// CHECK: arange\n// CHECK-NOT: store\n// CHECK: load\n"), "");
    EXPECT_EQ(check("// CHECK: store\n// CHECK-NOT: load\n"), "");  // nothing after the store
    EXPECT_EQ(check("// CHECK: load %3 : f32[BLOCK=4] // x\n"), "");  // spaces squeezed
    EXPECT_EQ(check("// CHECK: [[P:%[0-9]+]] = add_ptr\n// CHECK: load [[P]]\n// CHECK: store [[P]], {{%[0-9]+}}\n"),
              "");
}

TEST(FileCheck, FailingChecksSayWhich) {
    EXPECT_EQ(check("// CHECK: dot\n"), "line 1: CHECK: dot: not found in the output from line 1 on");
    // Order matters: nothing after the store is an arange.
    EXPECT_EQ(check("// CHECK: store\n// CHECK: arange\n"),
              "line 2: CHECK: arange: not found in the output from line 7 on");
    EXPECT_EQ(check("// CHECK: arange\n// CHECK-NEXT: load\n"),
              "line 2: CHECK-NEXT: load: output line 3 is \"%2 = broadcast %0 : ptr<f32>[BLOCK=4]\"");
    EXPECT_EQ(check("// CHECK-NEXT: func\n"), "line 1: CHECK-NEXT: func: no previous match");
    EXPECT_EQ(check("// CHECK: }\n// CHECK-NEXT: x\n"),
              "line 2: CHECK-NEXT: x: the output ends after the previous match");
    EXPECT_EQ(check("// CHECK: arange\n// CHECK-NOT: add_ptr\n// CHECK: store\n"),
              "line 2: CHECK-NOT: add_ptr: found at output line 4 \"%3 = add_ptr %2, %1 : ptr<f32>[BLOCK=4]\"");
    EXPECT_EQ(check("// CHECK: load\n// CHECK-NOT: store\n"),
              "line 2: CHECK-NOT: store: found at output line 6 \"store %3, %4\"");
}

TEST(FileCheck, VariablesBindAndMustMatchAgain) {
    // %1 is the arange, not the address the load reads.
    EXPECT_EQ(check("// CHECK: [[R:%[0-9]+]] = arange\n// CHECK: load [[R]]\n"),
              "line 2: CHECK: load [[R]]: not found in the output from line 3 on");
    EXPECT_EQ(check("// CHECK: load [[P]]\n"), "line 1: CHECK: load [[P]]: undefined variable [[P]]");
    EXPECT_EQ(check("// CHECK: load {{%[0-9]+\n"), "line 1: CHECK: load {{%[0-9]+: unclosed {{");
}

TEST(FileCheck, RunLines) {
    EXPECT_EQ(tad::testing::run_line("// RUN: cse | dce  \nfunc"), "cse | dce");
    EXPECT_EQ(tad::testing::run_line("func"), "");
    tad::ir::Function f = tad::ir::parse(kOutput);
    EXPECT_EQ(tad::testing::run_passes("frobnicate", f), "error: RUN: unknown pass 'frobnicate'\n");
    EXPECT_EQ(tad::testing::run_passes("memory-params | cse", f),
              "error: RUN: the analysis memory-params must come last\n");
    EXPECT_EQ(tad::testing::run_passes("cse", f), tad::ir::print(f));
}
