// Features of forward files (src/retrieve/features.h): what each group holds for known kernels, the
// guessed bindings, and that the same text always gives the same features.
#include <gtest/gtest.h>

#include "frontend/parser.h"
#include "retrieve/embed.h"
#include "retrieve/features.h"
#include "retrieve/guess.h"

namespace tad::retrieve {
namespace {

frontend::KernelFile load(const std::string &rel) {
    return frontend::analyze(frontend::parse_file(std::string(TAD_SOURCE_DIR) + "/" + rel));
}

frontend::KernelFile from_text(const std::string &text) {
    return frontend::analyze(frontend::parse_source("t.py", text));
}

bool has(const std::map<std::string, double> &g, const std::string &name) { return g.count(name) != 0; }

TEST(Subtokens, SplitsSnakeCamelAndDigits) {
    EXPECT_EQ(subtokens("_layernorm_fwd"), (std::vector<std::string>{"layernorm", "fwd"}));
    EXPECT_EQ(subtokens("BLOCK_SIZE_M"), (std::vector<std::string>{"block", "size"}));
    EXPECT_EQ(subtokens("dxHat2"), (std::vector<std::string>{"dx", "hat"}));
    EXPECT_EQ(subtokens("x"), std::vector<std::string>{});
    EXPECT_EQ(subtokens("stride_am"), (std::vector<std::string>{"stride", "am"}));
}

TEST(Features, LayerNormExample) {
    Features f = extract(load("examples/layernorm.py"));
    EXPECT_EQ(f.lowered, std::vector<std::string>{"_layernorm_fwd"});
    EXPECT_TRUE(f.notes.empty());
    EXPECT_EQ(f.count("reductions"), 2);
    EXPECT_EQ(f.count("loads"), 3);
    EXPECT_EQ(f.count("stores"), 3);
    EXPECT_EQ(f.count("loops"), 0);
    EXPECT_EQ(f.count("kernels"), 1);
    EXPECT_EQ(f.count("grad_inputs"), 3);
    EXPECT_EQ(f.count("constexprs"), 1);
    const auto &ir = f.group(Group::Ir);
    EXPECT_TRUE(has(ir, "ir:reduce_sum"));
    EXPECT_TRUE(has(ir, "ir:mul>reduce_sum")) << "xc * xc summed: the variance";
    EXPECT_TRUE(has(ir, "ir:sqrt"));
    EXPECT_TRUE(has(f.group(Group::Ast), "ast:Call:sum"));
    EXPECT_TRUE(has(f.group(Group::Ident), "id:rstd"));
    EXPECT_TRUE(has(f.group(Group::Ident), "id:layernorm"));
    EXPECT_TRUE(has(f.group(Group::Ident), "id:triton")) << "a module used in the code";
    EXPECT_FALSE(has(f.group(Group::Ident), "id:language")) << "imports are left out";
}

TEST(Features, MatmulLoopAndDot) {
    Features f = extract(load("dataset/matmul.py"));
    EXPECT_EQ(f.count("dots"), 1);
    EXPECT_EQ(f.count("loops"), 1);
    EXPECT_EQ(f.count("loop_depth"), 1);
    EXPECT_EQ(f.count("program_axes"), 2);
    EXPECT_TRUE(has(f.group(Group::Ir), "ir:loop/dot"));
}

TEST(Features, SameTextSameFeatures) {
    Features a = extract(load("dataset/flash_attention.py")), b = extract(load("dataset/flash_attention.py"));
    for (int g = 0; g < kGroups; ++g) EXPECT_EQ(a.groups[g], b.groups[g]);
    Idf idf;
    idf.add(a);
    EXPECT_EQ(embed(a, idf), embed(b, idf));
}

const char kUnlowerable[] = R"(import tad
import triton
import triton.language as tl

@triton.jit
def _k(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(Y + offs, tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1))

@tad.autodiff(grad_inputs=("x",))
def stub(x, y):
    _k[(1,)](x, y, x.numel(), BLOCK=64)
    return y
)";

TEST(Features, KernelThatDoesNotLowerKeepsAstFeatures) {
    Features f = extract(from_text(kUnlowerable));
    EXPECT_TRUE(f.lowered.empty());
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_EQ(f.notes[0].rfind("_k: not lowered: t.py:9:", 0), 0u) << f.notes[0];
    EXPECT_TRUE(f.group(Group::Ir).empty());
    EXPECT_TRUE(has(f.group(Group::Ast), "ast:Call:inline_asm_elementwise"));
    EXPECT_EQ(f.count("loads"), 1);
}

const char kPointers[] = R"(import tad
import triton
import triton.language as tl

@triton.jit
def _row_ptr(Base, row, stride):
    return Base + row * stride

@triton.jit
def _k(X, Y, W, n, stride, scale, ACT: tl.constexpr, BLOCK: tl.constexpr, FLAG: tl.constexpr = 1):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    xp = _row_ptr(X, row, stride)
    x = tl.load(xp + cols, mask=cols < n)
    w = tl.load(tl.where(cols < n, W + cols, W))
    out = Y + row * stride
    tl.store(out + cols, (x * w * scale).to(Y.dtype.element_ty), mask=cols < n)

@tad.autodiff(grad_inputs=("x",))
def stub(x, w, act):
    y = x.clone()
    _k[(4,)](x, y, w, 8, x.stride(0), 0.5, act, BLOCK=32)
    return y
)";

TEST(Guess, PointersFromAddressesConstexprsFromLiterals) {
    frontend::KernelFile kf = from_text(kPointers);
    EXPECT_EQ(pointer_params(kf, "_k"), (std::vector<std::string>{"X", "Y", "W"}));
    EXPECT_EQ(pointer_params(kf, "_row_ptr"), std::vector<std::string>{"Base"});
    std::map<std::string, frontend::ArgBinding> by_name;
    for (const auto &b : guess_bindings(kf, "_k")) by_name[b.name] = b;
    EXPECT_EQ(by_name.at("X").kind, frontend::ArgBinding::Tensor);
    EXPECT_EQ(by_name.at("n").kind, frontend::ArgBinding::Int);
    EXPECT_EQ(by_name.at("scale").kind, frontend::ArgBinding::Float) << "the launch passes a float literal";
    EXPECT_EQ(by_name.at("ACT").kind, frontend::ArgBinding::Int) << "a variable: the guess";
    EXPECT_EQ(by_name.at("ACT").ival, kGuessedConstexpr);
    EXPECT_EQ(by_name.at("BLOCK").ival, 32) << "the launch's literal";
    EXPECT_EQ(by_name.count("FLAG"), 0u) << "left to its default";
    EXPECT_EQ(extract(kf).lowered, std::vector<std::string>{"_k"});
}

}  // namespace
}  // namespace tad::retrieve
