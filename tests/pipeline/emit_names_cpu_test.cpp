// Forward files whose names or statements the generated module must keep apart from its own: each
// generates (the module's self-check passes) and matches finite differences on the CPU tier.
#include <gtest/gtest.h>

#include "cpu_session.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

std::string generate_and_verify(const std::string &file) {
    fs::TempDir dir;
    auto s = cpu_session(dir, std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/" + file);
    const std::string id = s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    return fs::read_file(dir.path() + "/snapshots/" + id + "/backward.py");
}

// The module's entry point `forward` would replace a stub named `forward` (and then call itself):
// the stub's copy is renamed.
TEST(EmitNames, StubNamedForward) {
    REQUIRE_TORCH();
    const std::string module = generate_and_verify("stub_named_forward.py");
    EXPECT_NE(module.find("\ndef _stub_forward(x: torch.Tensor)"), std::string::npos) << module;
    EXPECT_NE(module.find("_ARGUMENTS = _Arguments(inspect.signature(_stub_forward))"), std::string::npos);
}

// `from __future__ import annotations` must come before every other statement of the module.
TEST(EmitNames, FutureImportComesFirst) {
    REQUIRE_TORCH();
    const std::string module = generate_and_verify("future_annotations.py");
    size_t at = 0;
    while (module.compare(at, 1, "#") == 0) at = module.find('\n', at) + 1;
    EXPECT_EQ(module.compare(at, 35, "from __future__ import annotations\n"), 0) << module.substr(0, 600);
    EXPECT_EQ(module.find("from __future__", at + 1), std::string::npos) << "copied once";
}

// Strings reach the module only as Python literals: a forward file in a directory whose name
// holds quotes, a newline and code, with a string constexpr holding `"""`, a backslash, a newline
// and non-ASCII text, generates a module that passes, and the code in the name is never a statement.
TEST(EmitNames, HostileStringsStayLiterals) {
    REQUIRE_TORCH();
    fs::TempDir dir;
    const std::string sub = dir.path() + "/d'\"\\\xc3\xa9\nraise SystemExit(3)\n#";
    fs::make_dirs(sub);
    const std::string file = sub + "/hostile_strings.py";
    fs::write_file_atomic(file, fs::read_file(std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/hostile_strings.py"));
    auto s = cpu_session(dir, file);
    const std::string id = s->generate(GenerateOptions{});
    VerifyOptions v;
    v.cpu = true;
    bool passed = false;
    Json report = Json::parse(s->verify(v, &passed), "report");
    EXPECT_TRUE(passed) << report.dump(true);
    EXPECT_EQ(report.at("summary").at("passed").integer(), 2) << report.dump(true);
    const std::string module = fs::read_file(dir.path() + "/snapshots/" + id + "/backward.py");
    EXPECT_EQ(module.find("\nraise SystemExit(3)"), std::string::npos) << module.substr(0, 800);
    EXPECT_NE(module.find("d\\'\"\\\\\xc3\xa9\\nraise SystemExit(3)\\n#/hostile_strings.py'"), std::string::npos)
        << module.substr(0, 800);
    EXPECT_NE(module.find("ACTIVATION='soft\\\"\\\"\\\"plus\\\\\\\\ \xc3\xa9\\\\n\\\\'x'"), std::string::npos)
        << module;
}

}  // namespace
