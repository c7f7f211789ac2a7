// tad_export on the CPU tier (what it refuses before the GPU is needed, and that it needs one), and
// LayerNorm's real backward plan through the AOT executor on the fake libcuda (tests/aot/fake): the
// launches the generated module's launcher would make, with Triton's specialization of each
// argument written out by hand for the traced sizes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "../aot/fixture.h"
#include "../common/error_of.h"
#include "aot/kernels.h"
#include "cpu_session.h"
#include "driver/export.h"
#include "driver/pipeline.h"
#include "frontend/parser.h"
#include "passes/pipeline_loops.h"
#include "runtime/worker.h"

using namespace tad;
using tad::testing::error_of;
using test::cpu_session;

namespace {

driver::ExportOptions export_options(const fs::TempDir &dir, const char *dims) {
    driver::ExportOptions e;
    e.out_dir = dir.path() + "/export";
    e.dims_json = dims;
    e.dtypes = "float32";
    return e;
}

TEST(Export, CompilesOnTheGpuOnly) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, "examples/layernorm.py");
    driver::GenerateOptions g;
    g.dims_json = R"({"M": 4, "N": 48})";
    s->generate(g);
    EXPECT_EQ(error_of([&] { s->export_kernels(export_options(dir, R"([{"M": 4, "N": 48}])")); }),
              std::make_pair(static_cast<int>(TAD_ERR_NO_GPU),
                             std::string("no_gpu: export compiles the backward with triton on the GPU (torch sees no "
                                         "CUDA device); the worker runs in cpu mode")));
}

TEST(Export, RefusesAStubThatLaunchesSeveralKernels) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    auto s = cpu_session(dir, "tests/pipeline/data/chain.py");
    driver::GenerateOptions g;
    g.dims_json = R"({"n": 100})";
    s->generate(g);
    EXPECT_EQ(error_of([&] { s->export_kernels(export_options(dir, R"({"n": 100})")); }),
              std::make_pair(static_cast<int>(TAD_ERR_UNSUPPORTED),
                             std::string("tad_export: stub 'chain' launches 4 kernels; tad_launch_backward runs the "
                                         "backward of a stub that launches one (tad_launch_backward does not handle "
                                         "it yet; docs/aot.md)")));
}

TEST(Export, NeedsACandidate) {
    fs::TempDir dir;
    auto s = cpu_session(dir, "examples/layernorm.py");
    EXPECT_EQ(error_of([&] { s->export_kernels(export_options(dir, R"({"M": 4, "N": 48})")); }),
              std::make_pair(static_cast<int>(TAD_ERR_STATE),
                             std::string("tad_export: no candidate yet (call tad_generate first)")));
}

// LayerNorm at M = 4, N = 48 in float32, as examples/layernorm.py launches it: BLOCK_SIZE 64,
// num_warps 1.
class LayerNormPlan : public ::testing::Test {
protected:
    void SetUp() override { fake_cuda::reset(); }
    void TearDown() override { fake_cuda::reset(); }
};

// LayerNorm traced at M = 4, N = 48 on the CPU worker, and what the pipeline derives for it.
struct Traced {
    frontend::KernelFile kf;
    Json trace;
    driver::Chain chain;
    plan::Plan plan;
};

Traced layernorm() {
    const std::string path = std::string(TAD_SOURCE_DIR) + "/examples/layernorm.py";
    Traced t{frontend::analyze(frontend::parse_source(path, fs::read_file(path))), Json(), {}, {}};
    WorkerOptions wo;
    wo.python = test::kPython;
    wo.mode = "cpu";
    Worker worker(wo);
    Json args = Json::object();
    args.set("file", path);
    args.set("stub", t.kf.stub.name);
    args.set_copy("dims", Json::parse(R"({"M": 4, "N": 48})", "dims"));
    t.trace = worker.request("trace", std::move(args));
    t.chain = driver::derive_chain(t.kf, t.trace);
    t.plan = plan::backward(driver::merge(t.kf, {t.chain}, t.trace));
    return t;
}

plan::Plan layernorm_plan() { return layernorm().plan; }

// The worker's export reply (docs/worker-protocol.md) with one cubin per kernel named.
Json reply_of(const std::vector<std::string> &kernels) {
    Json r = Json::parse(R"({"triton": "3.6.0", "device": "NVIDIA H100 80GB HBM3", "capability": 90,
                             "kernels": {}, "launches": 1})",
                         "reply");
    for (const std::string &k : kernels)
        r.at("kernels").set_array(k).push_copy(Json::parse(R"({"file": "k.cubin", "function": "k", "num_warps": 4,
            "num_stages": 3, "num_ctas": 1, "cluster_dims": [1, 1, 1], "shared": 0, "global_scratch_size": 0,
            "global_scratch_align": 1, "profile_scratch_size": 0, "profile_scratch_align": 1, "cooperative": false,
            "pdl": false, "params": [{"name": "X", "type": "*fp32", "divisible": true},
            {"name": "BLOCK", "type": "constexpr", "value": "64"}], "abi": [8, 8, 8]})",
                                                           "cubin"));
    return r;
}

TEST(Export, TheManifestOfAPlanAndTheWorkersCubins) {
    REQUIRE_TORCH();
    const Traced t = layernorm();
    const aot::Manifest m = driver::manifest_of(t.kf, t.plan, t.trace, t.chain.launches[0].tensors,
                                                reply_of({"_layernorm_fwd_bwd", "tad_row_sum"}));
    EXPECT_EQ(m.stub, "layernorm");
    EXPECT_EQ(m.kernel, "_layernorm_fwd");
    EXPECT_EQ(m.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(m.capability, 90);
    std::string params;
    for (const aot::ForwardParam &p : m.params)
        params += p.name + ":" + p.kind +
                  (p.kind == "tensor" ? "/" + std::to_string(p.tensor.kind) + "." + std::to_string(p.tensor.index) +
                                            "/" + std::to_string(p.ndim)
                                      : "") +
                  " ";
    // Tensors as input (0), output (1) or temp (2) i, with their rank.
    EXPECT_EQ(params,
              "X:tensor/0.0/2 Y:tensor/1.0/2 W:tensor/0.1/1 B:tensor/0.2/1 Mean:tensor/2.0/1 "
              "Rstd:tensor/2.1/1 stride:int N:int eps:float BLOCK_SIZE:int ");
    ASSERT_EQ(m.kernels.size(), 2u);
    EXPECT_EQ(m.kernels.at("_layernorm_fwd_bwd").largest_tile, std::vector<std::string>{"BLOCK_SIZE"});
    EXPECT_TRUE(m.kernels.at("_layernorm_fwd_bwd").loop_stages);  // its loop over the forward's programs
    EXPECT_EQ(m.kernels.at("tad_row_sum").cubins.size(), 1u);
    EXPECT_EQ(error_of([&] { driver::manifest_of(t.kf, t.plan, t.trace, t.chain.launches[0].tensors, reply_of({})); }),
              std::make_pair(static_cast<int>(TAD_ERR_WORKER),
                             std::string("tad_export: the module launched none of the plan's kernels "
                                         "(_layernorm_fwd_bwd) at the export's dims and dtypes")));
}

// An export of LayerNorm's real backward plan at M = 4, N = 48 in float32 (BLOCK_SIZE 64, num_warps 1),
// with the cubins Triton would compile there: every buffer 16-byte aligned, stride = N = 48 and the
// partial rows' length 48 multiples of 16, G = 4 not.
aot::Manifest layernorm_export(const std::string &dir) {
    using namespace aot;
    using namespace aot::testing;
    Manifest m;
    m.tad_version = tad_version();
    m.triton_version = "3.6.0";
    m.device = "Fake GPU";
    m.capability = 90;
    m.stub = "layernorm";
    m.kernel = "_layernorm_fwd";
    const plan::TensorRef x{plan::TensorRef::Input, 0}, w{plan::TensorRef::Input, 1}, b{plan::TensorRef::Input, 2},
        y{plan::TensorRef::Output, 0}, mean{plan::TensorRef::Temp, 0}, rstd{plan::TensorRef::Temp, 1};
    m.params = {{"X", "tensor", x, 2},       {"Y", "tensor", y, 2},       {"W", "tensor", w, 1},
                {"B", "tensor", b, 1},       {"Mean", "tensor", mean, 1}, {"Rstd", "tensor", rstd, 1},
                {"stride", "int", {}, 0},    {"N", "int", {}, 0},         {"eps", "float", {}, 0},
                {"BLOCK_SIZE", "int", {}, 0}};
    m.plan = layernorm_plan();
    const std::string bwd = m.plan.kernels.at(0).fn.name;
    m.kernels[bwd] = KernelInfo{
        bwd,
        plan::largest_tile(m.plan.kernels[0].fn),
        passes::has_pipelined_loop(m.plan.kernels[0].fn),  // its loop over the G programs
        {cubin(dir, "bwd.cubin", bwd,
               {param("X", "*fp32", true), param("DX", "*fp32", true), param("DY", "*fp32", true),
                param("W", "*fp32", true), param("DW", "*fp32", true), param("DB", "*fp32", true),
                param("stride", "i32", true), param("N", "i32", true), param("Mean_final", "*fp32", true),
                param("Rstd_final", "*fp32", true), param("G", "i32"), param("DB_slab", "i32", true),
                param("DW_slab", "i32", true), constant("BLOCK_SIZE", "64"), constant("TAD_LOOP_STAGES", "3")})}};
    m.kernels[bwd].cubins[0].num_warps = 1;
    m.kernels[kRowSum] = KernelInfo{kRowSum,
                                    {},
                                    false,
                                    {cubin(dir, "sum.cubin", "tad_row_sum",
                                           {param("Partial", "*fp32"), param("Out", "*fp32"), param("rows", "i32"),
                                            param("n", "i32"), constant("ADD", "False"), constant("BLOCK", "1024")})}};
    write_manifest(dir, m);
    return m;
}

TEST_F(LayerNormPlan, RunsAsTheGeneratedLauncherDoes) {
    REQUIRE_TORCH();
    using namespace aot;
    using namespace aot::testing;
    const std::string dir = fresh_dir("layernorm");
    const Manifest m = layernorm_export(dir);
    const std::string bwd = m.plan.kernels.at(0).fn.name;
    ASSERT_EQ(bwd, "_layernorm_fwd_bwd");
    ASSERT_TRUE(m.kernels.at(bwd).loop_stages);
    Kernels k(dir, TAD_FAKE_CUDA);

    std::vector<float> xs(4 * 48, 1), ys(4 * 48, 2), ws(48, 1), bs(48, 0), means(4), rstds(4), dx(4 * 48, NAN),
        dy(4 * 48, 3), dw(48, NAN), db(48, NAN);
    Request r;
    r.grid = {4, 1, 1};
    r.num_warps = 1;
    r.tensors["X"] = tensor(xs, 4, 48, address(dx.data()));
    r.tensors["Y"] = tensor(ys, 4, 48, address(dy.data()));
    r.tensors["W"] = tensor(ws, 0, 48, address(dw.data()));
    r.tensors["B"] = tensor(bs, 0, 48, address(db.data()));
    r.tensors["Mean"] = tensor(means, 0, 4);
    r.tensors["Rstd"] = tensor(rstds, 0, 4);
    r.values["stride"] = Value{Value::Int, 48, 0, ""};
    r.values["N"] = Value{Value::Int, 48, 0, ""};
    r.values["eps"] = Value{Value::Float, 0, 1e-5, ""};
    r.values["BLOCK_SIZE"] = Value{Value::Int, 64, 0, ""};
    k.launch(r, nullptr);

    // The partial rows of DB and DW (P = 4 programs: at most 4 per SM for a 64-element tile, at most
    // G) not zeroed: every program's flush writes its whole row (BLOCK_SIZE >= N); the backward on P
    // programs, then each gradient the sum of its rows, into the caller's buffers (float32 needs no
    // cast); DX is laid out as Y: no fill.
    const std::vector<std::string> &calls = fake_cuda::state().calls;
    const std::vector<std::string> tail(calls.end() - 4, calls.end());
    EXPECT_EQ(tail, (std::vector<std::string>{"cuMemAlloc_v2 bytes=1048576", "cuLaunchKernelEx " + bwd,
                                              "cuLaunchKernelEx tad_row_sum", "cuLaunchKernelEx tad_row_sum"}));
    const std::vector<fake_cuda::Launch> &l = fake_cuda::state().launches;
    EXPECT_EQ(l[0].grid, (std::array<unsigned, 3>{4, 1, 1}));
    EXPECT_EQ(l[0].block, (std::array<unsigned, 3>{32, 1, 1}));
    const uint64_t ws_base = fake_cuda::state().allocations.begin()->first;
    EXPECT_EQ(read<uint64_t>(l[0].params[1]), address(dx.data()));
    EXPECT_EQ(read<uint64_t>(l[0].params[4]), ws_base + 768);  // DW: the second partial buffer
    EXPECT_EQ(read<uint64_t>(l[0].params[5]), ws_base);  // DB
    EXPECT_EQ(read<int32_t>(l[0].params[10]), 4);  // G
    EXPECT_EQ(read<uint64_t>(l[1].params[1]), address(db.data()));
    EXPECT_EQ(read<uint64_t>(l[2].params[1]), address(dw.data()));
    EXPECT_EQ(read<int32_t>(l[2].params[2]), 4);  // rows
    EXPECT_EQ(read<int32_t>(l[2].params[3]), 48);  // n
}

// A case of bench/aot_proof.py for the export above, all zeros: on the fake driver no kernel runs,
// so the gradients stay the zeros uploaded and match; what the programs prove here is that
// tad_launch_backward accepts their description of the forward launch, as on the GPU.
std::string zero_case(const std::string &dir) {
    const std::string c = dir + "/case";
    fs::make_dirs(c);
    std::ofstream(c + "/meta.txt") << "example layernorm\ndtype float32\nM 4\nN 48\neps 1e-05\nblock 64\nnum_warps 1\n";
    const std::pair<const char *, size_t> files[] = {{"x.bin", 192},  {"y.bin", 192},  {"dy.bin", 192}, {"w.bin", 48},
                                                     {"b.bin", 48},   {"mean.bin", 4}, {"rstd.bin", 4}, {"dx.ref", 192},
                                                     {"dx.mod", 192}, {"dw.ref", 48},  {"dw.mod", 48},  {"db.ref", 48},
                                                     {"db.mod", 48}};
    for (const auto &[name, floats] : files)
        std::ofstream(c + "/" + name, std::ios::binary) << std::string(floats * 4, '\0');
    return c;
}

// Runs `program` on the export and case with TAD_LIBCUDA at the fake; its output and exit status.
std::pair<std::string, int> run_example(const std::string &program, const std::string &dir, const std::string &c) {
    const std::string cmd =
        "TAD_LIBCUDA=" + std::string(TAD_FAKE_CUDA) + " " + program + " " + dir + " " + c + " 3 2>&1";
    FILE *p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// The program accepts the export and the case and reports every gradient matching.
void expect_example_runs(const std::string &program, const std::string &language) {
    const std::string dir = aot::testing::fresh_dir("layernorm_" + language);
    layernorm_export(dir);
    auto [out, status] = run_example(program, dir, zero_case(dir));
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("{\"program\": \"" + language +
                       R"(", "case": "case", "example": "layernorm", "dtype": "float32", "M": 4, "N": 48, )"
                       R"("mismatches": 0)"),
              std::string::npos)
        << out;
}

TEST_F(LayerNormPlan, TheCExampleDescribesTheLaunchAsTadWantsIt) {
    REQUIRE_TORCH();
    expect_example_runs(TAD_AOT_C_EXAMPLE, "c");
}

TEST_F(LayerNormPlan, TheRustExampleDescribesTheLaunchAsTadWantsIt) {
    REQUIRE_TORCH();
#ifndef TAD_AOT_RUST_EXAMPLE
    GTEST_SKIP() << "[SKIP] the Rust bindings are not built (cargo and rustc, TAD_BINDINGS_RUST)";
#else
    expect_example_runs(TAD_AOT_RUST_EXAMPLE, "rust");
#endif
}

}  // namespace
