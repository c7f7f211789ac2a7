// Forward mode in the generated module and the CPU tier's dot-product test <J v, u> = <v, Jᵀ u>:
// the emitted tangent kernel (re-parsed) against the emitted backward, on the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>

#include "cpu_session.h"
#include "driver/cpu_verify.h"
#include "driver/pipeline.h"
#include "driver/session.h"
#include "frontend/parser.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

// Every result passed, with a dot-product test that ran and agreed.
void expect_dot_products_pass(const Json &report, size_t cases) {
    JsonRef results = report.at("results");
    ASSERT_EQ(results.size(), cases) << report.dump(true);
    for (size_t i = 0; i < results.size(); ++i) {
        ASSERT_EQ(results[i].at("status").str(), "pass") << results[i].dump(true);
        JsonRef dot = results[i].at("dot_product");
        ASSERT_TRUE(dot.has("ok")) << dot.dump();
        EXPECT_TRUE(dot.at("ok").boolean()) << dot.dump();
        EXPECT_LE(dot.at("rel_err").num(), 1e-9) << dot.dump();
        EXPECT_NE(dot.at("jvp").num(), 0.0) << "J v is zero: nothing was checked";
    }
}

struct Example {
    const char *file, *kernel, *dims;
};

void PrintTo(const Example &e, std::ostream *os) { *os << e.file; }

class ExampleJvp : public ::testing::TestWithParam<Example> {};

TEST_P(ExampleJvp, ModuleHasForwardModeAndDotProductsPass) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    std::unique_ptr<Session> s = cpu_session(dir, GetParam().file);
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    EXPECT_NE(src.find("@triton.jit\ndef " + std::string(GetParam().kernel) + "_jvp"), std::string::npos) << src;
    EXPECT_NE(src.find("\ndef jvp(*args, tangents=None, **kwargs):\n"), std::string::npos);
    EXPECT_NE(src.find("\nJVP_UNSUPPORTED = None\n"), std::string::npos);
    VerifyOptions v;
    v.cpu = true;
    v.dims_json = GetParam().dims;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    expect_dot_products_pass(report, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, ExampleJvp,
    ::testing::Values(
        Example{"examples/gelu.py", "_gelu_fwd", R"([{"n": 1000}, {"n": 4097}])"},
        Example{"examples/softmax.py", "_softmax_fwd", R"([{"M": 3, "N": 37}, {"M": 64, "N": 1000}])"},
        Example{"examples/layernorm.py", "_layernorm_fwd", R"([{"M": 4, "N": 48}, {"M": 37, "N": 1000}])"},
        // Loops: accumulators, a recurrence, an online softmax; atomics in the forward.
        Example{"tests/pipeline/data/layernorm_loops.py", "_ln_loop", R"([{"M": 3, "N": 37}, {"M": 2, "N": 16}])"},
        Example{"dataset/linear_recurrence.py", "_linear_recurrence_fwd",
                R"([{"B": 2, "T": 16, "C": 40}, {"B": 1, "T": 33, "C": 7}])"},
        Example{
            "dataset/flash_attention.py", "_attn_fwd",  // _jvp_CAUSAL_False and _True
            R"([{"B": 1, "H": 2, "N": 40, "D": 16, "causal": false}, {"B": 1, "H": 1, "N": 70, "D": 16, "causal": true}])"},
        Example{"dataset/scatter_add.py", "_scatter_add_fwd",
                R"([{"N": 100, "D": 40, "S": 7}, {"N": 60, "D": 16, "S": 50}])"},
        // Chains: a temp, an output read by a later launch, statistics feeding a second launch.
        Example{"tests/pipeline/data/chain.py", "squash", R"([{"n": 100}, {"n": 4096}])"},
        Example{"dataset/layernorm_two_pass.py", "row_stats_kernel", R"([{"M": 3, "N": 40}, {"M": 17, "N": 1000}])"},
        // In place: q and k updated and returned; a mutation chain with saved copies.
        Example{"dataset/rope_inplace.py", "_rope_qk_inplace",
                R"([{"B": 1, "H": 2, "N": 37, "D": 16}, {"B": 2, "H": 2, "N": 50, "D": 48}])"},
        Example{"tests/pipeline/data/mutation/loop_store.py", "running", R"([{"n": 100}, {"n": 700}])"}),
    [](const auto &info) {
        std::string n = info.param.file;
        size_t slash = n.rfind('/');
        return n.substr(slash + 1, n.find('.') - slash - 1);
    });

// A module whose kernels multiply float32 tiles with tl.dot at Triton's default precision says so:
// the GPU checks then expect TF32 rounding in float32 (docs/worker-protocol.md).
TEST(Tf32Flag, MatmulSaysItsKernelsUseTf32AndGeluThatItsDoNot) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    std::unique_ptr<Session> mm = cpu_session(dir, "dataset/matmul.py");
    EXPECT_NE(mm->candidate_source(mm->generate(GenerateOptions{})).find("\nTF32 = True\n"), std::string::npos);
    fs::TempDir dir2;
    std::unique_ptr<Session> gelu = cpu_session(dir2, "examples/gelu.py");
    EXPECT_NE(gelu->candidate_source(gelu->generate(GenerateOptions{})).find("\nTF32 = False\n"), std::string::npos);
}

// One tangent kernel per static-if specialization, dispatched like the backward; two outputs, one
// of them transposed in memory.
TEST(SpecializedJvp, EachSpecializationHasItsTangentKernel) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    std::unique_ptr<Session> s = cpu_session(dir, "tests/pipeline/data/act_specialized.py");
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    for (const char *act : {"tanh", "softplus"}) {
        EXPECT_NE(src.find(std::string("def _act_fwd_jvp_ACTIVATION_") + act + "("), std::string::npos) << act;
        EXPECT_NE(src.find(std::string("if a[\"ACTIVATION\"] == '") + act + "':\n        _act_fwd_jvp_ACTIVATION_" +
                           act + "[launches[0].grid]("),
                  std::string::npos)
            << src;
    }
    EXPECT_NE(src.find("    return (t0, t1)\n"), std::string::npos);
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    expect_dot_products_pass(report, 2);
}

// A loop whose carried float starts at a constant other than 0 (a running maximum from -1e4): its
// tangent starts at a zero made before the loop, and the dot-product test passes.
TEST(LoopJvp, ConstantStartCarriesAZeroTangent) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    std::unique_ptr<Session> s = cpu_session(dir, "tests/pipeline/data/max_accumulator.py");
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    EXPECT_NE(src.find("def _mm_wrapped_jvp("), std::string::npos) << src;
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    expect_dot_products_pass(report, 2);
}

// In-place updates and buffers a later launch overwrites: the tangent kernels read the contents
// their launch saw (copies saved before the overwriting launch, `_JVP_SNAPSHOTS`), and update one
// tangent buffer per tensor in the forward's order. The dot-product test passes on every case.
TEST(InPlaceJvp, TangentKernelsReadSavedCopies) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    std::unique_ptr<Session> s = cpu_session(dir, "tests/pipeline/data/inplace_chain.py");
    std::string src = s->candidate_source(s->generate(GenerateOptions{}));
    EXPECT_NE(src.find("\nJVP_UNSUPPORTED = None\n"), std::string::npos);
    EXPECT_NE(src.find("\n_JVP_SNAPSHOTS = {1: ((1, \"Y\"),), 4: ((4, \"Z_IN\"),)}\n"), std::string::npos) << src;
    EXPECT_NE(src.find("    d_z = _tangent_of(tangents[3], z, written=True)\n"), std::string::npos) << src;
    EXPECT_NE(src.find("gate__jvp[launches[4].grid](launches[4].pre[\"Z_IN\"], d_z, outs[0], t0, d_z, "),
              std::string::npos)
        << src;
    EXPECT_NE(src.find("    return (t0, d_z)\n"), std::string::npos) << src;
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    expect_dot_products_pass(report, 2);
}

// The check can fail: the emitted tangent kernel, corrupted before it is re-parsed, disagrees with
// the (correct) backward, which still matches finite differences.
TEST(DotProductCpu, CorruptedTangentKernelFailsTheEntry) {
    REQUIRE_TORCH();
    const std::string path = std::string(TAD_SOURCE_DIR) + "/examples/gelu.py";
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source(path, fs::read_file(path)));
    WorkerOptions wo;
    wo.python = kPython;
    wo.mode = "cpu";
    Worker worker(wo);
    Json args = Json::object();
    args.set("file", path);
    args.set("stub", "gelu");
    args.set_copy("dims", Json::parse(R"({"n": 1000})", "dims"));
    args.set_bool("with_data", false);
    Json trace = worker.request("trace", std::move(args));
    const std::string source = emit_backward_module(kf, {trace});
    const std::string store = "    tl.store(DY + offs, dy, mask=mask)\n";
    ASSERT_NE(source.find(store), std::string::npos) << source;
    Json dims = Json::parse(R"([{"n": 1000}])", "dims");

    struct Case {
        const char *name, *store;
        bool passes;
    };
    for (const Case &c : {Case{"as emitted", "    tl.store(DY + offs, dy, mask=mask)\n", true},
                          Case{"sign flipped", "    tl.store(DY + offs, -dy, mask=mask)\n", false},
                          Case{"off by 1e-6", "    tl.store(DY + offs, dy * 1.000001, mask=mask)\n", false}}) {
        std::string text = source;
        text.replace(text.find(store), store.size(), c.store);
        // The whole-stub check imports the module from its path.
        fs::TempDir dir;
        const std::string generated = dir.path() + "/gelu_generated.py";
        fs::write_file_atomic(generated, text);
        CpuVerifyInput in{kf, text, generated, path, 1 << 20, 0};
        Json report = cpu_verify(in, dims, worker, nullptr);
        JsonRef entry = report.at("results")[0];
        EXPECT_TRUE(entry.at("grads")[0].at("ok").boolean()) << c.name << ": " << entry.dump(true);
        JsonRef dot = entry.at("dot_product");
        EXPECT_EQ(dot.at("ok").boolean(), c.passes) << c.name << ": " << dot.dump();
        EXPECT_EQ(entry.at("status").str(), c.passes ? "pass" : "fail") << c.name;
        EXPECT_EQ(report.at("passed").boolean(), c.passes) << c.name;
        if (c.passes) continue;
        EXPECT_GT(dot.at("rel_err").num(), 1e-8) << c.name;
        EXPECT_EQ(entry.at("message").str().rfind("dot-product test fails: <J v, u> = ", 0), 0u) << entry.dump(true);
    }
}

}  // namespace
