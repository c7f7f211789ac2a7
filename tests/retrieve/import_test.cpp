// The importer of sectioned fwd/bwd files (src/retrieve/import.h), on files written here in that
// layout (tests/retrieve/data/import*).
#include <gtest/gtest.h>

#include "frontend/kernel_file.h"
#include "frontend/parser.h"
#include "retrieve/import.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::retrieve {
namespace {

const std::string kData = std::string(TAD_SOURCE_DIR) + "/tests/retrieve/data/";

Converted convert(const std::string &rel) {
    const std::string path = kData + rel;
    return convert_sectioned(path, fs::read_file(path));
}

TEST(Import, ScaleShiftBecomesAStub) {
    Converted c = convert("import/scale_shift.py");
    EXPECT_EQ(c.stub, "scale_shift");
    EXPECT_EQ(c.grad_inputs, (std::vector<std::string>{"x", "scale", "shift"}));
    EXPECT_EQ(c.sections,
              (std::vector<std::string>{"SHARED HELPERS (used by forward and backward)", "FORWARD Triton Kernels",
                                        "BACKWARD Triton Kernels", "autograd.Function Class Definition"}));
    const std::string stub = R"(# The stub: ScaleShiftFunction.forward without ctx (tad dataset import).
import tad  # noqa: E402


@tad.autodiff(grad_inputs=("x", "scale", "shift"))
def scale_shift(x, scale, shift):
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    _scale_shift_fwd[(M,)](x, scale, shift, y, N, BLOCK_N=block)
    return y
)";
    ASSERT_GE(c.forward.size(), stub.size());
    EXPECT_EQ(c.forward.substr(c.forward.size() - stub.size()), stub);
    EXPECT_EQ(c.forward.find("_scale_shift_bwd"), std::string::npos) << "the backward section is dropped";
    EXPECT_NE(c.forward.find("def _column_offsets"), std::string::npos) << "shared helpers are kept";
    EXPECT_EQ(c.notes, std::vector<std::string>{"no SWEEP or make_args: retrieval can use the entry, but tad cannot "
                                                "trace, generate or verify it until they are added"});
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source("scale_shift.py", c.forward));
    EXPECT_EQ(kf.stub.launched, std::vector<std::string>{"_scale_shift_fwd"});
}

TEST(Import, BlocksLeftEmptyBecomePassAndNoneIsNoGradient) {
    Converted c = convert("import/row_softplus.py");
    EXPECT_EQ(c.stub, "row_softplus");
    EXPECT_EQ(c.grad_inputs, std::vector<std::string>{"x"});
    EXPECT_NE(c.forward.find("def row_softplus(x, keep_graph=False):\n"
                             "    M, N = x.shape\n"
                             "    y = torch.empty_like(x)\n"
                             "    _row_softplus_fwd[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))\n"
                             "    if keep_graph:\n"
                             "        pass\n"
                             "    else:\n"
                             "        pass\n"
                             "    return y\n"),
              std::string::npos)
        << c.forward;
    EXPECT_TRUE(c.notes.empty());
    EXPECT_NE(c.forward.find("SWEEP = ["), std::string::npos) << "what follows the sections is kept";
}

void expect_error(const std::string &rel, int status, const std::string &message) {
    try {
        convert(rel);
        FAIL() << rel << ": no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), status) << e.what();
        EXPECT_EQ(e.what(), kData + message);
    }
}

TEST(Import, Refusals) {
    expect_error("import_bad/no_sections.py", TAD_ERR_SYNTAX,
                 "import_bad/no_sections.py: no section banners (\"# ====\" / \"# FORWARD ...\" / \"# ====\"); not a "
                 "sectioned fwd/bwd file");
    expect_error("import_bad/reads_ctx.py", TAD_ERR_UNSUPPORTED,
                 "import_bad/reads_ctx.py:28:12: the forward reads 'ctx', which tad's stub does not have");
    expect_error("import_bad/no_gradient.py", TAD_ERR_UNSUPPORTED,
                 "import_bad/no_gradient.py:32:9: the backward returns no gradient");
    expect_error("import_bad/no_class.py", TAD_ERR_SYNTAX,
                 "import_bad/no_class.py: no torch.autograd.Function class with a forward");
    expect_error("import_bad/no_backward.py", TAD_ERR_SYNTAX,
                 "import_bad/no_backward.py:22:1: class 'Copy' has no backward");
    expect_error("import_bad/varargs.py", TAD_ERR_UNSUPPORTED,
                 "import_bad/varargs.py:11:5: the forward takes *args or **kwargs; a stub names its parameters");
}

TEST(Import, ConvertedFileMustLoad) {
    fs::TempDir tmp;
    const std::string src = fs::join(tmp.path(), "src");
    fs::make_dirs(src);
    fs::write_file_atomic(fs::join(src, "delegates.py"), fs::read_file(kData + "import_bad/delegates.py"));
    Json r = Json::parse(import_dataset(src, fs::join(tmp.path(), "ds")), "report");
    ASSERT_EQ(r.at("skipped").size(), 1u);
    EXPECT_EQ(r.at("skipped")[0].at("reason").str(),
              fs::join(src, "delegates.py") +
                  ": the converted forward file does not load: " + fs::join(tmp.path(), "ds/delegates.py") +
                  ":36:1: stub 'copy' launches no @triton.jit kernel (tad looks for K[grid](...) in the stub and in "
                  "the functions of this file it calls)");
    EXPECT_FALSE(fs::exists(fs::join(tmp.path(), "ds/delegates.py"))) << "nothing is written for a refused file";
    try {
        import_dataset(fs::join(tmp.path(), "absent"), fs::join(tmp.path(), "ds"));
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_EQ(e.what(), fs::join(tmp.path(), "absent") + ": not a directory");
    }
}

TEST(Import, DirectoryIntoADataset) {
    fs::TempDir tmp;
    const std::string src = fs::join(tmp.path(), "src"), dir = fs::join(tmp.path(), "ds");
    fs::make_dirs(src);
    for (const char *f : {"import/scale_shift.py", "import/row_softplus.py", "import_bad/reads_ctx.py"})
        fs::write_file_atomic(fs::join(src, std::string(f).substr(std::string(f).find('/') + 1)),
                              fs::read_file(kData + f));
    Json r = Json::parse(import_dataset(src, dir), "report");
    ASSERT_EQ(r.at("imported").size(), 2u);
    EXPECT_EQ(r.at("imported")[0].at("entry").str(), fs::join(dir, "row_softplus.py"));
    ASSERT_EQ(r.at("skipped").size(), 1u);
    EXPECT_EQ(r.at("skipped")[0].at("reason").str(),
              fs::join(src, "reads_ctx.py") + ":28:12: the forward reads 'ctx', which tad's stub does not have");
    EXPECT_EQ(fs::read_file(fs::join(dir, "imported/scale_shift.py")), fs::read_file(kData + "import/scale_shift.py"));
    Json meta = Json::parse(fs::read_file(fs::join(dir, "meta/scale_shift.json")), "meta");
    EXPECT_EQ(meta.at("backward").str(), "imported/scale_shift.py");
    EXPECT_EQ(meta.at("backward_kind").str(), "imported");
    EXPECT_TRUE(meta.at("family").is_null());

    Json again = Json::parse(import_dataset(src, dir), "report");
    EXPECT_EQ(again.at("imported").size(), 0u);
    ASSERT_EQ(again.at("skipped").size(), 3u);
    EXPECT_EQ(again.at("skipped")[1].at("reason").str(),
              fs::join(src, "row_softplus.py") + ": the dataset has an entry 'row_softplus' already");
}

}  // namespace
}  // namespace tad::retrieve
