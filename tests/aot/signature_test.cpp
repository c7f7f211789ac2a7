// Triton 3.6's specialization of arguments and its entry's parameter layout, as aot/signature.h
// models them, without a driver.
#include <gtest/gtest.h>

#include <cstring>

#include "../common/error_of.h"
#include "aot/signature.h"
#include "fixture.h"

using namespace tad;
using namespace tad::aot;
using namespace tad::aot::testing;
using tad::testing::error_of;

namespace {

CubinParam spec_int(int64_t v, bool by_value = true) {
    CallArg a = CallArg::integer("n", v);
    a.specialize = by_value;
    return specialize(a);
}

TEST(Specialize, IntegersByValue) {
    EXPECT_EQ(spec_int(1), constant("n", "1"));  // folded: not an entry parameter
    EXPECT_EQ(spec_int(0), param("n", "i32", true));
    EXPECT_EQ(spec_int(48), param("n", "i32", true));
    EXPECT_EQ(spec_int(-32), param("n", "i32", true));
    EXPECT_EQ(spec_int(1000), param("n", "i32", false));
    EXPECT_EQ(spec_int(2147483647), param("n", "i32", false));
    EXPECT_EQ(spec_int(2147483648), param("n", "i64", true));
    EXPECT_EQ(spec_int(-2147483649LL), param("n", "i64", false));
    // do_not_specialize: the type only.
    EXPECT_EQ(spec_int(1, false), param("n", "i32", false));
    EXPECT_EQ(spec_int(64, false), param("n", "i32", false));
}

TEST(Specialize, PointersFloatsBoolsAndConstexprs) {
    EXPECT_EQ(specialize(CallArg::pointer("X", Ptr{Ptr::Address, 4096}, dtype("float16", ""))),
              param("X", "*fp16", true));
    EXPECT_EQ(specialize(CallArg::pointer("X", Ptr{Ptr::Address, 4100}, dtype("bfloat16", ""))),
              param("X", "*bf16", false));
    EXPECT_EQ(specialize(CallArg::pointer("X", Ptr{Ptr::Workspace, 256}, dtype("float32", ""))),
              param("X", "*fp32", true));
    CallArg unaligned = CallArg::pointer("X", Ptr{Ptr::Address, 4096}, dtype("int64", ""));
    unaligned.specialize = false;
    EXPECT_EQ(specialize(unaligned), param("X", "*i64", false));
    CallArg f = CallArg::integer("eps", 0);
    f.kind = CallArg::Float;
    f.f = 1.0;
    EXPECT_EQ(specialize(f), param("eps", "fp32"));  // a Python float is fp32, even 1.0
    CallArg b = CallArg::integer("flag", 1);
    b.kind = CallArg::Bool;
    EXPECT_EQ(specialize(b), param("flag", "u1"));  // a bool is no int: never the constant 1
    EXPECT_EQ(specialize(CallArg::constexpr_int("BLOCK", 128)), constant("BLOCK", "128"));
}

Cubin two_ints(const std::string &n, bool n_divisible, int stages = 3) {
    Cubin c;
    c.function = "k";
    c.num_stages = stages;
    c.params = {param("X", "*fp32", true), n == "constexpr" ? constant("N", "1") : param("N", n, n_divisible),
                param("eps", "fp32"), param("flag", "u1"), constant("BLOCK", "64")};
    return c;
}

std::vector<CallArg> call(int64_t n) {
    CallArg eps = CallArg::integer("eps", 0), flag = CallArg::integer("flag", 1);
    eps.kind = CallArg::Float;
    eps.f = 0.1;
    flag.kind = CallArg::Bool;
    return {CallArg::pointer("X", Ptr{Ptr::Address, 1 << 20}, dtype("float32", "")), CallArg::integer("N", n), eps,
            flag, CallArg::constexpr_int("BLOCK", 64)};
}

TEST(Pick, TheCubinOfTheCallsSpecialization) {
    KernelInfo k{"k", {}, false, {two_ints("i32", false), two_ints("i32", true), two_ints("constexpr", false)}};
    EXPECT_EQ(pick(k, call(1000), 4, 3).cubin, &k.cubins[0]);
    EXPECT_EQ(pick(k, call(1024), 4, 3).cubin, &k.cubins[1]);
    EXPECT_EQ(pick(k, call(1), 4, 3).cubin, &k.cubins[2]);
    EXPECT_EQ(
        error_of([&] { pick(k, call(int64_t{1} << 40), 4, 3); }),
        std::make_pair(static_cast<int>(TAD_ERR_INVALID_ARGUMENT),
                       std::string("no exported cubin of k matches this launch: N: i64, a multiple of 16 "
                                   "(exported: N: i32, not a multiple of 16); export with dims that give the launch's "
                                   "specialization (docs/aot.md)")));
}

TEST(Pick, AKernelTheExportNeverRanHasNoCubin) {
    KernelInfo k{"k_v1", {}, false, {}};
    EXPECT_EQ(error_of([&] { pick(k, call(1000), 4, 3); }).second,
              "no exported cubin of k_v1 matches this launch: the export's launches never ran it (a branch of the "
              "plan its dims did not take); export with dims that give the launch's specialization (docs/aot.md)");
}

TEST(Pick, ConstexprsByValueFloatsNumerically) {
    Cubin c = two_ints("i32", false);
    c.params.push_back(constant("scale", "0.1"));
    KernelInfo k{"k", {}, false, {c}};
    std::vector<CallArg> args = call(1000);
    CallArg scale = CallArg::constexpr_int("scale", 0);
    scale.literal = "0.10000000000000001";  // the executor's %.17g of 0.1
    args.push_back(scale);
    EXPECT_EQ(pick(k, args, 4, 3).cubin, &k.cubins[0]);
    args.back().literal = "0.2";
    EXPECT_EQ(error_of([&] { pick(k, args, 4, 3); }).second,
              "no exported cubin of k matches this launch: scale = 0.2 (exported: scale = 0.1); export with dims that "
              "give the launch's specialization (docs/aot.md)");
}

TEST(Pick, StagesComeDownToTheOnesExported) {
    KernelInfo k{"k", {}, true, {two_ints("i32", false, 1)}};
    k.cubins[0].params.push_back(constant("TAD_LOOP_STAGES", "1"));
    Pick p = pick(k, call(1000), 4, 3);
    EXPECT_EQ(p.cubin, &k.cubins[0]);
    EXPECT_EQ(p.args.back().name, "TAD_LOOP_STAGES");
    EXPECT_EQ(p.args.back().i, 1);
    KernelInfo four{"k", {}, false, {two_ints("i32", false, 4)}};
    EXPECT_EQ(error_of([&] { pick(four, call(1000), 4, 3); }).second,
              "no exported cubin of k matches this launch: num_stages 3 (exported: 4); export with dims that give the "
              "launch's specialization (docs/aot.md)");
}

TEST(Pack, EachArgumentAtItsWidthThenTheScratchPointers) {
    Cubin c = two_ints("i32", false);
    std::vector<CallArg> args = call(1000);
    args[0].ptr = Ptr{Ptr::Workspace, 512};  // in the workspace: patched when issued
    const Packed p = pack(c, args, Ptr{Ptr::Workspace, 4096}, Ptr{});
    ASSERT_EQ(p.offsets.size(), 6u);  // X, N, eps, flag, global scratch, profile scratch; BLOCK is no parameter
    auto at = [&](size_t i) { return p.bytes.data() + p.offsets[i]; };
    int32_t n = 0;
    std::memcpy(&n, at(1), 4);
    EXPECT_EQ(n, 1000);
    float eps = 0;
    std::memcpy(&eps, at(2), 4);
    EXPECT_EQ(eps, 0.1f);  // rounded to float, as Triton's pack_fp32
    EXPECT_EQ(*at(3), 1);
    uint64_t profile = 1;
    std::memcpy(&profile, at(5), 8);
    EXPECT_EQ(profile, 0u);
    ASSERT_EQ(p.patches.size(), 2u);
    EXPECT_EQ(p.patches[0].first, p.offsets[0]);
    EXPECT_EQ(p.patches[0].second.value, 512u);
    EXPECT_EQ(p.patches[1].first, p.offsets[4]);
    EXPECT_EQ(p.patches[1].second.value, 4096u);
}

}  // namespace
