// Reverse mode through nested loops, on the interpreter in float64: each backward against central
// differences of the forward along a random direction (<v, Jᵀu> against <u, (F(x + hv) - F(x - hv)) / 2h>),
// under both loop policies, plus what each policy must (not) build: no rerun loops for accumulators,
// a tape only for top-level loops with nonlinear state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "harness.h"
#include "passes/passes.h"

using namespace tad;
using namespace tad::testing;

namespace {

using ir::DType;
using ir::OpKind;
using ir::ValueId;

const std::vector<ir::Dim> kLanes{{8, "BLOCK"}};

// Builds a kernel over 8-lane tiles with named values.
struct Kernel {
    ir::Function f;
    ir::Builder b{f};

    explicit Kernel(const char *name) {
        f.name = name;
        f.source_path = "nested_loops_test.cpp";
        f.constexprs = {{"BLOCK", "8"}};
    }
    ValueId ptr(const char *name) { return b.param(name, ir::ParamKind::Pointer, ir::Type{DType::F32, true, {}}); }
    ValueId integer(const char *name) { return b.param(name, ir::ParamKind::Int, ir::Type{DType::I32, false, {}}); }
    ValueId i32(int v) { return b.constant(v, DType::I32); }
    ValueId zeros() { return b.broadcast(b.constant(0, DType::F32), kLanes); }
    ValueId tile(ValueId scalar) { return b.broadcast(scalar, kLanes); }
    ValueId add(ValueId x, ValueId y) { return b.binary(OpKind::Add, x, y); }
    ValueId mul(ValueId x, ValueId y) { return b.binary(OpKind::Mul, x, y); }
    // The 8 lanes starting at element `start` (i32 scalar) of `base`.
    ValueId lanes(ValueId base, ValueId start) {
        return b.add_ptr(tile(base), add(tile(start), b.arange(0, 8, "BLOCK")));
    }
    ValueId load(ValueId ptrs) { return b.load(ptrs, ir::kNoValue, ir::kNoValue); }
    ValueId named(ValueId v, const char *name) {
        f.values[v].name = name;
        return v;
    }
    // Loops: loop() opens one, arg() adds a carried value to the innermost open one.
    std::vector<std::vector<ir::Type>> open;  // per open loop, its carried values' types
    ValueId loop(ValueId lo, ValueId hi, ValueId step, const char *name) {
        open.emplace_back();
        return named(b.for_begin(lo, hi, step, "range"), name);
    }
    ValueId arg(ValueId init, const char *name) {
        open.back().push_back(f.type(init));
        return named(b.loop_arg(init, static_cast<int>(open.back().size()) - 1), name);
    }
};

// Closes the innermost open loop with `yields` and returns its results.
std::vector<ValueId> end_loop(Kernel &k, const std::vector<ValueId> &yields) {
    k.b.for_end(yields);
    std::vector<ValueId> out;
    for (size_t i = 0; i < yields.size(); ++i) out.push_back(k.b.loop_result(static_cast<int>(i), k.open.back()[i]));
    k.open.pop_back();
    return out;
}

std::vector<double> normal(size_t n, std::mt19937_64 &rng, double scale = 1.0) {
    std::normal_distribution<double> d;
    std::vector<double> out(n);
    for (double &x : out) x = scale * d(rng);
    return out;
}

// sq[p] = Σ_r (Σ_c s_r·x_rc² - s_r²) over the 3 rows r of program p, N columns in 8-lane chunks:
// one accumulator runs through both loops (an add inside, a subtraction outside), and s_r, loaded
// in the outer body, is used in the inner one.
Problem two_level_sum(std::mt19937_64 &rng) {
    Kernel k("two_level_sum");
    ValueId X = k.ptr("X"), S = k.ptr("S"), Y = k.ptr("Y"), N = k.integer("N");
    ValueId pid = k.b.program_id(0), zero = k.zeros();
    ValueId r = k.loop(k.i32(0), k.i32(3), k.i32(1), "r");
    ValueId acc_r = k.arg(zero, "acc");
    ValueId row = k.named(k.add(k.mul(pid, k.i32(3)), r), "row");
    ValueId s = k.named(k.b.load(k.b.add_ptr(S, row), ir::kNoValue, ir::kNoValue), "s");
    ValueId c = k.loop(k.i32(0), N, k.i32(8), "start");
    ValueId acc_c = k.arg(acc_r, "acc");
    ValueId cols = k.add(k.tile(c), k.b.arange(0, 8, "BLOCK"));
    ValueId mask = k.b.binary(OpKind::Lt, cols, k.tile(N));
    ValueId x = k.named(k.b.load(k.b.add_ptr(k.tile(X), k.add(k.tile(k.mul(row, N)), cols)), mask, zero), "x");
    ValueId acc_next = k.add(acc_c, k.mul(k.mul(x, x), k.tile(s)));
    ValueId acc_inner = end_loop(k, {acc_next})[0];
    ValueId acc_outer = k.b.binary(OpKind::Sub, acc_inner, k.tile(k.mul(s, s)));
    ValueId acc = end_loop(k, {acc_outer})[0];
    k.b.store(k.b.add_ptr(Y, pid), k.b.reduce(OpKind::ReduceSum, acc, -1, false), ir::kNoValue);

    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"X", "S"}, {"Y"}};
    p.grid = {2, 1, 1};
    p.ints = {{"N", 11}};
    p.memory = {{"X", normal(6 * 11, rng)}, {"S", normal(6, rng)}, {"Y", std::vector<double>(2, 0.0)}};
    return p;
}

// h_t = tanh(a_t·(h_{t-1} + 1) + Σ_k x_tk·h_{t-1}) over T steps, the sum in an inner loop over K that
// reads the outer state: a nonlinear outer loop around an accumulator loop.
Problem outer_recurrence(std::mt19937_64 &rng) {
    const int T = 4, K = 3;
    Kernel k("outer_recurrence");
    ValueId A = k.ptr("A"), X = k.ptr("X"), H = k.ptr("H");
    ValueId pid = k.b.program_id(0), zero = k.zeros();
    ValueId t = k.loop(k.i32(0), k.i32(T), k.i32(1), "t");
    ValueId h = k.arg(zero, "h");
    ValueId step = k.named(k.add(k.mul(pid, k.i32(T)), t), "step");
    ValueId a = k.named(k.load(k.lanes(A, k.mul(step, k.i32(8)))), "a");
    ValueId j = k.loop(k.i32(0), k.i32(K), k.i32(1), "j");
    ValueId z = k.arg(zero, "z");
    ValueId x = k.named(k.load(k.lanes(X, k.mul(k.add(k.mul(step, k.i32(K)), j), k.i32(8)))), "x");
    ValueId z_sum = end_loop(k, {k.add(z, k.mul(x, h))})[0];
    ValueId h_next = k.named(
        k.b.unary(OpKind::Tanh, k.add(k.mul(a, k.add(h, k.b.broadcast(k.b.constant(1, DType::F32), kLanes))), z_sum)),
        "h");
    k.b.store(k.lanes(H, k.mul(step, k.i32(8))), h_next, ir::kNoValue);
    end_loop(k, {h_next});

    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"A", "X"}, {"H"}};
    p.grid = {2, 1, 1};
    p.memory = {{"A", normal(2 * T * 8, rng)},
                {"X", normal(2 * T * K * 8, rng, 0.5)},
                {"H", std::vector<double>(2 * T * 8, 0.0)}};
    return p;
}

// A nonlinear inner loop in an accumulator outer loop, and a pointer advanced by the inner loop
// and carried on by the outer one: per row r, h_t = c_r·h_{t-1} + x_t, H gets every h_t, and
// Tot = Σ_r h_T² per lane.
Problem inner_recurrence(std::mt19937_64 &rng) {
    const int R = 2, T = 3;
    Kernel k("inner_recurrence");
    ValueId X = k.ptr("X"), Coef = k.ptr("Coef"), H = k.ptr("H"), Tot = k.ptr("Tot");
    ValueId pid = k.b.program_id(0);
    ValueId xp0 = k.named(k.lanes(X, k.mul(pid, k.i32(R * T * 8))), "x_ptrs"), zero = k.zeros();
    ValueId r = k.loop(k.i32(0), k.i32(R), k.i32(1), "r");
    ValueId xp_r = k.arg(xp0, "x_ptrs");
    ValueId tot = k.arg(zero, "tot");
    ValueId row = k.named(k.add(k.mul(pid, k.i32(R)), r), "row");
    ValueId c = k.named(k.b.load(k.b.add_ptr(Coef, row), ir::kNoValue, ir::kNoValue), "c");
    ValueId t = k.loop(k.i32(0), k.i32(T), k.i32(1), "t");
    ValueId xp_t = k.arg(xp_r, "x_ptrs");
    ValueId h = k.arg(zero, "h");
    ValueId x = k.named(k.load(xp_t), "x");
    ValueId h_next = k.named(k.add(k.mul(k.tile(c), h), x), "h");
    k.b.store(k.lanes(H, k.mul(k.add(k.mul(row, k.i32(T)), t), k.i32(8))), h_next, ir::kNoValue);
    std::vector<ValueId> inner = end_loop(k, {k.b.add_ptr(xp_t, k.tile(k.i32(8))), h_next});
    std::vector<ValueId> outer = end_loop(k, {inner[0], k.add(tot, k.mul(inner[1], inner[1]))});
    k.b.store(k.lanes(Tot, k.mul(pid, k.i32(8))), outer[1], ir::kNoValue);

    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"X", "Coef"}, {"H", "Tot"}};
    p.grid = {2, 1, 1};
    p.memory = {{"X", normal(2 * R * T * 8, rng)},
                {"Coef", normal(2 * R, rng, 0.5)},
                {"H", std::vector<double>(2 * R * T * 8, 0.0)},
                {"Tot", std::vector<double>(2 * 8, 0.0)}};
    return p;
}

// Three levels: an accumulator through all three loops, and in the middle loop a nonlinear state
// g = sin(g) + s_ij stored once per outer iteration.
Problem three_levels(std::mt19937_64 &rng) {
    Kernel k("three_levels");
    ValueId X = k.ptr("X"), S = k.ptr("S"), G = k.ptr("G"), Y = k.ptr("Y"), N = k.integer("N");
    ValueId pid = k.b.program_id(0), zero = k.zeros();
    ValueId i = k.loop(k.i32(0), k.i32(2), k.i32(1), "i");
    ValueId acc_i = k.arg(zero, "acc");
    ValueId outer_row = k.named(k.add(k.mul(pid, k.i32(2)), i), "outer_row");
    ValueId j = k.loop(k.i32(0), k.i32(2), k.i32(1), "j");
    ValueId acc_j = k.arg(acc_i, "acc");
    ValueId g = k.arg(zero, "g");
    ValueId row = k.named(k.add(k.mul(outer_row, k.i32(2)), j), "row");
    ValueId c = k.loop(k.i32(0), N, k.i32(8), "start");
    ValueId acc_c = k.arg(acc_j, "acc");
    ValueId cols = k.add(k.tile(c), k.b.arange(0, 8, "BLOCK"));
    ValueId mask = k.b.binary(OpKind::Lt, cols, k.tile(N));
    ValueId x = k.named(k.b.load(k.b.add_ptr(k.tile(X), k.add(k.tile(k.mul(row, N)), cols)), mask, zero), "x");
    ValueId acc_row = end_loop(k, {k.add(acc_c, k.mul(x, x))})[0];
    ValueId s = k.named(k.load(k.lanes(S, k.mul(row, k.i32(8)))), "s");
    ValueId g_next = k.named(k.add(k.b.unary(OpKind::Sin, g), k.mul(s, acc_row)), "g");
    std::vector<ValueId> middle = end_loop(k, {acc_row, g_next});
    k.b.store(k.lanes(G, k.mul(outer_row, k.i32(8))), middle[1], ir::kNoValue);
    ValueId acc = end_loop(k, {middle[0]})[0];
    k.b.store(k.b.add_ptr(Y, pid), k.b.reduce(OpKind::ReduceSum, acc, -1, false), ir::kNoValue);

    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"X", "S"}, {"G", "Y"}};
    p.grid = {2, 1, 1};
    p.ints = {{"N", 13}};
    p.memory = {{"X", normal(8 * 13, rng, 0.5)},
                {"S", normal(8 * 8, rng, 0.5)},
                {"G", std::vector<double>(4 * 8, 0.0)},
                {"Y", std::vector<double>(2, 0.0)}};
    return p;
}

// Two programs reading T·K rows of X and storing T rows of the state H.
Problem state_problem(const Kernel &k, int T, int K, std::mt19937_64 &rng) {
    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"X"}, {"H"}};
    p.grid = {2, 1, 1};
    p.memory = {{"X", normal(2 * T * K * 8, rng)}, {"H", std::vector<double>(2 * T * 8, 0.0)}};
    return p;
}

// Nonlinear state that runs through an inner accumulator loop: h = sin(h + Σ_k x_tk).
Problem state_through_inner(std::mt19937_64 &rng) {
    const int T = 3, K = 2;
    Kernel k("state_through_inner");
    ValueId X = k.ptr("X"), H = k.ptr("H");
    ValueId pid = k.b.program_id(0), h0 = k.named(k.load(k.lanes(X, k.i32(0))), "h0");
    ValueId t = k.loop(k.i32(0), k.i32(T), k.i32(1), "t");
    ValueId h = k.arg(h0, "h");
    ValueId step = k.named(k.add(k.mul(pid, k.i32(T)), t), "step");
    ValueId j = k.loop(k.i32(0), k.i32(K), k.i32(1), "j");
    ValueId h_j = k.arg(h, "h");
    ValueId x = k.named(k.load(k.lanes(X, k.mul(k.add(k.mul(step, k.i32(K)), j), k.i32(8)))), "x");
    ValueId h_sum = end_loop(k, {k.add(h_j, x)})[0];
    ValueId h_next = k.named(k.b.unary(OpKind::Sin, h_sum), "h");
    k.b.store(k.lanes(H, k.mul(step, k.i32(8))), h_next, ir::kNoValue);
    end_loop(k, {h_next});

    return state_problem(k, T, K, rng);
}

// h_t = sin(h_{t-1}) + Σ_k x_tk with x read through a pointer that the inner loop advances and the
// outer loop carries on: under the tape the rerun of the outer loop keeps only that pointer.
Problem pointer_through_inner(std::mt19937_64 &rng) {
    const int T = 3, K = 2;
    Kernel k("pointer_through_inner");
    ValueId X = k.ptr("X"), H = k.ptr("H");
    ValueId pid = k.b.program_id(0), zero = k.zeros();
    ValueId xp0 = k.named(k.lanes(X, k.mul(pid, k.i32(T * K * 8))), "x_ptrs");
    ValueId t = k.loop(k.i32(0), k.i32(T), k.i32(1), "t");
    ValueId xp_t = k.arg(xp0, "x_ptrs");
    ValueId h = k.arg(zero, "h");
    k.loop(k.i32(0), k.i32(K), k.i32(1), "j");
    ValueId xp_j = k.arg(xp_t, "x_ptrs");
    ValueId z = k.arg(zero, "z");
    ValueId x = k.named(k.load(xp_j), "x");
    std::vector<ValueId> inner = end_loop(k, {k.b.add_ptr(xp_j, k.tile(k.i32(8))), k.add(z, x)});
    ValueId h_next = k.named(k.add(k.b.unary(OpKind::Sin, h), inner[1]), "h");
    k.b.store(k.lanes(H, k.mul(k.add(k.mul(pid, k.i32(T)), t), k.i32(8))), h_next, ir::kNoValue);
    end_loop(k, {inner[0], h_next});

    return state_problem(k, T, K, rng);
}

// Nonlinear state through both levels, from a loaded initial state: h = sin(h)·x + h/2 in the inner
// loop, stored after each outer iteration. Both loops reverse by recomputation, the inner one
// inside each reversed outer iteration.
Problem nonlinear_both_levels(std::mt19937_64 &rng) {
    const int T = 3, S = 2;
    Kernel k("nonlinear_both_levels");
    ValueId X = k.ptr("X"), H0 = k.ptr("H0"), H = k.ptr("H");
    ValueId pid = k.b.program_id(0);
    ValueId h0 = k.named(k.load(k.lanes(H0, k.mul(pid, k.i32(8)))), "h");
    ValueId half = k.b.broadcast(k.b.constant(0.5, DType::F32), kLanes);
    ValueId t = k.loop(k.i32(0), k.i32(T), k.i32(1), "t");
    ValueId h_t = k.arg(h0, "h");
    ValueId step = k.named(k.add(k.mul(pid, k.i32(T)), t), "step");
    ValueId s = k.loop(k.i32(0), k.i32(S), k.i32(1), "s");
    ValueId h_s = k.arg(h_t, "h");
    ValueId x = k.named(k.load(k.lanes(X, k.mul(k.add(k.mul(step, k.i32(S)), s), k.i32(8)))), "x");
    ValueId h_inner = end_loop(k, {k.add(k.mul(k.b.unary(OpKind::Sin, h_s), x), k.mul(h_s, half))})[0];
    k.b.store(k.lanes(H, k.mul(step, k.i32(8))), h_inner, ir::kNoValue);
    end_loop(k, {h_inner});

    Problem p;
    p.fwd = passes::cse(k.f);
    p.spec = {{"X", "H0"}, {"H"}};
    p.grid = {2, 1, 1};
    p.memory = {
        {"X", normal(2 * T * S * 8, rng)}, {"H0", normal(2 * 8, rng)}, {"H", std::vector<double>(2 * T * 8, 0.0)}};
    return p;
}

void expect_vjp_matches_central_differences(const Problem &p, std::mt19937_64 &rng) {
    Buffers v = random_like(p, p.spec.wrt, rng), u = random_like(p, p.spec.outputs, rng);
    Dot vjp = dot(v, run_vjp(p, u));
    const double h = 1e-6;
    auto [plus, minus] = perturbed(p.memory, v, h);
    Buffers yp = run_forward(p, plus), ym = run_forward(p, minus);
    Buffers fd;
    for (const auto &[name, data] : yp) {
        fd[name] = data;
        for (size_t e = 0; e < data.size(); ++e) fd[name][e] = (data[e] - ym.at(name)[e]) / (2 * h);
    }
    Dot jvp = dot(u, fd);
    EXPECT_GT(jvp.magnitude, 1e-3) << "J·v is zero: nothing was checked";
    EXPECT_NEAR(vjp.value, jvp.value, 1e-6 * std::max(1.0, jvp.magnitude));
}

int count_ops(const ir::Function &f, OpKind kind) {
    int n = 0;
    for (const ir::Op &op : f.ops) n += op.kind == kind;
    return n;
}

ad::Backward backward(const Problem &p) {
    return ad::reverse(p.fwd, p.spec, passes::plan_gradient_writes(p.fwd, p.spec.wrt, p.spec.outputs), "bwd");
}

struct Case {
    const char *name;
    Problem (*make)(std::mt19937_64 &);
};
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }
const Case kCases[] = {{"two_level_sum", two_level_sum},
                       {"outer_recurrence", outer_recurrence},
                       {"inner_recurrence", inner_recurrence},
                       {"three_levels", three_levels},
                       {"state_through_inner", state_through_inner},
                       {"pointer_through_inner", pointer_through_inner},
                       {"nonlinear_both_levels", nonlinear_both_levels}};

class NestedLoops : public ::testing::TestWithParam<Case> {};

TEST_P(NestedLoops, BackwardMatchesCentralDifferencesUnderBothPolicies) {
    for (ad::LoopPolicy policy : {ad::LoopPolicy::Recompute, ad::LoopPolicy::Tape})
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            SCOPED_TRACE(std::string(policy == ad::LoopPolicy::Tape ? "tape" : "recompute") + ", seed " +
                         std::to_string(seed));
            std::mt19937_64 rng(seed);
            Problem p = GetParam().make(rng);
            p.spec.loops = policy;
            expect_vjp_matches_central_differences(p, rng);
        }
}

INSTANTIATE_TEST_SUITE_P(Kernels, NestedLoops, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

// Accumulators through nested loops reverse in forward order: one reverse loop per forward loop,
// no reruns, and the inner forward loop is not replayed (nothing needs its accumulator's value).
TEST(NestedLoopsShape, AccumulatorsNeedOneReverseLoopPerLoop) {
    std::mt19937_64 rng(1);
    ad::Backward b = backward(two_level_sum(rng));
    EXPECT_EQ(count_ops(b.fn, OpKind::ForBegin), 2) << ir::print(b.fn);
    EXPECT_FALSE(b.tape.has_value());
}

// Loops nested in loops nested in ..., deepest.
int max_depth(const ir::Function &f) {
    std::vector<ir::Loop> ls = ir::loops(f);
    int deepest = 0;
    for (const ir::Loop &l : ls) {
        int d = 1;
        for (int p = l.parent; p >= 0; p = ls[static_cast<size_t>(p)].parent) ++d;
        deepest = std::max(deepest, d);
    }
    return deepest;
}

// Under the tape policy a top-level loop with nonlinear state is taped even with a loop inside; its
// reverse loop reads the state back instead of rerunning the forward loop (and the inner loop in
// it) up to each iteration.
TEST(NestedLoopsShape, TopLevelNonlinearLoopIsTapedWithItsInnerLoop) {
    std::mt19937_64 rng(1);
    Problem p = outer_recurrence(rng);
    ad::Backward recomputed = backward(p);
    EXPECT_FALSE(recomputed.tape.has_value());
    EXPECT_EQ(max_depth(recomputed.fn), 3) << ir::print(recomputed.fn);  // back > rerun > inner loop
    p.spec.loops = ad::LoopPolicy::Tape;
    ad::Backward taped = backward(p);
    ASSERT_TRUE(taped.tape.has_value());
    EXPECT_EQ(max_depth(taped.fn), 2) << ir::print(taped.fn);  // back > inner loop
}

// Ops of `kind` inside the reverse loop of a nonlinear loop (`back`).
int count_in_back(const ir::Function &f, OpKind kind) {
    int n = 0;
    for (const ir::Loop &l : ir::loops(f))
        if (f.values[f.ops[static_cast<size_t>(l.begin)].result].name == "back")
            for (int i = l.begin; i < l.end; ++i) n += f.ops[static_cast<size_t>(i)].kind == kind;
    return n;
}

// A taped loop whose pointer runs through its inner loop still reruns, for that pointer only: the
// reverse loop computes no float state (sin), while recomputing reruns it (the reverse itself needs
// cos, not sin).
TEST(NestedLoopsShape, TapedLoopRerunsOnlyThePointerThroughItsInnerLoop) {
    std::mt19937_64 rng(1);
    Problem p = pointer_through_inner(rng);
    EXPECT_EQ(count_in_back(backward(p).fn, OpKind::Sin), 1);
    p.spec.loops = ad::LoopPolicy::Tape;
    ad::Backward taped = backward(p);
    ASSERT_TRUE(taped.tape.has_value());
    EXPECT_EQ(count_in_back(taped.fn, OpKind::Sin), 0) << ir::print(taped.fn);
    EXPECT_EQ(max_depth(taped.fn), 3) << ir::print(taped.fn);  // back > rerun > inner loop (pointer only)
}

// A nonlinear loop nested in another stays on recompute under the tape policy: its tape would need
// a region per iteration of the enclosing loop.
TEST(NestedLoopsShape, NestedNonlinearLoopIsRecomputedUnderTapePolicy) {
    std::mt19937_64 rng(1);
    Problem p = inner_recurrence(rng);
    p.spec.loops = ad::LoopPolicy::Tape;
    EXPECT_FALSE(backward(p).tape.has_value());
}

}  // namespace
