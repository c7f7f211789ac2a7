// The launch plans the pipeline derives for traced forward files (tests/pipeline/golden/plans/), and
// the pipeline's IR dump (TAD_DUMP_IR) stage by stage.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../common/golden.h"
#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/pipeline.h"
#include "frontend/parser.h"
#include "plan/json.h"
#include "runtime/worker.h"
#include "support/fs.h"

using namespace tad;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

struct PlanCase {
    const char *name, *file, *dims;
    ad::LoopPolicy loops;
};

const PlanCase kCases[] = {
    {"layernorm", "examples/layernorm.py", R"({"M": 4, "N": 48})", ad::LoopPolicy::Recompute},
    {"chain", "tests/pipeline/data/chain.py", R"({"n": 100})", ad::LoopPolicy::Recompute},
    {"inplace_chain", "tests/pipeline/data/inplace_chain.py", R"({"n": 100})", ad::LoopPolicy::Recompute},
    {"act_specialized", "tests/pipeline/data/act_specialized.py", R"({"M": 3, "N": 20, "activation": "tanh"})",
     ad::LoopPolicy::Recompute},
    {"layernorm_loops", "tests/pipeline/data/layernorm_loops.py", R"({"M": 3, "N": 37})", ad::LoopPolicy::Recompute},
    {"nested_recurrence_tape", "tests/pipeline/data/nested_recurrence.py", R"({"B": 2, "T": 5, "K": 20, "C": 24})",
     ad::LoopPolicy::Tape},
    {"rope_inplace", "dataset/rope_inplace.py", R"({"B": 1, "H": 2, "N": 37, "D": 16})", ad::LoopPolicy::Recompute},
    {"matmul_transposed", "dataset/matmul.py", R"({"M": 37, "N": 29, "K": 50})", ad::LoopPolicy::Recompute},
    {"gemv_transposed", "tests/pipeline/data/transpose/gemv.py", R"({"M": 10, "N": 21})", ad::LoopPolicy::Recompute},
    // dA and dB transposed through a stash of dZ the rest stores, typed like A.
    {"matmul_epilogue_stash", "tests/pipeline/data/transpose/matmul_epilogue.py", R"({"M": 40, "N": 50, "K": 37})",
     ad::LoopPolicy::Recompute},
    // A persistent loop's iterations as programs: the remapped branch carries its tiles.
    {"persistent_remapped", "tests/pipeline/data/remap/persistent_scale.py", R"({"M": 19, "N": 21, "programs": 3})",
     ad::LoopPolicy::Recompute},
};

Json trace_of(Worker &worker, const std::string &path, const std::string &stub, const char *dims) {
    Json args = Json::object();
    args.set("file", path);
    args.set("stub", stub);
    args.set_copy("dims", Json::parse(dims, "dims"));
    args.set_bool("with_data", false);
    return worker.request("trace", std::move(args));
}

Worker &cpu_worker() {
    static Worker *w = [] {
        WorkerOptions wo;
        wo.python = kPython;
        wo.mode = "cpu";
        return new Worker(wo);
    }();
    return *w;
}

class PlanGolden : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanGolden, BackwardAndTangentPlans) {
    REQUIRE_TORCH();
    const tad::testing::ScopedEnv partial("TAD_GRID_REDUCTION", "partial");  // the goldens show the re-grid's plan
    const PlanCase &c = GetParam();
    const std::string path = std::string(TAD_SOURCE_DIR) + "/" + c.file;
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source(c.file, fs::read_file(path)));
    Json trace = trace_of(cpu_worker(), path, kf.stub.name, c.dims);
    plan::Derivation d = driver::merge(kf, {driver::derive_chain(kf, trace, c.loops)}, trace);
    const plan::Plan backward = plan::backward(d);
    std::string text = plan::print(backward);
    // The JSON form (plan/json.h, what an export's manifest carries) holds the same plan.
    EXPECT_EQ(plan::print(plan::from_json(plan::to_json(backward))), text);
    std::string why = plan::tangent_unsupported(d);
    if (why.empty()) {
        const plan::Plan tangent = plan::tangent(d);
        EXPECT_EQ(plan::print(plan::from_json(plan::to_json(tangent))), plan::print(tangent));
    }
    text += why.empty() ? plan::print(plan::tangent(d)) : "no tangent plan: " + why + "\n";
    tad::testing::expect_golden(std::string("pipeline/golden/plans/") + c.name + ".plan", text);
}

INSTANTIATE_TEST_SUITE_P(Files, PlanGolden, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });

// TAD_DUMP_IR=1 prints every stage of the pipeline, in order, for every kernel; a list of stages
// prints only those.
TEST(DumpIr, PrintsEachStageInPipelineOrder) {
    REQUIRE_TORCH();
    const std::string path = std::string(TAD_SOURCE_DIR) + "/examples/gelu.py";
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source(path, fs::read_file(path)));
    Json trace = trace_of(cpu_worker(), path, kf.stub.name, R"({"n": 1000})");
    ::setenv("TAD_DUMP_IR", "1", 1);
    ::testing::internal::CaptureStderr();
    driver::derive_chain(kf, trace);
    std::string all = ::testing::internal::GetCapturedStderr();
    ::setenv("TAD_DUMP_IR", "writes,drop-unused-params", 1);
    ::testing::internal::CaptureStderr();
    driver::derive_chain(kf, trace);
    std::string some = ::testing::internal::GetCapturedStderr();
    ::unsetenv("TAD_DUMP_IR");
    ::testing::internal::CaptureStderr();
    driver::derive_chain(kf, trace);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

    size_t at = 0;
    for (const char *header :
         {"// ---- lower: _gelu_fwd\nfunc @_gelu_fwd(", "// ---- cse: _gelu_fwd\nfunc @_gelu_fwd(",
          "// ---- flow: gelu\nlaunch 0 _gelu_fwd: wrt X; outputs Y; overwritten; rewritten\n",
          "// ---- writes: _gelu_fwd_bwd\nX: store mirroring Y, covering where its layout matches\n",
          "// ---- ad: _gelu_fwd_bwd\nfunc @_gelu_fwd_bwd(", "// ---- cse: _gelu_fwd_bwd\n",
          "// ---- dce: _gelu_fwd_bwd\n", "// ---- drop-unused-params: _gelu_fwd_bwd\n",
          "// ---- ad: _gelu_fwd_jvp\nfunc @_gelu_fwd_jvp(", "// ---- drop-unused-params: _gelu_fwd_jvp\n"}) {
        size_t next = all.find(header, at);
        EXPECT_NE(next, std::string::npos) << "missing, or out of order: " << header << "\nin:\n" << all;
        if (next != std::string::npos) at = next;
    }
    EXPECT_EQ(some.find("// ---- lower:"), std::string::npos) << some;
    EXPECT_EQ(some.find("// ---- ad:"), std::string::npos) << some;
    EXPECT_NE(some.find("// ---- writes: _gelu_fwd_bwd\n"), std::string::npos) << some;
    EXPECT_NE(some.find("// ---- drop-unused-params: _gelu_fwd_jvp\n"), std::string::npos) << some;
}

}  // namespace
