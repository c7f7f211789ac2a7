// tad_interpret: one launch of a @triton.jit kernel of a source text on caller-owned float64
// buffers, the executor of the CPU tier's whole-stub check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tad.h"

namespace {

const char *kSource = R"(import triton
import triton.language as tl


@triton.jit
def scale_gather(X, IDX, Y, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = tl.load(IDX + offs, mask=mask, other=0)
    tl.store(Y + offs, alpha * tl.load(X + src, mask=mask), mask=mask)
)";

// X is buffer 0 from element 2 on (a view into the middle of its storage), IDX buffer 1 (an int32
// table), Y buffer 2.
std::string launch(const std::string &kernel, int programs) {
    return R"({"kernel": ")" + kernel + R"(", "grid": [)" + std::to_string(programs) + R"(, 1, 1], "args": [
        {"name": "X", "kind": "tensor", "ref": {"buffer": 0}, "offset": 2, "dtype": "float64"},
        {"name": "IDX", "kind": "tensor", "ref": {"buffer": 1}, "offset": 0, "dtype": "int32"},
        {"name": "Y", "kind": "tensor", "ref": {"buffer": 2}, "offset": 0, "dtype": "float64"},
        {"name": "n", "kind": "int", "value": 5},
        {"name": "alpha", "kind": "float", "value": 0.5},
        {"name": "BLOCK", "kind": "int", "value": 4}]})";
}

struct Buffers {
    std::vector<double> x{100, 100, 1, 2, 3, 4, 5}, idx{4, 3, 2, 1, 0}, y{-1, -1, -1, -1, -1};
    std::vector<tad_buffer> all() {
        return {{x.data(), static_cast<long long>(x.size())},
                {idx.data(), static_cast<long long>(idx.size())},
                {y.data(), static_cast<long long>(y.size())}};
    }
};

}  // namespace

TEST(Interpret, RunsTheLaunchOnTheCallersBuffers) {
    Buffers b;
    std::vector<tad_buffer> buffers = b.all();
    ASSERT_EQ(tad_interpret(kSource, "k.py", launch("scale_gather", 2).c_str(), buffers.data(), 3), TAD_OK)
        << tad_error_last();
    EXPECT_EQ(b.y, (std::vector<double>{2.5, 2, 1.5, 1, 0.5}));
    EXPECT_EQ(b.x, (std::vector<double>{100, 100, 1, 2, 3, 4, 5}));
}

TEST(Interpret, AFaultLeavesTheBuffersAsTheyWere) {
    Buffers b;
    b.idx[4] = 9;  // X + 9 is past the end of buffer 0
    std::vector<tad_buffer> buffers = b.all();
    EXPECT_EQ(tad_interpret(kSource, "k.py", launch("scale_gather", 2).c_str(), buffers.data(), 3),
              TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(),
                 "k.py:10:32: out-of-bounds load of 'buffer 0' at element 11 (size 7) in program (1, 0, 0)");
    EXPECT_EQ(b.y, (std::vector<double>{-1, -1, -1, -1, -1}));
}

TEST(Interpret, Refusals) {
    Buffers b;
    std::vector<tad_buffer> buffers = b.all();
    EXPECT_EQ(tad_interpret(kSource, "k.py", launch("nope", 1).c_str(), buffers.data(), 3), TAD_ERR_NO_KERNEL);
    EXPECT_STREQ(tad_error_last(), "k.py: no @triton.jit function named 'nope'");
    EXPECT_EQ(tad_interpret(kSource, "k.py", launch("scale_gather", 1).c_str(), buffers.data(), 2),
              TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "interp: no buffer 2 (memory holds 2)");
    EXPECT_EQ(tad_interpret(kSource, "k.py", launch("scale_gather", 1).c_str(), nullptr, 3), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_interpret: buffers is NULL");
    EXPECT_EQ(tad_interpret(nullptr, "k.py", "{}", buffers.data(), 3), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_interpret: source is NULL");
    buffers[1].size = -1;
    EXPECT_EQ(tad_interpret(kSource, "k.py", launch("scale_gather", 1).c_str(), buffers.data(), 3),
              TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_interpret: buffer 1 has no data or a negative size");
}
