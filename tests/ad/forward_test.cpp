// Forward mode: goldens of the tangent kernels, their signatures, and the diagnostics of jvp().
#include <gtest/gtest.h>

#include <functional>

#include "../common/error_of.h"
#include "../common/golden.h"
#include "ad/forward.h"
#include "harness.h"
#include "passes/passes.h"

using namespace tad;
using namespace tad::testing;

namespace {

// The tangent kernel of a rule case as a whole: each input's shadow is loaded beside it, the
// output's tangent is stored through its shadow. (The rule's own ops: rule_golden_test.cpp.)
TEST(Jvp, RuleKernelGolden) {
    std::mt19937_64 rng(1);
    Problem p = rule_problem(rule_case("mul"), rng);
    ad::Forward t = ad::jvp(p.fwd, p.spec, p.fwd.name + "_jvp");
    expect_golden("ad/golden/kernels/rule_mul_jvp.ir", ir::print(t.fn));
}

// The store of the saved statistic Rstd is dropped; Mean, an output, gets its tangent stored.
TEST(Jvp, LayerNormGolden) {
    std::mt19937_64 rng(1);
    Problem p = layer_norm_problem(rng);
    expect_golden("ad/golden/kernels/layer_norm_jvp.ir", ir::print(ad::jvp(p.fwd, p.spec, "layer_norm_jvp").fn));
}

// Parameters the tangent kernel does not read go: B (y is affine in it), Y, Mean, Rstd (written
// only through shadows, or not at all).
TEST(Jvp, ShadowsFollowTheirPrimalsAndUnusedParametersGo) {
    std::mt19937_64 rng(1);
    Problem p = layer_norm_problem(rng);
    ad::Forward t = ad::jvp(p.fwd, p.spec, "layer_norm_jvp");
    std::vector<std::string> names, origins;
    for (size_t i = 0; i < t.fn.params.size(); ++i) {
        names.push_back(t.fn.params[i].name);
        origins.push_back((t.origins[i].kind == ad::ParamOrigin::Shadow ? "shadow:" : "primal:") + t.origins[i].primal);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"X", "DX", "W", "DW", "DB", "DY", "DMean", "stride", "N"}));
    EXPECT_EQ(origins, (std::vector<std::string>{"primal:X", "shadow:X", "primal:W", "shadow:W", "shadow:B", "shadow:Y",
                                                 "shadow:Mean", "primal:stride", "primal:N"}));
}

// A kernel storing x from X to Y; `middle` builds ops between the load and the store.
ir::Function copy_kernel(const std::function<void(ir::Builder &, ir::ValueId X, ir::ValueId Y)> &middle) {
    ir::Function f;
    f.name = "copy";
    f.source_path = "k.py";
    ir::Builder b(f);
    ir::Type ptr{ir::DType::F32, true, {}};
    ir::ValueId X = b.param("X", ir::ParamKind::Pointer, ptr), Y = b.param("Y", ir::ParamKind::Pointer, ptr);
    b.loc = {3, 5};
    middle(b, X, Y);
    return f;
}

TEST(Jvp, ShadowNameAvoidsForwardParameters) {
    ir::Function f;
    f.name = "k";
    ir::Builder b(f);
    ir::Type ptr{ir::DType::F32, true, {}};
    ir::ValueId X = b.param("X", ir::ParamKind::Pointer, ptr), DX = b.param("DX", ir::ParamKind::Pointer, ptr);
    b.store(DX, b.load(X, ir::kNoValue, ir::kNoValue), ir::kNoValue);
    ad::Forward t = ad::jvp(f, {{"X"}, {"DX"}}, "k_jvp");
    std::vector<std::string> names;
    for (const ir::Param &p : t.fn.params) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"_DX", "DDX"}));
}

// y += x with an atomic add: ẏ += ẋ, atomically too.
TEST(Jvp, AtomicAddAddsTheTangent) {
    Problem p;
    p.fwd = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        b.atomic_add(Y, b.load(X, ir::kNoValue, ir::kNoValue), ir::kNoValue, "relaxed");
    });
    p.spec = {{"X"}, {"Y"}};
    p.memory = {{"X", {1.5}}, {"Y", {0.25}}};
    ad::Forward t = ad::jvp(p.fwd, p.spec, "copy_jvp");
    EXPECT_NE(ir::print(t.fn).find("atomic_add"), std::string::npos) << ir::print(t.fn);
    Buffers jv = run_jvp(p, {{"X", {0.7}}});
    EXPECT_DOUBLE_EQ(jv.at("Y").at(0), 0.7);
}

// A barrier is replayed where the forward has it.
TEST(Jvp, ABarrierIsReplayed) {
    Problem p;
    p.fwd = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        ir::ValueId x = b.load(X, ir::kNoValue, ir::kNoValue);
        b.barrier();
        b.store(Y, b.binary(ir::OpKind::Mul, x, x), ir::kNoValue);
    });
    p.spec = {{"X"}, {"Y"}};
    p.memory = {{"X", {1.5}}, {"Y", {0.0}}};
    EXPECT_NE(ir::print(ad::jvp(p.fwd, p.spec, "copy_jvp").fn).find("barrier"), std::string::npos);
    EXPECT_DOUBLE_EQ(run_jvp(p, {{"X", {0.7}}}).at("Y").at(0), 2 * 1.5 * 0.7);
}

// y = x·3.to(x.dtype): the cast is linear in its first operand only, so it has no tangent although
// the value whose dtype it takes has one; ẏ = 3ẋ.
TEST(Jvp, ACastToAValuesDtypeTakesNoTangentFromThatValue) {
    Problem p;
    p.fwd = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        ir::ValueId x = b.load(X, ir::kNoValue, ir::kNoValue);
        ir::ValueId three = b.cast_like(b.constant(3, ir::DType::I32), x);
        b.store(Y, b.binary(ir::OpKind::Mul, x, three), ir::kNoValue);
    });
    p.spec = {{"X"}, {"Y"}};
    p.memory = {{"X", {1.5}}, {"Y", {0.0}}};
    EXPECT_DOUBLE_EQ(run_jvp(p, {{"X", {0.7}}}).at("Y").at(0), 3 * 0.7);
}

// A pointer tl.where picks between two addresses of X: its shadow is the same pick between X's
// shadows, so program 0 reads ẋ[0].
TEST(Jvp, APointerChosenByWhereGetsTheShadowChosenTheSameWay) {
    Problem p;
    p.fwd = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        ir::ValueId first = b.binary(ir::OpKind::Lt, b.program_id(0), b.constant(1, ir::DType::I32));
        ir::ValueId x =
            b.load(b.where(first, X, b.add_ptr(X, b.constant(1, ir::DType::I32))), ir::kNoValue, ir::kNoValue);
        b.store(Y, b.binary(ir::OpKind::Mul, x, x), ir::kNoValue);
    });
    p.spec = {{"X"}, {"Y"}};
    p.memory = {{"X", {1.5, 2.5}}, {"Y", {0.0}}};
    Buffers jv = run_jvp(p, {{"X", {0.7, 0.3}}});
    EXPECT_DOUBLE_EQ(jv.at("Y").at(0), 2 * 1.5 * 0.7);
}

// Between two buffers there is no one shadow to pick from.
TEST(Jvp, RejectsAPointerChosenByWhereBetweenTwoBuffers) {
    ir::Function f = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        ir::ValueId first = b.binary(ir::OpKind::Lt, b.program_id(0), b.constant(1, ir::DType::I32));
        b.store(Y, b.load(b.where(first, X, Y), ir::kNoValue, ir::kNoValue), ir::kNoValue);
    });
    EXPECT_EQ(
        error_of([&] {
            ad::jvp(f, {{"X"}, {"Y"}}, "copy_jvp");
        }),
        std::make_pair(int(TAD_ERR_UNSUPPORTED),
                       std::string("k.py:3:5: unsupported construct 'where' computing a differentiated pointer")));
}

// A loop carries each float value's tangent after the primal values: y = x⁴ as acc = acc·acc twice,
// ẏ = 4x³ẋ.
TEST(Jvp, LoopsCarryTangents) {
    Problem p;
    p.fwd = copy_kernel([](ir::Builder &b, ir::ValueId X, ir::ValueId Y) {
        ir::ValueId x = b.load(X, ir::kNoValue, ir::kNoValue);
        ir::ValueId zero = b.constant(0, ir::DType::I32), two = b.constant(2, ir::DType::I32);
        b.for_begin(zero, two, b.constant(1, ir::DType::I32), "range");
        ir::ValueId acc = b.loop_arg(x, 0);
        b.for_end({b.binary(ir::OpKind::Mul, acc, acc)});
        b.store(Y, b.loop_result(0, b.func().type(x)), ir::kNoValue);
    });
    p.spec = {{"X"}, {"Y"}};
    p.memory = {{"X", {1.5}}, {"Y", {0.0}}};
    ad::Forward t = ad::jvp(p.fwd, p.spec, "copy_jvp");
    EXPECT_NE(ir::print(t.fn).find("loop_arg"), std::string::npos);
    Buffers jv = run_jvp(p, {{"X", {0.7}}});
    EXPECT_NEAR(jv.at("Y").at(0), 4 * 1.5 * 1.5 * 1.5 * 0.7, 1e-12);
    std::mt19937_64 rng(3);
    Buffers u = random_like(p, p.spec.outputs, rng);
    EXPECT_NEAR(dot(run_jvp(p, {{"X", {0.7}}}), u).value, dot(Buffers{{"X", {0.7}}}, run_vjp(p, u)).value, 1e-12);
}

}  // namespace
