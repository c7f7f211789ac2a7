// Constructs of popular kernel libraries on the CPU tier (tests/pipeline/data/library/): names as
// they import and alias them, spellings they use, stubs that return None, views or a loss finished
// in torch, kernels that compute their own gradient in the forward, early-return stores, optional
// pointers tested against None, kernels chosen by size, launches inside the file's own Python
// functions, tl.randn.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_session.h"

using tad::test::count;
using tad::test::generate_and_verify;

namespace {

struct Case {
    const char *file;  // under tests/pipeline/data/library/
    std::vector<const char *> present;  // text the generated module has
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.file; }

class LibraryCpu : public ::testing::TestWithParam<Case> {};

// Both SWEEP entries match finite differences (and the dot-product test).
TEST_P(LibraryCpu, MatchesFiniteDifferences) {
    REQUIRE_TORCH();
    const Case &c = GetParam();
    const std::string src = generate_and_verify(std::string("tests/pipeline/data/library/") + c.file + ".py", "cpu", 2);
    for (const char *text : c.present) EXPECT_GE(count(src, text), 1) << text << "\n" << src;
}

INSTANTIATE_TEST_SUITE_P(
    Data, LibraryCpu,
    ::testing::Values(
        // libdevice by bare name, triton.language under another alias, aliases, annotated constexprs.
        Case{"imported_names", {"libdevice.tanh(", "tl.rsqrt(", "def _names_fwd_bwd_MODE_1("}},
        // .cast, tl.float32(x), constant tl.where, runtime min / max, hints, element_ty, triton.*.
        // (next_power_of_2 and the constant condition on it specialize on BLOCK.)
        Case{"spellings", {"tl.minimum(N, 5)", "tl.maximum(N - 3, row)", "def _spell_fwd_bwd_BLOCK_4("}},
        // A @staticmethod kernel, a class attribute, triton.jit(fn), a kernel chosen by an expression.
        Case{"kernel_objects",
             {"Ops.square = _Recorded(Ops.square)\n", "Table.trig = _Recorded(Table.trig)\n",
              "_exp = _Recorded(_exp)\n", "_cos = _Recorded(_cos)\n", "def _exp_py_bwd"}},
        // Derivatives given per parameter: softplus's backward multiplies by the given sigmoid.
        Case{"user_derivatives", {"dY * t1 * tl.sigmoid(x)"}},
        Case{"dtype_constexpr",
             {"def _scale_fwd_bwd_OUT_DTYPE_tl_float64(", "    if a[\"OUT_DTYPE\"] == tl.float32:\n"}},
        Case{"running_stats", {}},
        // Inline assembly in a helper, differentiated through its TAD_DIFFERENTIATE_AS definition.
        Case{"differentiate_as", {"TAD_DIFFERENTIATE_AS = {_fast_tanh: _tanh_definition}\n"}},
        Case{"returns_none", {"else None for o in "}}, Case{"views_and_strides", {}}, Case{"finished_in_torch", {}},
        Case{"fused_cross_entropy", {}}, Case{"early_return_store", {}},
        // Kernels chosen by size: one launch or two, each launch its own node in both sequences.
        Case{"by_size",
             {"_Node(\"_rms_single\", rms_normalize_launch0_backward", "_Node(\"_sumsq_partial\", ",
              "_Node(\"_rms_apply\", "}},
        // `if W is not None` on tensor arguments: specialized on their not being None.
        Case{"optional_pointers",
             {"def _affine_silu_fwd_bwd_W_not_None_B_not_None(",
              "if (\"W\" not in a or a[\"W\"] is not None) and (\"B\" not in a or a[\"B\"] is not None):"}},
        // The same with None for W in one entry and for B in another: a node per signature.
        Case{"optional_none",
             {"_Node(\"_affine_silu_fwd\", affine_silu_launch0_backward, (\"X\", \"W\", \"B\", \"Y\")",
              "_Node(\"_affine_silu_fwd\", affine_silu_launch1_backward, (\"X\", \"B\", \"Y\")",
              "_Node(\"_affine_silu_fwd\", affine_silu_launch2_backward, (\"X\", \"W\", \"Y\")"}},
        // Launches inside the file's Python functions, a kernel passed to a launcher as an argument.
        Case{"launch_helpers", {"_square = _Recorded(_square)\n", "_tanh = _Recorded(_tanh)\n"}},
        // Noise from tl.randn, replayed by the backward.
        Case{"gaussian_noise", {"tl.randn(seed, offs)"}}),
    [](const auto &info) { return std::string(info.param.file); });

}  // namespace
