// `tad retrieve` and `tad dataset`: the program over tad_retrieve, tad_dataset_list and
// tad_dataset_import, run as a separate process (spawn_tad.h) on the repository's dataset with a
// private cache directory.
#include <gtest/gtest.h>

#include <cjson/cJSON.h>

#include <filesystem>

#include "spawn_tad.h"
#include "temp_dir.h"

namespace {

using tad_test::read_text;
using tad_test::run_tad;

const std::string kSource = TAD_SOURCE_DIR;

struct Result {
    int code;
    std::string out, err;
};

Result tad(const TempDir &tmp, std::vector<std::string> args) {
    const std::string prefix = tmp.path() + "/run";
    args.insert(args.end(), {"--work-dir", tmp.path() + "/work", "-q"});
    int code = run_tad(args, prefix);
    return {code, read_text(prefix + ".out"), read_text(prefix + ".err")};
}

std::vector<std::string> dataset_options(const TempDir &tmp) {
    return {"--dataset", kSource + "/dataset", "--cache", tmp.path() + "/cache"};
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TEST(CliRetrieve, LayerNormFindsTheNorms) {
    TempDir tmp;
    Result r = tad(tmp, with({"retrieve", kSource + "/examples/layernorm.py", "--json"}, dataset_options(tmp)));
    ASSERT_EQ(r.code, 0) << r.err;
    cJSON *j = cJSON_Parse(r.out.c_str());
    ASSERT_NE(j, nullptr) << r.out;
    const cJSON *results = cJSON_GetObjectItem(j, "results");
    ASSERT_EQ(cJSON_GetArraySize(results), 4);
    for (int i = 0; i < 3; ++i)
        EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(results, i), "family")->valuestring, "norm") << r.out;
    cJSON_Delete(j);

    Result table =
        tad(tmp, with({"retrieve", kSource + "/examples/layernorm.py", "--topk", "2", "--exclude", "rmsnorm"},
                      dataset_options(tmp)));
    ASSERT_EQ(table.code, 0) << table.err;
    EXPECT_EQ(table.out.find("rmsnorm"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("rank  similarity  family"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("\n1     "), std::string::npos) << table.out;
    EXPECT_EQ(table.out.find("\n3     "), std::string::npos) << table.out;
}

TEST(CliRetrieve, Errors) {
    TempDir tmp;
    Result r = tad(tmp, {"retrieve", kSource + "/examples/layernorm.py", "--dataset", tmp.path() + "/none"});
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err, "tad: error: " + tmp.path() + "/none: dataset directory not found\n");
    r = tad(tmp, {"retrieve", kSource + "/examples/layernorm.py", "--min-sim", "2"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "tad: error: --min-sim: expected a number from -1 to 1, got '2' (see 'tad help')\n");
    r = tad(tmp, {"dataset", "frob"});
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "tad: error: unknown dataset command 'frob' (list, build, check, import DIR) (see 'tad help')\n");
    r = tad(tmp, {"dataset", "import"});
    EXPECT_EQ(r.err, "tad: error: 'dataset import' needs DIR (see 'tad help')\n");
    setenv("TAD_FAISS_PLUGIN", "/nonexistent/libtad_faiss.so", 1);
    r = tad(tmp, with({"retrieve", kSource + "/examples/layernorm.py"}, dataset_options(tmp)));
    unsetenv("TAD_FAISS_PLUGIN");
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.err,
              "tad: error: retrieval needs libtad_faiss.so (FAISS; scripts/setup.sh installs libfaiss-dev): not "
              "loaded: /nonexistent/libtad_faiss.so (absent)\n");
}

TEST(CliDataset, ListShowsEveryEntry) {
    TempDir tmp;
    Result r = tad(tmp, with({"dataset", "list"}, dataset_options(tmp)));
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto &f : std::filesystem::directory_iterator(kSource + "/dataset")) {
        if (f.path().extension() == ".py") {
            EXPECT_NE(r.out.find("\n" + f.path().stem().string() + " "), std::string::npos) << f.path();
        }
    }
    EXPECT_NE(r.out.find("hand-written"), std::string::npos);
}

TEST(CliDataset, CheckWithoutGpuSkipsVisibly) {
    REQUIRE_TORCH();
    TempDir tmp;
    Result r = tad(tmp, with({"dataset", "check", "--only", "swiglu"}, dataset_options(tmp)));
    if (r.code == 0) GTEST_SKIP() << "[SKIP] a GPU is present: the check ran\n" << r.out;
    EXPECT_EQ(r.code, 5) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("[SKIP] no GPU: ", 0), 0u) << r.out;
}

TEST(CliDataset, BuildGeneratesAndChecksOnTheCpuOnce) {
    REQUIRE_TORCH();
    TempDir tmp;
    Result r = tad(tmp, with({"dataset", "build", "--only", "swiglu,rmsnorm"}, dataset_options(tmp)));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("rmsnorm: hand-written backward " + kSource + "/bench/refs/rmsnorm.py\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("swiglu: [PASS] cpu:"), std::string::npos) << r.out;
    EXPECT_TRUE(std::filesystem::exists(tmp.path() + "/cache/backward/swiglu.py"));
    r = tad(tmp, with({"dataset", "build", "--only", "swiglu"}, dataset_options(tmp)));
    EXPECT_EQ(r.out,
              "swiglu: up to date\nbuilt 0, ready 1, failed 0 (backwards in " + tmp.path() + "/cache/backward)\n");
    // Every entry (the dataset grows): swiglu among them with its built backward.
    r = tad(tmp, with({"retrieve", kSource + "/dataset/geglu.py", "--json", "--topk", "100"}, dataset_options(tmp)));
    EXPECT_NE(
        r.out.find("\"kind\":\"generated\",\"path\":\"" + tmp.path() + "/cache/backward/swiglu.py\",\"exists\":true"),
        std::string::npos)
        << r.out;
}

TEST(CliDataset, ImportReportsWhatItSkipped) {
    TempDir tmp;
    const std::string src = tmp.path() + "/src";
    std::filesystem::create_directories(src);
    std::filesystem::copy_file(kSource + "/tests/retrieve/data/import/row_softplus.py", src + "/row_softplus.py");
    std::filesystem::copy_file(kSource + "/tests/retrieve/data/import_bad/no_gradient.py", src + "/no_gradient.py");
    Result r = tad(tmp, {"dataset", "import", src, "--dataset", tmp.path() + "/ds"});
    EXPECT_EQ(r.code, 3);
    EXPECT_EQ(r.out, "imported " + src + "/row_softplus.py -> " + tmp.path() +
                         "/ds/row_softplus.py (stub row_softplus)\n" + "skipped: " + src +
                         "/no_gradient.py:32:9: the backward returns no gradient\n");
    r = tad(tmp, {"retrieve", tmp.path() + "/ds/row_softplus.py", "--dataset", tmp.path() + "/ds", "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("\"kind\":\"imported\",\"path\":\"" + tmp.path() + "/ds/imported/row_softplus.py\""),
              std::string::npos)
        << r.out;
}

}  // namespace
