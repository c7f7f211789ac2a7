// The trust boundary seen from the `tad` program (docs/security.md): a snapshot whose forward.py
// changed after it was taken is refused before a rollback could have the worker execute it.
#include <gtest/gtest.h>

#include <string>

#include "spawn_tad.h"
#include "temp_dir.h"

using namespace tad_test;

namespace {

const std::string kDouble = std::string(kDoubleForward) + R"(

def make_args(dims):
    return (torch.randn(dims["n"], device=dims["device"]),), {}
)";

}  // namespace

TEST(CliTrust, RollbackRefusesASnapshotWhoseForwardChanged) {
    REQUIRE_TORCH();
    TempDir dir;
    const std::string forward = dir.path() + "/double.py", w = dir.path() + "/w";
    write_text(forward, kDouble);
    ASSERT_EQ(run_tad({"generate", forward, "--dims", R"({"n": 8})", "--work-dir", w, "-q"}, dir.path() + "/gen"), 0)
        << read_text(dir.path() + "/gen.err");
    std::string id = read_text(dir.path() + "/gen.out");
    id.pop_back();  // the newline
    const std::string copy = w + "/snapshots/" + id + "/forward.py";
    write_text(copy, std::string(kDouble) + "\nimport os\nos.system('echo changed')\n");
    EXPECT_EQ(run_tad({"rollback", id, "--work-dir", w, "-q"}, dir.path() + "/rollback"), 3);
    EXPECT_EQ(read_text(dir.path() + "/rollback.err"),
              "tad: error: " + copy +
                  ": does not match its content hash in meta.json (changed since the snapshot was taken)\n");
}
