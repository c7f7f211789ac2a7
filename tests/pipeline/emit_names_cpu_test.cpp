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

}  // namespace
