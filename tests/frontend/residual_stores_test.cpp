// The text insert_residual_stores() writes, exactly, and each refusal's message.
#include "frontend/residual_stores.h"

#include <gtest/gtest.h>

#include <string>

#include "frontend/parser.h"

using tad::frontend::analyze;
using tad::frontend::insert_residual_stores;
using tad::frontend::parse_source;
using tad::frontend::ResidualStore;

namespace {

const char *const kImport =
    "\n\n# ---- added by tad: stores of values the backward reads back (docs/saved-residuals.md) ----\n"
    "import triton.language as _tad_tl  # noqa: E402\n";

std::string file(const std::string &kernel) {
    return "import triton\nimport triton.language as tl\nimport tad\n\n\n" + kernel +
           "\n\n@tad.autodiff(grad_inputs=(\"x\",))\ndef f(x):\n    y = x.new_empty(x.shape[0])\n"
           "    _k[(x.shape[0],)](x, y, x.shape[1], BLOCK=64)\n    return y\n";
}

const char *const kKernel =
    "@triton.jit\n"
    "def _k(X, Y, n,\n"
    "       BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n"
    "    m = float(\"-inf\")\n"
    "    s = 0.0\n"
    "    for start in range(0, n, BLOCK):\n"
    "        x = tl.load(X + row * n + start + tl.arange(0, BLOCK))\n"
    "        m_new = tl.maximum(m, tl.max(x, axis=0))\n"
    "        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
    "        m = m_new\n"
    "    tl.store(Y + row, m + tl.log(s))\n";

std::string insert(const std::string &source, ResidualStore r, std::string *why) {
    return insert_residual_stores(analyze(parse_source("k.py", source)), {r}, why);
}

ResidualStore lse(int line = 12, int col = 5) {
    return {"_k", line, col, "m + _tad_tl.log(s)", "TAD_SAVED_0", {0}, {}};
}

TEST(ResidualStores, BeforeTheNextSimpleStatementAndAsTheLastParameter) {
    std::string why;
    std::string expected = file(kKernel);
    expected.replace(expected.find("BLOCK: tl.constexpr)"), 20, "BLOCK: tl.constexpr, TAD_SAVED_0)");
    expected.replace(expected.find("    tl.store(Y"), 4,
                     "    _tad_tl.store(TAD_SAVED_0 + _tad_tl.program_id(0), m + _tad_tl.log(s)); ");
    EXPECT_EQ(insert(file(kKernel), lse(), &why), expected + kImport) << why;
}

TEST(ResidualStores, OnALineOfItsOwnAfterALastLoopOrBeforeACompoundStatement) {
    std::string kernel = kKernel;
    kernel.replace(kernel.find("    tl.store(Y"), std::string::npos, "");
    std::string why;
    const std::string out = insert(file(kernel), lse(), &why);
    EXPECT_NE(out.find("        m = m_new\n    _tad_tl.store(TAD_SAVED_0 + _tad_tl.program_id(0), m + "
                       "_tad_tl.log(s))\n\n\n@tad.autodiff"),
              std::string::npos)
        << why << out;
    kernel = kKernel;
    kernel.replace(kernel.find("    tl.store(Y"), 4, "    if n > 0:\n        ");
    EXPECT_NE(insert(file(kernel), lse(), &why).find("m = m_new\n    _tad_tl.store(TAD_SAVED_0 + "), std::string::npos);
}

TEST(ResidualStores, LinearIdOverTheAxesReadAndADefaultAfterDefaults) {
    std::string kernel = kKernel;
    kernel.replace(kernel.find("BLOCK: tl.constexpr)"), 20, "BLOCK: tl.constexpr = 64)");
    ResidualStore r = lse();
    r.axes = {0, 2};
    std::string why;
    const std::string out = insert(file(kernel), r, &why);
    EXPECT_NE(out.find("BLOCK: tl.constexpr = 64, TAD_SAVED_0=None)"), std::string::npos) << why << out;
    EXPECT_NE(out.find("_tad_tl.store(TAD_SAVED_0 + _tad_tl.program_id(0) + _tad_tl.num_programs(0) * "
                       "_tad_tl.program_id(2), m + _tad_tl.log(s)); tl.store(Y"),
              std::string::npos)
        << out;
}

TEST(ResidualStores, ARowVectorSavedWholeAtItsLanes) {
    ResidualStore r = lse();
    r.param = "TAD_SAVED_0__BLOCK";
    r.dims = {"BLOCK"};
    std::string why;
    EXPECT_NE(insert(file(kKernel), r, &why)
                  .find("_tad_tl.store(TAD_SAVED_0__BLOCK + (_tad_tl.program_id(0)) * BLOCK + _tad_tl.arange(0, "
                        "BLOCK), m + _tad_tl.log(s)); tl.store(Y"),
              std::string::npos)
        << why;
    r.dims = {"BLOCK", "BLOCK"};
    EXPECT_EQ(insert(file(kKernel), r, &why), "");
    EXPECT_EQ(why, "k.py:12:5: a tile of more than one dim");
}

TEST(ResidualStores, Refusals) {
    std::string why;
    EXPECT_EQ(insert(file(kKernel), lse(11, 5), &why), "");
    EXPECT_EQ(why, "k.py:11:5: no loop directly in the body of kernel '_k'");
    std::string tuned = kKernel;
    tuned.insert(0, "@triton.autotune(configs=[], key=[\"n\"])\n");
    EXPECT_EQ(insert(file(tuned), lse(13, 5), &why), "");
    EXPECT_EQ(why, "kernel '_k' is wrapped in something other than triton.jit");
    std::string wrapped = std::string(kKernel) + "\n\n_k = triton.heuristics({\"B\": lambda a: 1})(_k)\n";
    EXPECT_EQ(insert(file(wrapped), lse(), &why), "");
    EXPECT_EQ(why, "kernel '_k' is wrapped in something other than triton.jit");
    std::string varargs = kKernel;
    varargs.replace(varargs.find("BLOCK: tl.constexpr)"), 20, "BLOCK: tl.constexpr, *rest)");
    EXPECT_EQ(insert(file(varargs), lse(), &why), "");
    EXPECT_EQ(why, "kernel '_k' takes *args, **kwargs or positional-only parameters");
    std::string posonly = kKernel;
    posonly.replace(posonly.find("BLOCK: tl.constexpr)"), 20, "BLOCK: tl.constexpr, /)");
    EXPECT_EQ(insert(file(posonly), lse(), &why), "");
    EXPECT_EQ(why, "kernel '_k' takes *args, **kwargs or positional-only parameters");
    std::string with_else = kKernel;
    with_else.replace(with_else.find("    tl.store(Y"), 4, "    else:\n        pass\n    ");
    EXPECT_EQ(insert(file(with_else), lse(), &why), "");
    EXPECT_EQ(why, "k.py:12:5: the loop has an else clause");
}

// A contraction whose accumulator is saved where its output is stored (lines 6 to 20).
const char *const kMatmul =
    "@triton.jit\n"
    "def _k(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):\n"
    "    pid_m = tl.program_id(0)\n"
    "    pid_n = tl.program_id(1)\n"
    "    rm = pid_m * BM + tl.arange(0, BM)\n"
    "    rn = pid_n * BN + tl.arange(0, BN)\n"
    "    acc = tl.zeros((BM, BN), dtype=tl.float32)\n"
    "    for k in range(0, K, BK):\n"
    "        ks = k + tl.arange(0, BK)\n"
    "        a = tl.load(A + rm[:, None] * K + ks[None, :])\n"
    "        b = tl.load(B + ks[:, None] * N + rn[None, :])\n"
    "        acc += tl.dot(a, b)\n"
    "    y = tl.erf(acc)\n"
    "    c_ptrs = C + rm[:, None] * N + rn[None, :]\n"
    "    tl.store(c_ptrs, y, mask=(rm[:, None] < M) & (rn[None, :] < N))\n";

ResidualStore accumulator() { return {"_k", 13, 5, "acc", "TAD_SAVED_0_LIKE_C", {}, {}, "C", 20, 5}; }

std::string with(std::string text, const std::string &from, const std::string &to) {
    return text.replace(text.find(from), from.size(), to);
}

TEST(ResidualStores, ATileSavedWhereTheOutputIsStored) {
    std::string why;
    std::string expected = with(file(kMatmul), "BK: tl.constexpr)", "BK: tl.constexpr, TAD_SAVED_0_LIKE_C)");
    expected = with(expected, "    y = tl.erf",
                    "    _tad_tl.store((TAD_SAVED_0_LIKE_C + rm[:, None] * N + rn[None, :]), acc, mask=(rm[:, None] < "
                    "M) & (rn[None, :] < N)); y = tl.erf");
    EXPECT_EQ(insert(file(kMatmul), accumulator(), &why), expected + kImport) << why;
}

TEST(ResidualStores, ATileSavedLikeATensorRefusals) {
    std::string why;
    const std::string twice = with(kMatmul, "    tl.store(c_ptrs", "    c_ptrs += 0\n    tl.store(c_ptrs");
    ResidualStore r = accumulator();
    r.store_line = 21;
    EXPECT_EQ(insert(file(twice), r, &why), "");
    EXPECT_EQ(why, "k.py:21:14: 'c_ptrs' is bound more than once, or not by an assignment at the kernel's top level");
    EXPECT_EQ(insert(file(with(kMatmul, "tl.store(c_ptrs,", "tl.store(c_ptrs + ks[:, None],")), accumulator(), &why),
              "");
    EXPECT_EQ(why, "k.py:20:23: 'ks' is bound more than once, or not by an assignment at the kernel's top level");
    EXPECT_EQ(insert(file(with(kMatmul, "tl.store(c_ptrs,", "tl.store(c_ptrs + tl.load(A),")), accumulator(), &why),
              "");
    EXPECT_EQ(why, "k.py:20:23: the store's expressions call tl.load");
    EXPECT_EQ(insert(file(with(kMatmul, "rn[None, :]\n    tl.store", "rn[None, :] + (C - C)\n    tl.store")),
                     accumulator(), &why),
              "");
    EXPECT_EQ(why, "k.py:20:5: the store's pointer reads 'C' other than once");
    EXPECT_EQ(insert(file(with(kMatmul, "mask=(rm[:, None] < M)", "boundary_check=(0, 1), mask=(rm[:, None] < M)")),
                     accumulator(), &why),
              "");
    EXPECT_EQ(why, "k.py:20:5: the store takes a boundary check (a block pointer)");
    r = accumulator();
    r.store_line = 19;
    EXPECT_EQ(insert(file(kMatmul), r, &why), "");
    EXPECT_EQ(why, "k.py:19:5: no tl.store statement at the top level of kernel '_k' after the loop");
}

}  // namespace
