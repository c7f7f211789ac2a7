// Which constexprs a lowered kernel is specialized on (ir::Function::specialized): every one whose
// value the IR depends on other than through a spelling the emitter prints by name, and none that
// stays symbolic. A constexpr missing here gives a backward that silently runs for other values;
// one too many makes the module refuse shapes it could serve.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower_source.h"

using namespace tad;
using tad::test::lower_body;

namespace {

using K = frontend::ArgBinding::Kind;

frontend::ArgBinding bind(K kind, const char *name, int64_t i = 0) {
    frontend::ArgBinding b;
    b.kind = kind;
    b.name = name;
    b.ival = i;
    return b;
}

frontend::ArgBinding real(const char *name, double v) {
    frontend::ArgBinding b = bind(K::Float, name);
    b.fval = v;
    return b;
}

frontend::ArgBinding str(const char *name, const std::string &v) {
    frontend::ArgBinding b = bind(K::Str, name);
    b.sval = v;
    return b;
}

std::string joined(const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v) s += (s.empty() ? "" : ",") + x;
    return s;
}

// The specializations of kernel `k` in `body`, comma-separated in signature order.
std::string specialized(const std::string &body, const std::vector<frontend::ArgBinding> &args) {
    return joined(lower_body(body, args).specialized);
}

const char *kHelperSwitch = R"(
@triton.jit
def _act(h, ACTIVATION: tl.constexpr):
    if ACTIVATION == "tanh":
        h = tl.sigmoid(2.0 * h) * 2.0 - 1.0
    elif ACTIVATION == "softplus":
        h = tl.log(1.0 + tl.exp(h))
    elif ACTIVATION == "relu":
        h = tl.maximum(h, 0.0)
    return h


@triton.jit
def _outer(h, A: tl.constexpr):
    return _act(h, A)


@triton.jit
def k(X, ACT: tl.constexpr, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(X + offs, _outer(tl.load(X + offs), ACT))
)";

}  // namespace

TEST(Specialize, StaticIfInANestedHelperRecordsTheKernelsConstexpr) {
    for (const char *act : {"tanh", "softplus", "relu", "none"}) {
        ir::Function f = lower_body(kHelperSwitch, {bind(K::Tensor, "X"), str("ACT", act), bind(K::Int, "B", 16)});
        EXPECT_EQ(joined(f.specialized), "ACT") << act;
    }
    ir::Function tanh = lower_body(kHelperSwitch, {bind(K::Tensor, "X"), str("ACT", "tanh"), bind(K::Int, "B", 16)});
    ir::Function relu = lower_body(kHelperSwitch, {bind(K::Tensor, "X"), str("ACT", "relu"), bind(K::Int, "B", 16)});
    EXPECT_NE(ir::print(tanh), ir::print(relu));
}

TEST(Specialize, BoundaryCheckInAHelper) {
    const char *body = R"(
@triton.jit
def _load_row(ptr, cols, N: tl.constexpr, BLOCK: tl.constexpr):
    if N % BLOCK == 0:
        x = tl.load(ptr + cols)
    else:
        x = tl.load(ptr + cols, mask=cols < N, other=0.0)
    return x


@triton.jit
def k(X, N: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(X + cols, _load_row(X, cols, N, BLOCK) * 2.0)
)";
    EXPECT_EQ(specialized(body, {bind(K::Tensor, "X"), bind(K::Int, "N", 16), bind(K::Int, "BLOCK", 16)}), "N,BLOCK");
}

TEST(Specialize, SizesThatStaySymbolicAreNotRecorded) {
    const char *body = R"(
@triton.jit
def k(X, n, D: tl.constexpr, BD: tl.constexpr, BLOCK: tl.constexpr, EPS: tl.constexpr, S: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    half = tl.arange(0, BLOCK // 2)
    shifted = tl.arange(S, S + BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32) + tl.full((), EPS, tl.float32)
    for b in range(tl.cdiv(D, BD)):
        acc += tl.load(X + b * BD + cols, mask=b * BD + cols < n, other=0.0)
    for start in range(0, n, BLOCK):
        acc += tl.load(X + start + cols, mask=start + cols < n, other=0.0) * (EPS * 2.0) * (D % BD + 1)
    tl.store(X + cols, acc + shifted.to(tl.float32))
    tl.store(X + half, tl.zeros((BLOCK // 2,), tl.float32) + BLOCK // 4)
)";
    ir::Function f =
        lower_body(body, {bind(K::Tensor, "X"), bind(K::Int, "n", 100), bind(K::Int, "D", 20), bind(K::Int, "BD", 8),
                          bind(K::Int, "BLOCK", 16), real("EPS", 0.25), bind(K::Int, "S", 0)});
    EXPECT_EQ(joined(f.specialized), "");
    std::string ir = ir::print(f);
    EXPECT_NE(ir.find("\"(D + (BD - 1)) // BD\""), std::string::npos) << ir;
    EXPECT_NE(ir.find("EPS * 2.0"), std::string::npos) << ir;
    EXPECT_NE(ir.find("\"(D % BD) + 1\""), std::string::npos) << ir;
}

TEST(Specialize, ValuesFoldedWithoutASpellingAreRecorded) {
    const char *head = R"(
@triton.jit
def k(X, A: tl.constexpr, B: tl.constexpr, EPS: tl.constexpr, W: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
)";
    std::vector<frontend::ArgBinding> args = {bind(K::Tensor, "X"), bind(K::Int, "A", 3), bind(K::Int, "B", 5),
                                              real("EPS", 0.5),     bind(K::Int, "W", 2), bind(K::Int, "BLOCK", 16)};
    auto with = [&](const std::string &line) { return specialized(std::string(head) + "    " + line + "\n", args); };
    EXPECT_EQ(with("tl.store(X + offs, x * min(A, B))"), "A,B");
    EXPECT_EQ(with("tl.store(X + offs, x * max(A, 4))"), "A");
    EXPECT_EQ(with("tl.store(X + offs, x * (A > B))"), "A,B");
    EXPECT_EQ(with("tl.store(X + offs, x * EPS ** 2)"), "EPS");
    EXPECT_EQ(with("tl.store(X + offs, x * float(A))"), "");
    EXPECT_EQ(with("tl.store(X + offs, x * int(EPS))"), "EPS");
    EXPECT_EQ(with("tl.store(X + tl.arange(0, min(BLOCK, 64)), x)"), "BLOCK");
    EXPECT_EQ(with("tl.store(X + offs, x * (1 if A > 2 else 2))"), "A");
    EXPECT_EQ(with("tl.store(X + offs, x * (A, B)[W - 2])"), "W");
    EXPECT_EQ(with("tl.store(X + offs, x * (2.0 if A in (B, 7) else 1.0))"), "A,B");
    EXPECT_EQ(with("tl.store(X + offs, tl.where(offs < A % B, x, x * (EPS * B)))"), "");
}

TEST(Specialize, StaticRangeTripCountIsRecorded) {
    const char *body = R"(
@triton.jit
def k(X, W: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    for i in tl.static_range(W):
        x = x * x
    tl.store(X + offs, x)
)";
    EXPECT_EQ(specialized(body, {bind(K::Tensor, "X"), bind(K::Int, "W", 2), bind(K::Int, "BLOCK", 16)}), "W");
}

TEST(Specialize, ValuesUsedAsArgumentsAreRecorded) {
    const char *body = R"(
@triton.jit
def k(X, AX: tl.constexpr, KEEP: tl.constexpr, P: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    x = tl.load(X + r[:, None] * BN + c[None, :])
    s = tl.sum(x, axis=AX, keep_dims=KEEP)
    tl.store(X + tl.program_id(P) + r[:, None] * BN + c[None, :], x + s)
)";
    EXPECT_EQ(specialized(body, {bind(K::Tensor, "X"), bind(K::Int, "AX", 1), bind(K::Bool, "KEEP", 1),
                                 bind(K::Int, "P", 0), bind(K::Int, "BM", 16), bind(K::Int, "BN", 8)}),
              "AX,KEEP,P");
}

TEST(Specialize, ArgumentBoundToNoneBecomesAKeyedConstexpr) {
    const char *body = R"(
@triton.jit
def k(X, B, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if B is not None:
        x = x + tl.load(B + offs)
    tl.store(X + offs, x)
)";
    ir::Function f = lower_body(body, {bind(K::Tensor, "X"), bind(K::None, "B"), bind(K::Int, "BLOCK", 16)});
    EXPECT_EQ(joined(f.specialized), "B");
    ASSERT_EQ(f.constexprs.size(), 2u);
    EXPECT_EQ(f.constexprs[1].name, "B");
    EXPECT_EQ(f.constexprs[1].literal, "None");
}

// Bound to a tensor (or a number), the argument is not None, as Triton folds the test: the function
// is specialized on the parameter itself (the module checks at launch that it is not None), it takes
// the branch, and no constexpr is added.
TEST(Specialize, ArgumentNotNoneSpecializesOnTheParameter) {
    const char *body = R"(
@triton.jit
def k(X, B, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if B is not None:
        x = x + tl.load(B + offs)
    if s is None:
        x = x * 2.0
    y = x + 1.0
    if y is not None:
        x = x * 3.0
    tl.store(X + offs, x)
)";
    ir::Function f =
        lower_body(body, {bind(K::Tensor, "X"), bind(K::Tensor, "B"), bind(K::Float, "s"), bind(K::Int, "BLOCK", 16)});
    EXPECT_EQ(joined(f.specialized), "B,s");
    ASSERT_EQ(f.constexprs.size(), 1u);
    int loads = 0, muls = 0;
    for (const ir::Op &op : f.ops) {
        loads += op.kind == ir::OpKind::Load;
        muls += op.kind == ir::OpKind::Mul;
    }
    EXPECT_EQ(loads, 2) << ir::print(f);  // B's branch taken
    EXPECT_EQ(muls, 1) << ir::print(f);  // s's not; a computed value is never None
}

TEST(Specialize, RecordedInSignatureOrder) {
    const char *body = R"(
@triton.jit
def k(X, A: tl.constexpr, B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if B > 1:
        x = x * 2.0
    if A > 1:
        x = x * 3.0
    tl.store(X + offs, x)
)";
    EXPECT_EQ(specialized(
                  body, {bind(K::Tensor, "X"), bind(K::Int, "A", 2), bind(K::Int, "B", 2), bind(K::Int, "BLOCK", 16)}),
              "A,B");
}

// What is recorded never depends on a constexpr's value, only on how it is used, so that every
// trace of a kernel records the same constexprs: a start of 0 is still spelled by its name.
TEST(Specialize, ConstexprZeroStartStaysSymbolic) {
    const char *body = R"(
@triton.jit
def k(X, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(S, S + BLOCK)
    tl.store(X + offs, tl.load(X + offs) * 2.0)
)";
    for (int64_t s : {0, 4}) {
        ir::Function f = lower_body(body, {bind(K::Tensor, "X"), bind(K::Int, "S", s), bind(K::Int, "BLOCK", 16)});
        EXPECT_EQ(joined(f.specialized), "") << s;
        EXPECT_NE(ir::print(f).find("\"(S + BLOCK) - S\""), std::string::npos) << ir::print(f);
    }
}

TEST(Specialize, StringLiteralsStayOnOneLine) {
    const char *body = R"(
@triton.jit
def k(X, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if MODE == "a":
        x = x * 2.0
    tl.store(X + offs, x)
)";
    ir::Function f =
        lower_body(body, {bind(K::Tensor, "X"), str("MODE", "it's\na\tb\\c\x01"), bind(K::Int, "BLOCK", 16)});
    EXPECT_EQ(joined(f.specialized), "MODE");
    EXPECT_EQ(f.constexprs[0].literal, "\"it's\\na\\tb\\\\c\\x01\"");  // as Python's repr() writes it
}
