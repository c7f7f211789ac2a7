// The self-check of generated modules (emit::check_module, run by driver::emit_backward_module) on
// a module the pipeline emits: the largest one (flash attention, two specializations, forward and
// reverse mode) passes it in milliseconds, and copies corrupted the ways an emitter bug would
// corrupt them fail with TAD_ERR_INTERNAL naming the kernel and the place.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "cpu_session.h"
#include "emit/emit.h"
#include "frontend/parser.h"

using namespace tad;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

const char *kFile = "dataset/flash_attention.py";
const std::string kBug = "; this is a bug in tad's emitter";

struct Emitted {
    frontend::KernelFile kf;
    std::string source;
};

const Emitted &flash_attention() {
    static const Emitted e = [] {
        fs::TempDir dir;
        auto s = cpu_session(dir, kFile);
        s->generate(driver::GenerateOptions{});
        const std::string path = std::string(TAD_SOURCE_DIR) + "/" + kFile;
        return Emitted{frontend::analyze(frontend::parse_source(kFile, fs::read_file(path))), s->candidate_source("")};
    }();
    return e;
}

// "line L:C" (1-based column) of byte `pos` of `text`.
std::string line_col(const std::string &text, size_t pos) {
    size_t line_start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    int line = 1;
    for (size_t i = 0; i < line_start; ++i) line += text[i] == '\n';
    return "line " + std::to_string(line) + ":" + std::to_string(pos - line_start + 1);
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The first occurrence of identifier `name` at or after `from`.
size_t find_identifier(const std::string &text, const std::string &name, size_t from) {
    for (size_t p = text.find(name, from); p != std::string::npos; p = text.find(name, p + 1))
        if ((p == 0 || !ident_char(text[p - 1])) && !ident_char(text[p + name.size()])) return p;
    return std::string::npos;
}

std::string check(const std::string &source) {
    try {
        emit::check_module(flash_attention().kf, source);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INTERNAL) << e.what();
        return e.what();
    }
    return "";
}

const std::string kKernel = "_attn_fwd_bwd_CAUSAL_False";

size_t kernel_def(const std::string &text, const std::string &name = kKernel) {
    size_t p = text.find("\ndef " + name + "(");
    EXPECT_NE(p, std::string::npos) << name;
    return p + 1;
}

}  // namespace

TEST(SelfCheck, LargestModulePassesInMilliseconds) {
    REQUIRE_TORCH();
    const Emitted &e = flash_attention();
    const int runs = 20;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) emit::check_module(e.kf, e.source);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) frontend::parse_source("m", e.source);
    double parse_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / runs;
    std::printf("check_module on %s's module (%zu bytes): %.2f ms (parsing it alone: %.2f ms)\n", kFile,
                e.source.size(), ms, parse_ms);
    ::testing::Test::RecordProperty("check_ms", std::to_string(ms));
    EXPECT_LT(ms, 250.0);  // a few ms; the bound only catches a blow-up
}

// A statement of the backward kernel lost: its later reads name the kernel and the first of them.
TEST(SelfCheck, LostBindingIsAnInternalError) {
    REQUIRE_TORCH();
    std::string m = flash_attention().source;
    const size_t def = kernel_def(m), bind = m.find("    offs_m = ", def);
    ASSERT_NE(bind, std::string::npos);
    m.erase(bind, m.find('\n', bind) + 1 - bind);
    const size_t read = find_identifier(m, "offs_m", bind);
    EXPECT_EQ(check(m), "generated module: kernel '" + kKernel + "' reads 'offs_m', which nothing defines (" +
                            line_col(m, read) + ")" + kBug);
}

// The launcher passes one argument too few.
TEST(SelfCheck, LaunchMissingAnArgumentIsAnInternalError) {
    REQUIRE_TORCH();
    std::string m = flash_attention().source;
    // Parameters of the kernel that are not constexprs.
    const size_t def = kernel_def(m);
    const std::string signature = m.substr(def, m.find("):\n", def) - def);
    size_t params = 1, constexprs = 0;
    for (char c : signature) params += c == ',';
    for (size_t p = signature.find(": tl.constexpr"); p != std::string::npos;
         p = signature.find(": tl.constexpr", p + 1))
        ++constexprs;
    const size_t call = m.find("    " + kKernel + "[");
    ASSERT_NE(call, std::string::npos);
    const size_t first = m.find("](", call) + 2;
    m.erase(first, m.find(", ", first) + 2 - first);
    EXPECT_EQ(check(m), "generated module: function 'flash_attention_backward' launches kernel '" + kKernel +
                            "' with " + std::to_string(params - constexprs - 1) + " positional arguments for its " +
                            std::to_string(params - constexprs) + " parameters that are not constexpr (" +
                            line_col(m, call + 4) + ")" + kBug);
}

// Two specializations given one name: the second would replace the first.
TEST(SelfCheck, KernelNameTakenTwiceIsAnInternalError) {
    REQUIRE_TORCH();
    std::string m = flash_attention().source;
    const size_t second = kernel_def(m, "_attn_fwd_bwd_CAUSAL_True");
    m.replace(second + 4, std::string("_attn_fwd_bwd_CAUSAL_True").size(), kKernel);
    EXPECT_EQ(check(m), "generated module: kernel '" + kKernel + "' is defined at " + line_col(m, kernel_def(m)) +
                            " and again at " + line_col(m, second) + kBug);
}

// Text that is not Python names the kernel it falls in.
TEST(SelfCheck, SyntaxErrorIsAnInternalError) {
    REQUIRE_TORCH();
    std::string m = flash_attention().source;
    const size_t line = m.find("    offs_n = tl.arange(0, BLOCK_N)\n", kernel_def(m));
    ASSERT_NE(line, std::string::npos);
    m.erase(m.find(")\n", line), 1);
    const std::string msg = check(m);
    EXPECT_EQ(msg.rfind("generated module: syntax error: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(" in kernel '" + kKernel + "' (line "), std::string::npos) << msg;
    EXPECT_EQ(msg.substr(msg.size() - kBug.size()), kBug) << msg;
}

// A real module the check stops: a stub named like a helper of the module's runtime (`_as_dtype`)
// is copied into its module, then replaced by the runtime's definition of that name. Generate fails
// with the internal error and the session keeps no candidate. (A stub named like the entry point,
// `forward`, is renamed: tests/pipeline/emit_names_cpu_test.cpp.)
TEST(SelfCheck, StubNamedLikeARuntimeHelperIsStoppedAndNotStored) {
    REQUIRE_TORCH();
    fs::TempDir src_dir, work;
    std::string src = fs::read_file(std::string(TAD_SOURCE_DIR) + "/examples/gelu.py");
    src.replace(src.find("def gelu(x):"), 12, "def _as_dtype(x):");
    const std::string path = fs::join(src_dir.path(), "forward_stub.py");
    fs::write_file_atomic(path, src);
    auto s = cpu_session(work, path);
    const std::string before = s->snapshot_list();
    try {
        s->generate(driver::GenerateOptions{});
        ADD_FAILURE() << "generate accepted a module whose runtime replaces the stub";
    } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(e.status(), TAD_ERR_INTERNAL) << msg;
        EXPECT_EQ(msg.rfind("generated module: function '_as_dtype' is defined at line 27:1 and again at line ", 0), 0u)
            << msg;
        EXPECT_EQ(msg.substr(msg.size() - kBug.size()), kBug) << msg;
    }
    EXPECT_EQ(s->snapshot_list(), before);
}
