// The plan builders on hand-made derivations: which shadows each tensor gets, in which order the
// launches run, what is saved and returned. Each case is checked against the plan's text form.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "plan/json.h"
#include "plan/plan.h"
#include "support/error.h"

using namespace tad;
using plan::TensorRef;

namespace {

const TensorRef kIn0{TensorRef::Input, 0}, kIn1{TensorRef::Input, 1}, kOut0{TensorRef::Output, 0},
    kTemp0{TensorRef::Temp, 0};

// A kernel with the given parameters (pointers unless named in `ints`) and the origin of each.
struct Param {
    std::string name;
    ad::ParamOrigin origin;
    ir::ParamKind kind = ir::ParamKind::Pointer;
};

ir::Function kernel(const std::string &name, const std::vector<Param> &params) {
    ir::Function f;
    f.name = name;
    ir::Builder b(f);
    for (const Param &p : params)
        b.param(p.name, p.kind, ir::Type{ir::DType::F32, p.kind == ir::ParamKind::Pointer, {}});
    f.constexprs.push_back({"BLOCK", "16"});
    return f;
}

ad::Backward backward(const std::string &name, const std::vector<Param> &params) {
    ad::Backward b;
    b.fn = kernel(name, params);
    for (const Param &p : params) b.origins.push_back(p.origin);
    return b;
}

ad::ParamOrigin primal(const std::string &p) { return {ad::ParamOrigin::Primal, p}; }
ad::ParamOrigin shadow(const std::string &p) { return {ad::ParamOrigin::Shadow, p}; }

passes::GradWrite store(const std::string &mirror) {
    return passes::GradWrite{passes::GradWrite::Store, mirror, {}, false, std::nullopt};
}

// y = f(x) in one launch: X -> Y.
plan::Derivation one_launch(passes::GradWrite write) {
    plan::Derivation d;
    d.num_inputs = 2;
    d.num_outputs = 1;
    d.grad_inputs = {0};
    plan::LaunchDerivation l;
    l.kernel = "fwd";
    l.tensors = {{"X", kIn0}, {"Y", kOut0}};
    ad::Backward b = backward(
        "fwd_bwd",
        {{"X", primal("X")}, {"DX", shadow("X")}, {"DY", shadow("Y")}, {"n", primal("n"), ir::ParamKind::Int}});
    b.writes["X"] = write;
    l.specializations.push_back({{}, {{b, {}, {}, {}, true, {}, {}}}});
    d.launches.push_back(l);
    return d;
}

}  // namespace

// A store mirroring the output's stores, with no coverage proved: zeros (that the forward fills its
// output is not known).
TEST(BackwardPlan, StoreGradientWithoutCoverageStartsAtZero) {
    EXPECT_EQ(plan::print(plan::backward(one_launch(store("Y")))),
              "backward plan\n"
              "kernel #0 fwd_bwd: backward of fwd; X: stores\n"
              "prologue:\n"
              "  shadow of input 0: absent\n"
              "launch 0 (fwd):\n"
              "  shadow of input 0: zeros\n"
              "  shadow of output 0: incoming gradient of output 0\n"
              "  run #0 fwd_bwd\n"
              "    X = input 0 (X)\n"
              "    DX = shadow of input 0\n"
              "    DY = shadow of output 0\n"
              "    n = scalar n\n"
              "results:\n"
              "  input 0: shadow of input 0\n"
              "  input 1: none\n");
}

// Stores that reach every element where the tensor is laid out as their digits: left
// uninitialised there (covers), zeros elsewhere.
TEST(BackwardPlan, CoveringStoresNeedNoZeros) {
    passes::Coverage c;
    c.digits = {{passes::Poly::symbol("stride"), passes::Poly::symbol("num_programs(0)")},
                {passes::Poly::constant(1), passes::Poly::symbol("n")}};
    c.guards = {{passes::Poly::symbol("BLOCK"), passes::Poly::symbol("n")}};
    std::string p = plan::print(plan::backward(one_launch({passes::GradWrite::Store, "", {}, false, c})));
    EXPECT_NE(p.find("  shadow of input 0: uninitialised when laid out as (stride, size) pairs (stride, "
                     "num_programs(0)), (1, n) where BLOCK >= n, else zeros\n"),
              std::string::npos)
        << p;
    std::map<std::string, int64_t> values{{"stride", 8}, {"num_programs(0)", 4}, {"n", 6}, {"BLOCK", 8}};
    auto value = [&](const std::string &n, int64_t *v) { return values.count(n) && (*v = values.at(n), true); };
    EXPECT_TRUE(plan::covers(c, value, {4, 6}, {8, 1}));
    EXPECT_TRUE(plan::covers(c, value, {4, 1, 6}, {8, 3, 1}));  // a dim of size 1 has any stride
    values["stride"] = 6;
    EXPECT_TRUE(plan::covers(c, value, {24}, {1}));  // one dim of 4 rows of 6 columns
    EXPECT_TRUE(plan::covers(c, value, {2, 2, 6}, {12, 6, 1}));
    values["stride"] = 8;
    EXPECT_FALSE(plan::covers(c, value, {4, 8}, {8, 1}));  // columns 6 and 7 are never stored
    EXPECT_FALSE(plan::covers(c, value, {5, 6}, {8, 1}));  // nor row 4
    values["BLOCK"] = 4;  // lanes stop below n
    EXPECT_FALSE(plan::covers(c, value, {4, 6}, {8, 1}));
    values.erase("BLOCK");
    EXPECT_FALSE(plan::covers(c, value, {4, 6}, {8, 1}));  // unknown: zeros
}

// A cover in a run's terms (Alloc::run) must name a run of its branch: an executor would leave the
// buffer uninitialised for a run that never comes.
TEST(BackwardPlan, ARunCoverNamingNoRunOfItsBranchIsRefused) {
    passes::Coverage c;
    c.digits = {{passes::Poly::constant(1), passes::Poly::symbol("n")}};
    plan::Plan p = plan::backward(one_launch({passes::GradWrite::Store, "", {}, false, c}));
    plan::Branch &b = p.steps.at(0).cases.at(0).branches.at(0);
    auto covered = std::find_if(b.allocs.begin(), b.allocs.end(),
                                [](const plan::Alloc &a) { return a.init == plan::Init::Covered; });
    ASSERT_NE(covered, b.allocs.end());
    covered->run = 0;
    EXPECT_NO_THROW(plan::from_json(plan::to_json(p)));
    covered->run = static_cast<int>(b.runs.size());
    try {
        plan::from_json(plan::to_json(p));
        ADD_FAILURE() << "accepted";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), "plan: an allocation names run #1 of a branch of 1 runs");
    }
}

TEST(BackwardPlan, AtomicGradientIsAnAccumulator) {
    std::string p = plan::print(plan::backward(one_launch(passes::GradWrite{})));
    EXPECT_NE(p.find("  shadow of input 0: accumulator\n"), std::string::npos) << p;
}

// A split gradient: the kernel that stores it allocates it (float32, so that the scatter's adds land
// on unrounded values; zeros: the stores may cover nothing), and the scatter kernel runs after it,
// adding into that same buffer.
TEST(BackwardPlan, ScatterKernelRunsLastOnTheStoredBuffer) {
    passes::GradWrite stores{passes::GradWrite::Store, "", {}, true, std::nullopt};
    plan::Derivation d = one_launch(stores);
    ad::Backward scatter = backward("fwd_bwd_scatter", {{"X", primal("X")}, {"DX", shadow("X")}});
    scatter.writes["X"] = passes::GradWrite{passes::GradWrite::Atomic, "", {}, true, std::nullopt};
    d.launches[0].specializations[0].variants[0].scatter = scatter;
    const std::string p = plan::print(plan::backward(d));
    EXPECT_NE(p.find("kernel #1 fwd_bwd_scatter: backward of fwd; X: atomics\n"), std::string::npos) << p;
    EXPECT_NE(p.find("  shadow of input 0: zeros, float32\n"
                     "  shadow of output 0: incoming gradient of output 0\n"
                     "  run #0 fwd_bwd\n"),
              std::string::npos)
        << p;
    EXPECT_NE(p.find("    n = scalar n\n"
                     "  run #1 fwd_bwd_scatter\n"
                     "    X = input 0 (X)\n"
                     "    DX = shadow of input 0\n"
                     "results:\n"),
              std::string::npos)
        << p;
}

// x -> (launch 0) -> temp -> (launch 1) -> y: the temporary's cotangent is shared, launches run last
// to first, and launch 0 reads X as it was before launch 1 overwrote it.
// x -> (launch 0, "first") -> temp 0: the derivation of a chain's first launch, its second to add.
plan::Derivation chain_from_a_temporary() {
    plan::Derivation d;
    d.num_inputs = 1;
    d.num_outputs = 1;
    d.grad_inputs = {0};
    d.shared = {kTemp0};
    d.temps = {{0, "T"}};
    plan::LaunchDerivation a;
    a.kernel = "first";
    a.tensors = {{"X", kIn0}, {"T", kTemp0}};
    a.specializations.push_back(
        {{},
         {{backward("first_bwd", {{"X", primal("X")}, {"DX", shadow("X")}, {"DT", shadow("T")}}),
           {},
           {},
           {},
           true,
           {},
           {}}}});
    d.launches = {a};
    return d;
}

TEST(BackwardPlan, ChainSharesTheTemporaryAndRunsLastToFirst) {
    plan::Derivation d = chain_from_a_temporary();
    d.launches[0].saved_before = {{"X", 1}};
    plan::LaunchDerivation b;
    b.kernel = "second";
    b.tensors = {{"T", kTemp0}, {"X", kIn0}, {"Y", kOut0}};
    b.specializations.push_back(
        {{{"ACT", "'relu'"}},
         {{backward("second_bwd_ACT_relu", {{"T", primal("T")}, {"DT", shadow("T")}, {"DY", shadow("Y")}}),
           {},
           {},
           {},
           true,
           {},
           {}}}});
    d.launches.push_back(b);
    EXPECT_EQ(plan::print(plan::backward(d)),
              "backward plan\n"
              "kernel #0 first_bwd: backward of first\n"
              "kernel #1 second_bwd_ACT_relu: backward of second for ACT='relu'\n"
              "prologue:\n"
              "  shadow of temp 0: accumulator\n"
              "  shadow of input 0: absent\n"
              "launch 1 (second):\n"
              "  when ACT='relu':\n"
              "    shadow of output 0: incoming gradient of output 0\n"
              "    run #1 second_bwd_ACT_relu\n"
              "      T = temp 0 (T)\n"
              "      DT = shadow of temp 0\n"
              "      DY = shadow of output 0\n"
              "launch 0 (first):\n"
              "  shadow of input 0: accumulator\n"
              "  run #0 first_bwd\n"
              "    X = input 0 (X) saved before launch 1\n"
              "    DX = shadow of input 0\n"
              "    DT = shadow of temp 0\n"
              "results:\n"
              "  input 0: shadow of input 0\n"
              "save before launch 1: launch 0 X\n");
}

// The same chain, the temporary's shadow first written by launch 1's backward (flow::first_writers):
// launch 1 allocates it, a float32 buffer its plain stores cover, no zero fill; launch 0 reads it.
// Where launch 1's variant adds atomically instead, its branch allocates the zeroed accumulator.
TEST(BackwardPlan, TheFirstWriterOfASharedShadowAllocatesIt) {
    plan::Derivation d = chain_from_a_temporary();
    d.first_writer = {{kTemp0, 1}};
    plan::LaunchDerivation b;
    b.kernel = "second";
    b.tensors = {{"T", kTemp0}, {"Y", kOut0}};
    ad::Backward stores = backward("second_bwd", {{"T", primal("T")}, {"DT", shadow("T")}, {"DY", shadow("Y")}});
    passes::GradWrite w = store("Y");
    w.cover = passes::Coverage{{{passes::Poly::constant(1), passes::Poly::constant(16)}}, {}};
    stores.writes["T"] = w;
    ad::Backward adds = backward("second_bwd_atomic", {{"T", primal("T")}, {"DT", shadow("T")}, {"DY", shadow("Y")}});
    plan::Guard g;
    g.op = plan::Guard::AtLeast;
    g.lhs = passes::Poly::symbol("n");
    g.rhs = passes::Poly::constant(1);
    b.specializations.push_back({{}, {{stores, {g}, {}, {}, true, {}, {}}, {adds, {}, {}, {}, true, {}, {}}}});
    d.launches.push_back(b);
    EXPECT_EQ(plan::print(plan::backward(d)),
              "backward plan\n"
              "kernel #0 first_bwd: backward of first\n"
              "kernel #1 second_bwd: backward of second; T: stores\n"
              "kernel #2 second_bwd_atomic: backward of second\n"
              "prologue:\n"
              "  shadow of temp 0: absent\n"
              "  shadow of input 0: absent\n"
              "launch 1 (second):\n"
              "  if n >= 1:\n"
              "    shadow of temp 0: float32, uninitialised when laid out as (stride, size) pairs (1, 16), else zeros\n"
              "    shadow of output 0: incoming gradient of output 0\n"
              "    run #1 second_bwd\n"
              "      T = temp 0 (T)\n"
              "      DT = shadow of temp 0\n"
              "      DY = shadow of output 0\n"
              "  otherwise:\n"
              "    shadow of temp 0: accumulator\n"
              "    shadow of output 0: incoming gradient of output 0\n"
              "    run #2 second_bwd_atomic\n"
              "      T = temp 0 (T)\n"
              "      DT = shadow of temp 0\n"
              "      DY = shadow of output 0\n"
              "launch 0 (first):\n"
              "  shadow of input 0: accumulator\n"
              "  run #0 first_bwd\n"
              "    X = input 0 (X)\n"
              "    DX = shadow of input 0\n"
              "    DT = shadow of temp 0\n"
              "results:\n"
              "  input 0: shadow of input 0\n");
}

// A stub input updated in place and returned as output 0: its shadow starts as that output's
// cotangent, and forward mode copies the caller's tangent before updating it.
TEST(Plans, InputUpdatedInPlace) {
    plan::Derivation d;
    d.num_inputs = 1;
    d.num_outputs = 1;
    d.grad_inputs = {0};
    d.shared = {kIn0};
    d.aliases = {{0, 0}};
    plan::LaunchDerivation l;
    l.kernel = "scale_";
    l.tensors = {{"X", kIn0}};
    l.saved_before = {{"X", 0}};
    l.specializations.push_back(
        {{}, {{backward("scale__bwd", {{"X", primal("X")}, {"DX", shadow("X")}}), {}, {}, {}, true, {}, {}}}});
    ad::Forward f;
    f.fn = kernel("scale__jvp", {{"X", primal("X")}, {"DX", shadow("X")}});
    f.origins = {primal("X"), shadow("X")};
    // The tangent kernel stores into DX: the plan must copy the caller's tangent.
    ir::Builder b(f.fn);
    b.store(f.fn.params[1].value, b.constant(0, ir::DType::F32), ir::kNoValue);
    l.tangents.push_back({{}, f, ""});
    d.launches = {l};
    EXPECT_EQ(plan::print(plan::backward(d)),
              "backward plan\n"
              "kernel #0 scale__bwd: backward of scale_\n"
              "prologue:\n"
              "  shadow of input 0: cotangent of output 0\n"
              "launch 0 (scale_):\n"
              "  run #0 scale__bwd\n"
              "    X = input 0 (X) saved before launch 0\n"
              "    DX = shadow of input 0\n"
              "results:\n"
              "  input 0: shadow of input 0\n"
              "save before launch 0: launch 0 X\n");
    ASSERT_EQ(plan::tangent_unsupported(d), "");
    EXPECT_EQ(plan::print(plan::tangent(d)),
              "tangent plan\n"
              "kernel #0 scale__jvp: tangent of scale_\n"
              "prologue:\n"
              "  shadow of input 0: tangent of grad input 0, copied\n"
              "launch 0 (scale_):\n"
              "  run #0 scale__jvp\n"
              "    X = input 0 (X) saved before launch 0\n"
              "    DX = shadow of input 0\n"
              "results:\n"
              "  output 0: shadow of input 0\n"
              "save before launch 0: launch 0 X\n");
}

// Guards give branches: the guarded store variant first, the atomic fallback otherwise; each
// branch allocates its own copy of the incoming gradient.
TEST(BackwardPlan, GuardedVariantsAreBranches) {
    plan::Derivation d = one_launch(store("Y"));
    ad::Backward fallback = d.launches[0].specializations[0].variants[0].bwd;
    fallback.fn.name = "fwd_bwd_atomic";
    fallback.writes["X"] = passes::GradWrite{};
    d.launches[0].specializations[0].variants[0].guards = {
        {plan::Guard::Equal, passes::Poly::symbol("sx"), passes::Poly::symbol("sy"), {}}};
    d.launches[0].specializations[0].variants.push_back({fallback, {}, {}, {}, true, {}, {}});
    std::string p = plan::print(plan::backward(d));
    EXPECT_NE(p.find("launch 0 (fwd):\n"
                     "  if sx == sy:\n"
                     "    shadow of input 0: zeros\n"
                     "    shadow of output 0: incoming gradient of output 0\n"
                     "    run #0 fwd_bwd\n"),
              std::string::npos)
        << p;
    EXPECT_NE(p.find("  otherwise:\n"
                     "    shadow of input 0: accumulator\n"
                     "    shadow of output 0: incoming gradient of output 0\n"
                     "    run #1 fwd_bwd_atomic\n"),
              std::string::npos)
        << p;
}

TEST(TangentPlan, RefusedWhereALaunchHasNoTangentKernel) {
    plan::Derivation d = one_launch(store("Y"));
    d.launches[0].tangents.push_back({{}, std::nullopt, "no rule for op 'frobnicate'"});
    EXPECT_EQ(plan::tangent_unsupported(d), "no rule for op 'frobnicate'");
    plan::Derivation none = one_launch(store("Y"));
    EXPECT_EQ(plan::tangent_unsupported(none), "no tangent kernel was derived");
}
