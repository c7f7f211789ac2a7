// passes/stash.h: which values a transposed kernel may load from a stash (exact-text refusals), and
// what they are converted like.
#include <gtest/gtest.h>

#include <string>

#include "ir/text.h"
#include "passes/stash.h"

namespace {

// %10 sums the loop; %11 is that sum as an integer, %12 a float computed from it, %13 the sum
// converted like a value loaded from X, %14 one loaded from Y.
constexpr char kKernel[] = R"(func @k(X: ptr<f32>, Y: ptr<f32>, n: i32, BLOCK: constexpr = 4) {
  %3 = const 0 : i32
  %4 = const 1 : i32
  %5 = const 0 : f32
  %6 = for_begin %3, %2, %4 (range) : i32
    %7 = loop_arg %5 #0 : f32
    %8 = cast %6 : f32
    %9 = add %7, %8 : f32
  for_end %9
  %10 = loop_result #0 : f32
  %11 = cast %10 : i32
  %12 = mul %10, %10 : f32
  %15 = load %0 : f32
  %16 = load %1 : f32
  %13 = cast %12, %15 : f32
  %14 = cast %12, %16 : f32
}
)";

TEST(Stash, FloatValuesOutsideLoopsComputedFromALoopMayBeStashed) {
    tad::ir::Function f = tad::ir::parse(kKernel);
    f.source_path = "k.ir";
    const std::vector<bool> from = tad::passes::from_loops(f);
    EXPECT_FALSE(from[3]);
    EXPECT_TRUE(from[8]);  // computed from the loop variable
    EXPECT_TRUE(from[12]);
    EXPECT_EQ(tad::passes::stashable(f, 12), "");
    EXPECT_EQ(tad::passes::stashable(f, 11),
              "the value it needs from another loop (cast at k.ir:11:3) is i32, not float32 or float64");
    EXPECT_EQ(tad::passes::stashable(f, 9), "the value it needs from another loop (add at k.ir:8:5) is inside a loop");
}

TEST(Stash, TypedLikeTheTensorEveryUseConvertsItTo) {
    const tad::ir::Function f = tad::ir::parse(kKernel);
    const int cast_x = f.values[13].def_op, cast_y = f.values[14].def_op, square = f.values[12].def_op;
    EXPECT_EQ(tad::passes::converted_like(f, 12, {cast_x}), "X");
    EXPECT_EQ(tad::passes::converted_like(f, 12, {cast_x, cast_y}), "");  // two tensors: no one type
    EXPECT_EQ(tad::passes::converted_like(f, 10, {square}), "");  // read as it is
}

}  // namespace
