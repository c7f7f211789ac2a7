// ir::parse, the printer's inverse: print -> parse -> print round trips over the rule cases' kernels
// and backwards, the backwards of pipeline kernels, and functions that use every corner of the text
// form; and its diagnostics, by exact text.
#include <gtest/gtest.h>

#include "../ad/rule_cases.h"
#include "../common/error_of.h"
#include "ad/forward.h"
#include "ad/reverse.h"
#include "equal.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "passes/passes.h"

using namespace tad;
using tad::testing::function_differs;

namespace {

// parse(print(f)) equals f, and prints the same text.
void expect_round_trip(const ir::Function &f, const std::string &what) {
    const std::string text = ir::print(f);
    ir::Function back;
    try {
        back = ir::parse(text);
    } catch (const Error &e) {
        ADD_FAILURE() << what << ": " << e.what() << "\n" << text;
        return;
    }
    EXPECT_EQ(function_differs(f, back), "") << what << "\n" << text;
    EXPECT_EQ(ir::print(back), text) << what;
}

// Reverse (and, where it applies, forward) mode of `fwd` under both loop policies.
void expect_derivatives_round_trip(const ir::Function &fwd, ad::GradSpec spec) {
    const ir::Function f = passes::cse(fwd);
    const auto plan = passes::plan_gradient_writes(f, spec.wrt, spec.outputs);
    for (ad::LoopPolicy policy : {ad::LoopPolicy::Recompute, ad::LoopPolicy::Tape}) {
        spec.loops = policy;
        ad::Backward bwd = ad::reverse(f, spec, plan, fwd.name + "_bwd");
        expect_round_trip(bwd.fn, bwd.fn.name);
        if (bwd.tape) expect_round_trip(bwd.tape->fn, bwd.fn.name + " tape sizing");
    }
}

frontend::ArgBinding binding(frontend::ArgBinding::Kind k, const std::string &name, double v = 0,
                             ir::DType dtype = ir::DType::F32) {
    frontend::ArgBinding b;
    b.kind = k;
    b.name = name;
    b.dtype = dtype;
    b.ival = static_cast<int64_t>(v);
    b.fval = v;
    return b;
}

ir::Function lower_file(const std::string &rel, const std::string &kernel,
                        const std::vector<frontend::ArgBinding> &args) {
    return frontend::lower_kernel(frontend::parse_file(std::string(TAD_SOURCE_DIR) + "/" + rel), kernel, args);
}

// The status and message parse() fails with.
std::pair<int, std::string> parse_error(const std::string &text) {
    return tad::testing::error_of([&] { ir::parse(text); });
}

}  // namespace

TEST(Parse, RoundTripsEveryRuleCaseAndItsDerivatives) {
    for (const auto &c : tad::testing::rule_cases()) {
        ir::Function f = tad::testing::rule_kernel(c);
        expect_round_trip(f, f.name);
        ad::GradSpec spec;
        for (size_t i = 0; i < c.inputs.size(); ++i) spec.wrt.push_back("X" + std::to_string(i));
        spec.outputs = {"Y"};
        expect_derivatives_round_trip(f, spec);
        expect_round_trip(ad::jvp(passes::cse(f), spec, f.name + "_jvp").fn, f.name + "_jvp");
    }
}

TEST(Parse, RoundTripsPipelineKernelsAndTheirBackwards) {
    using K = frontend::ArgBinding::Kind;
    struct Case {
        const char *file, *kernel;
        std::vector<frontend::ArgBinding> args;
        ad::GradSpec spec;
    };
    const std::vector<Case> cases = {
        {"examples/softmax.py",
         "_softmax_fwd",
         {binding(K::Tensor, "X"), binding(K::Tensor, "Y"), binding(K::Int, "stride_x", 64),
          binding(K::Int, "stride_y", 64), binding(K::Int, "n_cols", 50), binding(K::Int, "BLOCK_SIZE", 64)},
         {{"X"}, {"Y"}}},
        {"examples/layernorm.py",
         "_layernorm_fwd",
         {binding(K::Tensor, "X"), binding(K::Tensor, "Y"), binding(K::Tensor, "W"), binding(K::Tensor, "B"),
          binding(K::Tensor, "Mean"), binding(K::Tensor, "Rstd"), binding(K::Int, "stride", 32),
          binding(K::Int, "N", 30), binding(K::Float, "eps", 1e-5), binding(K::Int, "BLOCK_SIZE", 32)},
         {{"X", "W", "B"}, {"Y"}}},
        {"examples/gelu.py",
         "_gelu_fwd",
         {binding(K::Tensor, "X"), binding(K::Tensor, "Y"), binding(K::Int, "n", 100),
          binding(K::Int, "BLOCK_SIZE", 128)},
         {{"X"}, {"Y"}}},
        {"tests/pipeline/data/nested_loops.py",
         "_ln_rows_fwd",
         {binding(K::Tensor, "X"), binding(K::Tensor, "Y"), binding(K::Tensor, "W"), binding(K::Tensor, "B"),
          binding(K::Tensor, "Sq"), binding(K::Int, "M", 6), binding(K::Int, "N", 20), binding(K::Int, "stride", 20),
          binding(K::Float, "eps", 1e-5), binding(K::Int, "ROWS", 2), binding(K::Int, "BLOCK", 8)},
         {{"X", "W", "B"}, {"Y", "Sq"}}},
        {"tests/pipeline/data/dynamic_if_loop.py",
         "_masked_nll_fwd",
         {binding(K::Tensor, "Logits"), binding(K::Tensor, "Targets", 0, ir::DType::I64), binding(K::Tensor, "Loss"),
          binding(K::Int, "V", 40), binding(K::Int, "ignore_index", -100), binding(K::Int, "BLOCK_V", 16)},
         {{"Logits"}, {"Loss"}}},
    };
    for (const Case &c : cases) {
        ir::Function f = lower_file(c.file, c.kernel, c.args);
        expect_round_trip(f, c.kernel);
        expect_derivatives_round_trip(f, c.spec);
    }
}

// Parameters out of the leading position, kinds that differ from their type's, specialization,
// names and dims that need quotes, and constants the %.17g form spells as words.
TEST(Parse, RoundTripsEveryCornerOfTheTextForm) {
    ir::Function f;
    f.name = "corner cases";
    f.constexprs = {{"MODE", "'a, (b)'"}, {"SCALE", "0.5"}};
    f.specialized = {"MODE"};
    ir::Builder b(f);
    ir::ValueId c = b.constant(-0.0, ir::DType::F32, "(BLOCK) - (1)");
    ir::ValueId n = b.param("n", ir::ParamKind::Float, ir::Type{ir::DType::I32, false, {}});
    ir::ValueId X = b.param("X", ir::ParamKind::Pointer, ir::Type{ir::DType::F16, true, {}});
    ir::ValueId inf = b.constant(-INFINITY, ir::DType::F32);
    ir::ValueId nan = b.constant(NAN, ir::DType::F32);
    ir::ValueId tile = b.broadcast(b.binary(ir::OpKind::Add, c, b.binary(ir::OpKind::Add, inf, nan)),
                                   {{3, "3"}, {16, "2 * N"}, {1, ""}, {8, "\"q\\uote\""}, {4, "8"}});
    f.values[tile].name = " spaced // name";
    b.store(b.broadcast(X, f.type(tile).shape), b.cast(tile, ir::DType::F16), ir::kNoValue);
    b.atomic_add(b.broadcast(X, {}), b.cast(n, ir::DType::F16), ir::kNoValue, "");
    const ir::ValueId r = b.for_begin(n, n, n, "tl.range");
    f.ops[static_cast<size_t>(f.values[r].def_op)].ival = 1;  // pipelined (passes/pipeline_loops.h)
    b.for_end({});
    const std::string text = ir::print(f);
    EXPECT_NE(text.find(" = for_begin %1, %1, %1 (tl.range) pipelined : i32"), std::string::npos) << text;
    EXPECT_NE(text.find("func @\"corner cases\"(%1 n: i32 kind=float, %2 X: ptr<f16>, MODE: constexpr = 'a, (b)', "
                        "SCALE: constexpr = 0.5) specialized(MODE) {"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("%0 = const -0 (\"(BLOCK) - (1)\") : f32"), std::string::npos) << text;
    EXPECT_NE(text.find("%1 = param #0 (n) : i32  // n"), std::string::npos) << text;
    EXPECT_NE(text.find("f32[3,\"2 * N\"=16,\"\"=1,\"\\\"q\\\\uote\\\"\"=8,\"8\"=4]  //  spaced // name"),
              std::string::npos)
        << text;
    expect_round_trip(f, "corner cases");
}

TEST(Parse, AcceptsCommentsBlankLinesAndFreeSpacing) {
    ir::Function f = ir::parse(
        "// a comment before the function\n"
        "\n"
        "func @k(X: ptr<f32>, BLOCK: constexpr = 4) {\n"
        "   // a comment line\n"
        "  %1   =  arange 0 ,4 :i32[ BLOCK = 4 ]\n"
        "\n"
        "  %2 = broadcast %0 : ptr<f32>[BLOCK=4]\n"
        "  %3 = add_ptr %2 , %1 : ptr<f32>[BLOCK=4]\n"
        "  %4 = load %3 : f32[BLOCK=4]  // x\n"
        "  store %3,%4\n"
        "}\n");
    EXPECT_EQ(ir::verify(f), "");
    EXPECT_EQ(ir::print(f),
              "func @k(X: ptr<f32>, BLOCK: constexpr = 4) {\n"
              "  %1 = arange 0, 4 : i32[BLOCK=4]\n"
              "  %2 = broadcast %0 : ptr<f32>[BLOCK=4]\n"
              "  %3 = add_ptr %2, %1 : ptr<f32>[BLOCK=4]\n"
              "  %4 = load %3 : f32[BLOCK=4]  // x\n"
              "  store %3, %4\n"
              "}\n");
    EXPECT_EQ(f.ops[4].loc.line, 9);  // ops remember where they are in the text
    EXPECT_EQ(f.ops[4].loc.col, 3);
}

TEST(Parse, DiagnosticsGiveLineAndColumn) {
    const std::string head = "func @k(X: ptr<f32>) {\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "1:1: expected 'func'"},
        {"func k() {\n}\n", "1:6: expected '@' and the function's name"},
        {"func @k(X ptr<f32>) {\n}\n", "1:11: expected ':' after the parameter name"},
        {"func @k(X: ptr<f31>) {\n}\n", "1:16: unknown element type 'f31'"},
        {"func @k(X: f32 kind=complex) {\n}\n", "1:21: unknown parameter kind 'complex' (pointer, int or float)"},
        {"func @k(%0 X: f32, Y: f32) {\n}\n", "1:20: either every parameter has a value number or none has"},
        {"func @k(B: constexpr = ) {\n}\n", "1:24: expected the constexpr's value"},
        {"func @k() {\n", "2:1: expected '}' at the end of the function"},
        {"func @k() {\n}\n}\n", "3:1: text after the function's closing '}'"},
        {head + "  %1 = frobnicate %0 : f32\n}\n", "2:8: unknown op 'frobnicate'"},
        {head + "  %1 = neg %0\n}\n", "2:14: expected ':' and the result's type"},
        {head + "  store %0, %0 : f32\n}\n", "2:16: an op without a result has no type"},
        {head + "  %1 = neg %7 : f32\n}\n", "2:12: value %7 is never defined"},
        {head + "  %0 = neg %0 : f32\n}\n", "2:3: value %0 is defined twice"},
        {head + "  %2 = neg %0 : f32\n}\n", "3:1: value %1 is never defined (values are numbered from %0 up)"},
        {head + "  %1 = reduce_sum %0 keep_dims : f32\n}\n", "2:22: expected axis="},
        {head + "  %1 = split %0 1 : f32\n}\n", "2:17: expected '#' and an index"},
        {head + "  %1 = load %0, mask=%0, %0 : f32\n}\n",
         "2:26: expected mask= or other=: labelled operands come last"},
        {head + "  %1 = load %0, other=%0, mask=%0 : f32\n}\n", "2:27: mask= comes once, before other="},
        {head + "  %1 = const 1.5x : f32\n}\n", "2:14: expected a number"},
        {head + "  %1 = arange 0, 4 : i32[\"BLOCK = 4]\n}\n", "2:26: unterminated string"},
        {head + "  %1 = arange 0, 4 : i32[BLOCK]\n}\n", "2:31: expected '=' and the dim's value"},
        {head + "  %1 = arange 0, 4 : i32[4;\n}\n", "2:27: expected ',' or ']'"},
        {head + "  %1 = neg %0 : f32 extra\n}\n", "2:21: unexpected text at the end of the line"},
        {head + "  %1 = for_begin %0, %0, %0 range : i32\n}\n", "2:29: expected '('"},
        {"func @k(%0 X: ptr<f32>) {\n  %0 = param #0 (X) : f32\n}\n",
         "1:9: parameter 'X' has type ptr<f32> but %0 is f32"},
    };
    for (const auto &[text, want] : cases) {
        auto [status, message] = parse_error(text);
        EXPECT_EQ(status, TAD_ERR_SYNTAX) << text;
        EXPECT_EQ(message, want) << text;
    }
}
