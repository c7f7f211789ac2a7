// The LLM optimizer on the GPU tier, scripted: the compiler's baseline, then three rounds of one
// reply each from the scripted server (tests/common/fake_llm.h): a wrong gradient (rejected by
// verification), a real schedule change (the backward launched on 1024-element blocks instead of
// the forward's 64: verified, timed, and accepted if it is at least 2% faster), and a cosmetic
// change on top of that (verified, timed, not faster: rolled back). Without a GPU it prints
// "[SKIP] no GPU" and is reported as skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "../optimize/optimize_support.h"
#include "gpu_available.h"

using namespace tad;
using namespace tad::test;

namespace {

constexpr char kLaunch[] =
    "    _square_bwd[launches[0].grid](x, d_x, g0, a[\"n\"], BLOCK=a[\"BLOCK\"], **launches[0].options)\n";
constexpr char kWideLaunch[] =
    "    _square_bwd[(triton.cdiv(a[\"n\"], 1024),)](x, d_x, g0, a[\"n\"], BLOCK=1024, **launches[0].options)\n";

TEST(OptimizeGpu, RejectsAcceptsAndRollsBackOnMeasuredTimes) {
    REQUIRE_GPU();
    OptimizeRun run(square_forward(), "square.py", tad::gpu_test::python());
    const std::string base = run.compiler_module();
    const std::string wide = replaced(base, kLaunch, kWideLaunch);
    const std::string patch = std::string("--- a/backward.py\n+++ b/backward.py\n@@ -660,3 +660,3 @@\n") +
                              "     t2 = dY * x\n-    dx = t2 + t2\n+    dx = 2.0 * t2\n"
                              "     tl.store(DX + offs, dx, mask=t0)\n";
    FakeLlm server(replies({reply(fenced("python", replaced(base, kGradLine, "    dx = t2 + t2 + t2\n"))),
                            reply(fenced("python", wide)), reply(fenced("diff", patch))}));
    std::string best;
    ASSERT_EQ(run.optimize(
                  server,
                  [](tad_generate_options &g) {
                      g.max_iterations = 3;
                      g.dims_json = R"([{"n": 1048576}, {"n": 16777216}])";
                  },
                  &best),
              TAD_OK)
        << tad_error_last();
    const std::string md = run.markdown();
    std::printf("%s\n", md.c_str());
    if (const char *out = std::getenv("TAD_GPU_REPORT_DIR")) {
        std::ofstream(std::string(out) + "/optimize_square.md") << md;
        std::ofstream(std::string(out) + "/optimize_square.json") << run.report().dump(true);
    }
    Json r = run.report();
    EXPECT_EQ(r.at("mode").str(), "gpu");
    ASSERT_EQ(r.at("candidates").size(), 4u) << r.dump(true);
    JsonRef base_c = r.at("candidates")[0], wrong = r.at("candidates")[1], fast = r.at("candidates")[2],
            same = r.at("candidates")[3];
    EXPECT_EQ(base_c.at("verdict").str(), "baseline");
    EXPECT_TRUE(base_c.at("bwd_ms").is_number());
    EXPECT_EQ(wrong.at("verdict").str(), "rejected");
    EXPECT_EQ(wrong.at("reason").str().rfind("verification failed (", 0), 0u) << wrong.at("reason").str();
    // Every verified candidate is timed, and its verdict follows its measured speedup.
    for (JsonRef c : {fast, same}) {
        ASSERT_TRUE(c.at("speedup").is_number()) << c.dump();
        const bool won = c.at("speedup").num() >= 1.02;
        EXPECT_EQ(c.at("verdict").str(), won ? "accepted" : "rejected") << c.dump();
        if (!won) {
            EXPECT_EQ(c.at("reason").str().rfind("not faster: ", 0), 0u) << c.dump();
        }
    }
    // The wide launch is the schedule change that should win by far at 16M elements.
    EXPECT_EQ(fast.at("verdict").str(), "accepted") << fast.dump();
    EXPECT_EQ(r.at("best").str(), best);
    EXPECT_EQ(run.current(), best);
}

}  // namespace
