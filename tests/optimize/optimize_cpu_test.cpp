// The optimizer's loop (tad_generate with backend "llm") against the scripted server, on the CPU
// tier (no GPU here): every reply a case of its own, and what the loop must do with it.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "optimize_support.h"

using namespace tad;
using namespace tad::test;

namespace {

// The baseline and one candidate: the report's two entries.
JsonRef candidate(const Json &report, size_t i) { return report.at("candidates")[i]; }

TEST(OptimizeCpu, ACorrectModuleIsVerifiedAndKeptButNotClaimedFaster) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = 2.0 * t2\n");
    FakeLlm server(replies({reply(fenced("python", module))}));
    std::string best;
    ASSERT_EQ(run.optimize(server, {}, &best), TAD_OK) << tad_error_last();
    Json r = run.report();
    EXPECT_EQ(r.at("mode").str(), "cpu");
    EXPECT_FALSE(r.at("no_gpu").is_null());
    ASSERT_EQ(r.at("candidates").size(), 2u) << r.dump(true);
    JsonRef base = candidate(r, 0), c = candidate(r, 1);
    EXPECT_EQ(base.at("origin").str(), "compiler");
    EXPECT_EQ(base.at("verdict").str(), "baseline");
    EXPECT_EQ(c.at("origin").str(), "model");
    EXPECT_EQ(c.at("form").str(), "module");
    EXPECT_EQ(c.at("verdict").str(), "verified") << c.dump();
    EXPECT_EQ(c.at("reason").str(), "passed on the CPU interpreter; not timed (no GPU), so not made current");
    EXPECT_TRUE(c.at("bwd_ms").is_null());  // nothing timed, nothing claimed
    // The baseline stays best and current; the candidate is a snapshot with its passing report.
    EXPECT_EQ(best, base.at("id").str());
    EXPECT_EQ(r.at("best").str(), best);
    EXPECT_EQ(run.current(), best);
    Json snaps = run.snapshots();
    JsonRef s = run.snapshot(snaps, c.at("id").str());
    ASSERT_TRUE(s.valid());
    EXPECT_EQ(s.at("backend").str(), "llm");
    EXPECT_EQ(s.at("parent").str(), best);
    EXPECT_TRUE(s.at("passed").boolean());
    // The model saw the forward and the compiler's module, and the key went to the server.
    std::vector<Json> seen = server.requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].at("path").str(), "/v1/chat/completions");
    EXPECT_EQ(seen[0].at("headers").at("Authorization").str(), std::string("Bearer ") + kKey);
    const std::string prompt = seen[0].at("body").at("messages")[1].at("content").str();
    EXPECT_NE(prompt.find("def _square(X, Y, n, BLOCK: tl.constexpr):"), std::string::npos);
    EXPECT_NE(prompt.find("def _square_bwd("), std::string::npos);
    EXPECT_NE(prompt.find("- `def forward(*args, **kwargs)`"), std::string::npos);
    const std::string md = run.markdown();
    EXPECT_NE(md.find("| 1 | 1 | model | " + c.at("id").str() + " | module | verified |"), std::string::npos) << md;
    EXPECT_NE(md.find("certified on the CPU interpreter only"), std::string::npos);
}

// The nearest dataset entries with a backward are shown to the model, once per run: the entry
// without one and the forward itself (an entry too) are passed over.
TEST(OptimizeCpu, TheNearestPairsWithABackwardAreInThePrompt) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    run.add_entry("cube", replaced(square_forward(), "offs, x * x,", "offs, x * x * x,"),
                  "HAND-WRITTEN CUBE BACKWARD\n");
    run.add_entry("negate", replaced(square_forward(), "offs, x * x,", "offs, -x,"));
    FakeLlm server(replies({reply("No change."), reply("Still none.")}));
    ASSERT_EQ(run.optimize(server, [](tad_generate_options &g) { g.max_iterations = 2; }), TAD_OK) << tad_error_last();
    const std::string cube = fs::join(run.dataset_dir(), "cube.py");
    EXPECT_EQ(run.report().at("retrieval").str(), "1 pair: " + cube);
    std::vector<Json> seen = server.requests();
    ASSERT_EQ(seen.size(), 2u);
    for (const Json &request : seen) {
        const std::string prompt = request.at("body").at("messages")[1].at("content").str();
        EXPECT_NE(prompt.find("## Known forward/backward pairs, most similar first\n\n### " + cube + " (similarity "),
                  std::string::npos)
            << prompt;
        EXPECT_NE(prompt.find("HAND-WRITTEN CUBE BACKWARD"), std::string::npos);
        EXPECT_EQ(prompt.find("negate.py"), std::string::npos);
    }
    EXPECT_NE(run.markdown().find("- retrieved examples: 1 pair: " + cube + "\n"), std::string::npos);
}

TEST(OptimizeCpu, WithANegativeTopkThePromptHasNoPairs) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    run.add_entry("cube", replaced(square_forward(), "offs, x * x,", "offs, x * x * x,"),
                  "HAND-WRITTEN CUBE BACKWARD\n");
    FakeLlm server(replies({reply("No change.")}));
    ASSERT_EQ(run.optimize(server, [](tad_generate_options &g) { g.topk = -1; }), TAD_OK) << tad_error_last();
    EXPECT_EQ(run.report().at("retrieval").str(), "off");
    const std::string prompt = server.requests()[0].at("body").at("messages")[1].at("content").str();
    EXPECT_EQ(prompt.find("Known forward/backward pairs"), std::string::npos);
}

TEST(OptimizeCpu, APatchOverTheAnthropicProtocolApplies) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    ASSERT_NE(run.compiler_module().find(kGradContext), std::string::npos);
    const std::string patch =
        "--- a/backward.py\n+++ b/backward.py\n@@ -660,3 +660,3 @@\n     t2 = dY * x\n"
        "-    dx = t2 + t2\n+    dx = 2.0 * t2\n     tl.store(DX + offs, dx, mask=t0)\n";
    FakeLlm server(replies({reply(fenced("diff", patch))}));
    ASSERT_EQ(run.optimize(server, [](tad_generate_options &g) { g.provider = "anthropic"; }), TAD_OK)
        << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("form").str(), "patch");
    EXPECT_EQ(c.at("verdict").str(), "verified") << c.dump();
    char *source = nullptr;
    ASSERT_EQ(tad_candidate_source(run.session(), c.at("id").str().c_str(), &source), TAD_OK);
    EXPECT_NE(std::string(source).find("    dx = 2.0 * t2\n"), std::string::npos);
    tad_string_free(source);
    std::vector<Json> seen = server.requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].at("path").str(), "/v1/messages");
    EXPECT_EQ(seen[0].at("headers").at("x-api-key").str(), kKey);
}

TEST(OptimizeCpu, AWrongGradientIsRejectedAndRolledBack) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = t2 + t2 + t2\n");
    FakeLlm server(replies({reply(fenced("python", module))}));
    std::string best;
    ASSERT_EQ(run.optimize(server, {}, &best), TAD_OK) << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "rejected");
    const std::string reason = c.at("reason").str();
    EXPECT_EQ(reason.rfind("verification failed (1 of 1 cases): n=100 float64: ", 0), 0u) << reason;
    EXPECT_NE(reason.find("gradient of 'x'"), std::string::npos) << reason;
    EXPECT_EQ(run.current(), best);  // rolled back to the baseline after the trial
    Json snaps = run.snapshots();
    JsonRef s = run.snapshot(snaps, c.at("id").str());
    ASSERT_TRUE(s.valid());
    EXPECT_FALSE(s.at("passed").boolean());
}

TEST(OptimizeCpu, AModuleThatDoesNotParseIsKeptAndRejected) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = t2 + (t2\n");
    FakeLlm server(replies({reply(fenced("python", module))}));
    ASSERT_EQ(run.optimize(server), TAD_OK) << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "rejected");
    const std::string reason = c.at("reason").str();
    EXPECT_EQ(reason.rfind("the module does not pass tad's checks: syntax error: ", 0), 0u) << reason;
    EXPECT_NE(reason.find(" in kernel '_square_bwd' (line "), std::string::npos) << reason;
    Json snaps = run.snapshots();
    JsonRef s = run.snapshot(snaps, c.at("id").str());
    ASSERT_TRUE(s.valid());  // kept for the record, never run
    EXPECT_FALSE(s.at("has_verify").boolean());
}

TEST(OptimizeCpu, AModuleThatDropsPartOfTheInterfaceIsRejected) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module =
        replaced(run.compiler_module(),
                 "def jvp(*args, tangents=None, **kwargs):", "def jvp(*args, tangents=None, scale=1.0, **kwargs):");
    FakeLlm server(replies({reply(fenced("python", module))}));
    ASSERT_EQ(run.optimize(server), TAD_OK) << tad_error_last();
    Json r = run.report();
    EXPECT_EQ(candidate(r, 1).at("reason").str(),
              "the module's interface changed: it changes 'def jvp(*args, tangents=..., **kwargs)' to "
              "'def jvp(*args, tangents=..., scale=..., **kwargs)'");
}

TEST(OptimizeCpu, MalformedJsonFailsTheRequestAndNothingElse) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    FakeLlm server(replies({Json::parse(R"({"raw": "{\"choices\": [{\"message\": "})", "reply")}));
    std::string best;
    ASSERT_EQ(run.optimize(server, {}, &best), TAD_OK) << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "failed");
    EXPECT_EQ(c.at("reason").str().rfind("the request failed: malformed response: not JSON (", 0), 0u)
        << c.at("reason").str();
    EXPECT_TRUE(c.at("id").is_null());
    EXPECT_EQ(c.at("request").at("attempts").integer(), 1);  // not retried
    EXPECT_EQ(run.snapshots().size(), 1u);  // the baseline alone
    EXPECT_EQ(run.current(), best);
}

// The 429's body echoes the key, as some proxies do: it must not reach any file.
TEST(OptimizeCpu, RateLimitThenSuccessIsRetriedAndTheKeyIsInNoFile) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = 2.0 * t2\n");
    Json limited = Json::parse(R"({"status": 429, "headers": {"Retry-After": "0"}})", "reply");
    limited.set("error", std::string("rate limit for key ") + kKey);
    FakeLlm server(replies({std::move(limited), reply(fenced("python", module))}));
    ASSERT_EQ(run.optimize(server), TAD_OK) << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "verified") << c.dump();
    EXPECT_EQ(c.at("request").at("attempts").integer(), 2);
    EXPECT_EQ(c.at("request").at("retries").integer(), 1);
    EXPECT_EQ(r.at("retries").integer(), 1);
    EXPECT_EQ(r.at("requests").integer(), 2);
    EXPECT_EQ(server.requests().size(), 2u);
    const std::string written = run.all_written();
    EXPECT_EQ(written.find(kKey), std::string::npos);
    EXPECT_NE(written.find("rate limit for key [REDACTED]"), std::string::npos);
    const std::string dir = r.at("run_dir").str() + "/requests/";
    Json request = Json::parse(fs::read_file(dir + "0001-request.json"), "request log");
    EXPECT_EQ(request.at("headers").at("Authorization").str(), "[REDACTED]");
    EXPECT_EQ(request.at("body").at("model").str(), "fake-model");
    Json response = Json::parse(fs::read_file(dir + "0001-response.json"), "response log");
    EXPECT_EQ(response.at("attempts").size(), 2u);
    EXPECT_EQ(response.at("attempts")[0].at("http_status").integer(), 429);
}

TEST(OptimizeCpu, ATimeoutFailsTheRequest) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    FakeLlm server(replies({Json::parse(R"({"text": "too late", "delay_s": 4})", "reply")}));
    ASSERT_EQ(run.optimize(server,
                           [](tad_generate_options &g) {
                               g.request_timeout_s = 1;
                               g.max_retries = -1;
                           }),
              TAD_OK)
        << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "failed");
    EXPECT_NE(c.at("reason").str().find(": timed out ("), std::string::npos) << c.at("reason").str();
    EXPECT_EQ(c.at("request").at("attempts").integer(), 1);
    EXPECT_LT(c.at("request").at("seconds").num(), 3.5);
}

TEST(OptimizeCpu, ATruncatedBodyIsRetried) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string module = replaced(run.compiler_module(), kGradLine, "    dx = 2.0 * t2\n");
    FakeLlm server(
        replies({Json::parse(R"({"text": "cut short", "truncate": true})", "reply"), reply(fenced("python", module))}));
    ASSERT_EQ(run.optimize(server), TAD_OK) << tad_error_last();
    Json r = run.report();
    JsonRef c = candidate(r, 1);
    EXPECT_EQ(c.at("verdict").str(), "verified") << c.dump();
    EXPECT_EQ(c.at("request").at("retries").integer(), 1);
}

// The server reports what its requests used; once the budget cannot hold another request, none is
// sent and the run stops, having spent no more than the budget.
TEST(OptimizeCpu, TheTokenBudgetStopsTheRunWithinIt) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    FakeLlm server(replies({reply("No change needed.", R"({"usage": [9999400, 500]})"), reply("never asked for")}));
    ASSERT_EQ(run.optimize(server,
                           [](tad_generate_options &g) {
                               g.max_iterations = 3;
                               g.max_tokens = 10000000;
                               g.usd_per_mtok_input = 1;
                               g.usd_per_mtok_output = 2;
                           }),
              TAD_OK)
        << tad_error_last();
    Json r = run.report();
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(r.at("stopped").str().rfind("token budget exhausted: 9999900 of 10000000 tokens spent", 0), 0u)
        << r.at("stopped").str();
    EXPECT_EQ(r.at("rounds").integer(), 2);
    EXPECT_EQ(r.at("input_tokens").integer() + r.at("output_tokens").integer(), 9999900);
    EXPECT_NEAR(r.at("cost_usd").num(), 9.9994 + 0.001, 1e-9);
    EXPECT_EQ(candidate(r, 1).at("reason").str(),
              "the reply holds no code block (expected a ```python module or a ```diff patch)");
}

// Two requests at once: each reply is handled as it comes, and each module is a snapshot.
TEST(OptimizeCpu, ParallelCandidatesAreEachCertified) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    const std::string base = run.compiler_module();
    FakeLlm server(replies({reply(fenced("python", replaced(base, kGradLine, "    dx = 2.0 * t2\n"))),
                            reply(fenced("python", replaced(base, kGradLine, "    dx = t2\n")))}));
    ASSERT_EQ(run.optimize(server, [](tad_generate_options &g) { g.parallel = 2; }), TAD_OK) << tad_error_last();
    Json r = run.report();
    ASSERT_EQ(r.at("candidates").size(), 3u);
    std::multiset<std::string> verdicts{candidate(r, 1).at("verdict").str(), candidate(r, 2).at("verdict").str()};
    EXPECT_EQ(verdicts, (std::multiset<std::string>{"rejected", "verified"}));
    EXPECT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(run.snapshots().size(), 3u);
}

// Where the compiler refuses the kernel, the model writes the first backward; verified, it becomes
// current, though nothing was timed (there was nothing verified to be faster than).
// What a model might write for it: the forward kernel, a backward kernel, an autograd.Function.
constexpr char kPickModule[] = R"(import torch
import triton
import triton.language as tl


@triton.jit
def pick(A, B, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(tl.where(offs < n // 2, A + offs, B + offs), mask=mask)
    tl.store(Y + offs, v * v, mask=mask)


@triton.jit
def pick_bwd(A, B, G, DA, DB, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    first = offs < n // 2
    g = tl.load(G + offs, mask=mask, other=0.0)
    a = tl.load(A + offs, mask=mask & first, other=0.0)
    b = tl.load(B + offs, mask=mask & (offs >= n // 2), other=0.0)
    tl.store(DA + offs, tl.where(first, 2.0 * a * g, 0.0), mask=mask)
    tl.store(DB + offs, tl.where(first, 0.0, 2.0 * b * g), mask=mask)


class _Pick(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        y = torch.empty_like(a)
        n = a.numel()
        pick[(triton.cdiv(n, 64),)](a, b, y, n, BLOCK=64)
        ctx.save_for_backward(a, b)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        g = g.contiguous()
        da = torch.empty_like(a)
        db = torch.empty_like(b)
        n = a.numel()
        pick_bwd[(triton.cdiv(n, 64),)](a, b, g, da, db, n, BLOCK=64)
        return da, db


GRAD_INPUTS = ("a", "b")


def forward(*args, **kwargs):
    return _Pick.apply(*args, **kwargs)
)";

TEST(OptimizeCpu, WhereTheCompilerRefusesTheModelWritesTheFirstBackward) {
    REQUIRE_TORCH();
    OptimizeRun run(source_file("tests/pipeline/data/pointers/where_two_buffers.py"), "pick.py");
    FakeLlm server(replies({reply(fenced("python", kPickModule))}));
    std::string best;
    ASSERT_EQ(run.optimize(server, {}, &best), TAD_OK) << tad_error_last();
    Json r = run.report();
    EXPECT_NE(r.at("compiler_refusal").str().find("unsupported construct 'load' through a pointer computed by 'where'"),
              std::string::npos);
    EXPECT_TRUE(r.at("baseline").is_null());
    ASSERT_EQ(r.at("candidates").size(), 1u);
    JsonRef c = candidate(r, 0);
    EXPECT_EQ(c.at("verdict").str(), "accepted") << c.dump();
    EXPECT_EQ(c.at("reason").str(), "the first verified backward (not timed: no GPU)");
    EXPECT_EQ(best, c.at("id").str());
    EXPECT_EQ(run.current(), best);
    const std::string prompt = server.requests()[0].at("body").at("messages")[1].at("content").str();
    EXPECT_NE(prompt.find("Write the backward module for the stub `pick_stub`"), std::string::npos);
}

TEST(OptimizeCpu, WhereTheCompilerRefusesAndNothingPassesTheCallFails) {
    REQUIRE_TORCH();
    OptimizeRun run(source_file("tests/pipeline/data/pointers/where_two_buffers.py"), "pick.py");
    FakeLlm server(replies({reply("I would rather not.")}));
    ASSERT_EQ(run.optimize(server), TAD_ERR_UNSUPPORTED);
    const std::string message = tad_error_last();
    EXPECT_EQ(message.rfind("tad_generate: the compiler refused the kernel (", 0), 0u) << message;
    EXPECT_NE(message.find(") and no model candidate passed verification (report: "), std::string::npos) << message;
    EXPECT_EQ(run.current(), "");  // as before the call
    Json r = run.report();  // the report of the failed run
    EXPECT_EQ(r.at("stopped").str(), "max iterations (1)");
    EXPECT_TRUE(r.at("best").is_null());
}

TEST(OptimizeCpu, CancellingRestoresTheCurrentCandidate) {
    REQUIRE_TORCH();
    OptimizeRun run(square_forward());
    char *before = nullptr;
    ASSERT_EQ(tad_generate(run.session(), nullptr, &before), TAD_OK) << tad_error_last();
    const std::string before_id = before;
    tad_string_free(before);
    FakeLlm server(replies({Json::parse(R"({"text": "slow", "delay_s": 30})", "reply")}));
    run.cancel_when = "schedule: round 1: waiting for 1 reply";
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(run.optimize(server), TAD_ERR_CANCELLED);
    EXPECT_STREQ(tad_error_last(), "schedule: cancelled");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 25);
    EXPECT_EQ(run.current(), before_id);
    EXPECT_EQ(run.report().at("stopped").str(), "cancelled");
}

}  // namespace
