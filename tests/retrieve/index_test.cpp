// The dataset index (src/retrieve/index.h, vector_index.h): built from files, persisted in the cache
// directory, rebuilt when the dataset changes, searched exactly (flat) or by HNSW.
#include <gtest/gtest.h>

#include "frontend/parser.h"
#include "retrieve/index.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::retrieve {
namespace {

const std::string kSource = TAD_SOURCE_DIR;

// A dataset of a few of the repository's entries, in a temporary directory.
struct SmallDataset {
    fs::TempDir tmp{"tad-retrieve-"};
    std::string dir = fs::join(tmp.path(), "dataset"), cache = fs::join(tmp.path(), "cache");

    explicit SmallDataset(const std::vector<std::string> &names) {
        fs::make_dirs(fs::join(dir, "meta"));
        for (const auto &n : names) {
            copy("dataset/" + n + ".py", n + ".py");
            copy("dataset/meta/" + n + ".json", "meta/" + n + ".json");
        }
    }
    void copy(const std::string &from, const std::string &to) const {
        fs::write_file_atomic(fs::join(dir, to), fs::read_file(fs::join(kSource, from)));
    }
};

Features features_of(const std::string &rel) {
    return extract(frontend::analyze(frontend::parse_file(fs::join(kSource, rel))));
}

std::vector<std::string> names(const Index &idx, const std::vector<Index::Hit> &hits) {
    std::vector<std::string> out;
    for (const auto &h : hits) out.push_back(idx.entries()[h.entry].name);
    return out;
}

auto none = [](size_t) { return false; };

TEST(Index, OpensBuildsAndReusesTheCache) {
    SmallDataset d({"rmsnorm", "matmul", "log_softmax", "swiglu"});
    Dataset ds = open_dataset(d.dir);
    ASSERT_EQ(ds.entries.size(), 4u);
    EXPECT_EQ(ds.entries[0].name, "log_softmax");
    EXPECT_EQ(ds.entries[0].family(), "softmax");
    bool rebuilt = false;
    Index idx = Index::open(ds, d.cache, &rebuilt);
    EXPECT_TRUE(rebuilt);
    EXPECT_TRUE(fs::exists(fs::join(d.cache, "index.json")));
    EXPECT_TRUE(fs::exists(fs::join(d.cache, "index.faiss")));
    EXPECT_EQ(idx.vectors().kind(), VectorIndex::Kind::Flat);
    auto hits = idx.search(features_of("examples/layernorm.py"), 4, none);
    ASSERT_EQ(hits.size(), 4u);
    EXPECT_EQ(idx.entries()[hits[0].entry].name, "rmsnorm");
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].similarity, hits[i].similarity);

    Index again = Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    EXPECT_FALSE(rebuilt);
    auto hits2 = again.search(features_of("examples/layernorm.py"), 4, none);
    EXPECT_EQ(names(idx, hits), names(again, hits2));
    EXPECT_NEAR(hits[0].similarity, hits2[0].similarity, 1e-6);
}

TEST(Index, RebuiltWhenAFileOrSidecarChanges) {
    SmallDataset d({"rmsnorm", "swiglu"});
    bool rebuilt = false;
    Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    d.copy("dataset/geglu.py", "geglu.py");
    Index idx = Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    EXPECT_TRUE(rebuilt);
    EXPECT_EQ(idx.entries().size(), 3u);
    Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    EXPECT_FALSE(rebuilt);
    fs::write_file_atomic(fs::join(d.dir, "meta/swiglu.json"), "{\"family\": \"gating\"}\n");
    idx = Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    EXPECT_TRUE(rebuilt);
    EXPECT_EQ(idx.entries()[2].family, "gating");
}

TEST(Index, DamagedCacheIsRebuilt) {
    SmallDataset d({"rmsnorm", "swiglu"});
    Index::open(open_dataset(d.dir), d.cache);
    fs::write_file_atomic(fs::join(d.cache, "index.faiss"), "not an index");
    bool rebuilt = false;
    Index idx = Index::open(open_dataset(d.dir), d.cache, &rebuilt);
    EXPECT_TRUE(rebuilt);
    EXPECT_EQ(idx.vectors().size(), 2);
}

TEST(Index, EntriesThatDoNotLoadAreSkippedWithTheReason) {
    SmallDataset d({"rmsnorm"});
    fs::write_file_atomic(fs::join(d.dir, "broken.py"), "def f(:\n");
    fs::write_file_atomic(fs::join(d.dir, "meta/rmsnorm.json"), "{\"family\": 3}");
    d.copy("dataset/swiglu.py", "swiglu.py");
    fs::write_file_atomic(fs::join(d.dir, "meta/swiglu.json"), "[1]");
    Index idx = Index::open(open_dataset(d.dir), d.cache);
    EXPECT_TRUE(idx.entries().empty());
    ASSERT_EQ(idx.skipped().size(), 3u);
    EXPECT_EQ(idx.skipped()[2].reason, fs::join(d.dir, "meta/swiglu.json") + ": expected a JSON object");
    EXPECT_EQ(idx.skipped()[0].reason, fs::join(d.dir, "broken.py") + ":1:6: syntax error: '(' was never closed");
    EXPECT_EQ(idx.skipped()[1].reason, fs::join(d.dir, "meta/rmsnorm.json") + ": \"family\" must be a string or null");
}

TEST(Index, ExcludedEntriesAreLeftOut) {
    SmallDataset d({"rmsnorm", "matmul", "log_softmax"});
    Index idx = Index::open(open_dataset(d.dir), d.cache);
    auto hits =
        idx.search(features_of("dataset/rmsnorm.py"), 3, [&](size_t i) { return idx.entries()[i].name == "rmsnorm"; });
    EXPECT_EQ(names(idx, hits), (std::vector<std::string>{"log_softmax", "matmul"}));
}

TEST(Index, MissingDatasetDirectory) {
    try {
        open_dataset("/nonexistent/tad-dataset");
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_STREQ(e.what(), "/nonexistent/tad-dataset: dataset directory not found");
    }
}

TEST(VectorIndex, FlatIsExactAndHnswAgreesOnASmallSet) {
    const int dim = 8;
    std::vector<float> all;
    for (int i = 0; i < 200; ++i)
        for (int j = 0; j < dim; ++j) all.push_back(static_cast<float>(((i * 7 + j * 13) % 17) - 8) / 8.0f);
    VectorIndex flat(dim, VectorIndex::Kind::Flat), hnsw(dim, VectorIndex::Kind::Hnsw);
    flat.add(all);
    hnsw.add(all);
    EXPECT_EQ(hnsw.kind(), VectorIndex::Kind::Hnsw);
    const float *q = all.data() + 42 * dim;
    auto f = flat.search(q, 5), h = hnsw.search(q, 5);
    ASSERT_EQ(f.size(), 5u);
    double best = 0;
    for (int j = 0; j < dim; ++j) best += static_cast<double>(q[j]) * q[j];
    EXPECT_NEAR(f[0].score, best, 1e-5);
    EXPECT_EQ(f[0].score, h[0].score);
    EXPECT_EQ(flat.search(q, 500).size(), 200u) << "k is capped by the size";
    EXPECT_EQ(VectorIndex::kind_for(VectorIndex::kHnswAbove), VectorIndex::Kind::Flat);
    EXPECT_EQ(VectorIndex::kind_for(VectorIndex::kHnswAbove + 1), VectorIndex::Kind::Hnsw);
}

TEST(VectorIndex, WrittenAndReadBack) {
    fs::TempDir tmp;
    VectorIndex v(4, VectorIndex::Kind::Hnsw);
    v.add({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
    const std::string path = fs::join(tmp.path(), "x.faiss");
    v.write(path);
    VectorIndex r = VectorIndex::read(path);
    EXPECT_EQ(r.size(), 3);
    EXPECT_EQ(r.dim(), 4);
    EXPECT_EQ(r.kind(), VectorIndex::Kind::Hnsw);
    const float q[4] = {0, 0.9f, 0.1f, 0};
    EXPECT_EQ(r.search(q, 1)[0].id, 1);
    try {
        VectorIndex::read(fs::join(tmp.path(), "absent.faiss"));
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_EQ(std::string(e.what()).rfind(fs::join(tmp.path(), "absent.faiss") + ": cannot read index: ", 0), 0u)
            << e.what();
    }
}

}  // namespace
}  // namespace tad::retrieve
