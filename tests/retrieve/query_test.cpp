// The retrieve report (src/retrieve/query.h, docs/reports.md) over the repository's dataset.
#include <gtest/gtest.h>

#include "frontend/parser.h"
#include "retrieve/query.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::retrieve {
namespace {

const std::string kSource = TAD_SOURCE_DIR;

struct Query {
    fs::TempDir cache{"tad-retrieve-cache-"};
    Options opts;
    Query() {
        opts.dataset_dir = kSource + "/dataset";
        opts.cache_dir = cache.path();
    }
    Json run(const std::string &rel) const {
        return Json::parse(retrieve(frontend::analyze(frontend::parse_file(kSource + "/" + rel)), opts), "report");
    }
};

size_t dataset_size() {
    size_t n = 0;
    for (const auto &f : fs::list_dir(kSource + "/dataset")) n += f.size() > 3 && f.substr(f.size() - 3) == ".py";
    return n;
}

TEST(Retrieve, LayerNormReturnsTheNormsFirst) {
    Query q;
    Json r = q.run("examples/layernorm.py");
    EXPECT_EQ(r.at("kind").str(), "retrieve");
    EXPECT_EQ(r.at("query").at("path").str(), kSource + "/examples/layernorm.py");
    EXPECT_EQ(r.at("query").at("lowered")[0].str(), "_layernorm_fwd");
    EXPECT_EQ(r.at("query").at("counts").at("reductions").num(), 2);
    EXPECT_EQ(r.at("dataset").at("entries").integer(), static_cast<int64_t>(dataset_size()));
    EXPECT_EQ(r.at("dataset").at("index").str(), "flat");
    EXPECT_TRUE(r.at("dataset").at("rebuilt").boolean());
    EXPECT_EQ(r.at("dataset").at("skipped").size(), 0u);
    JsonRef results = r.at("results");
    ASSERT_EQ(results.size(), 4u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(results[i].at("family").str(), "norm") << r.dump();
    JsonRef first = results[0];
    EXPECT_EQ(first.at("rank").integer(), 1);
    EXPECT_GT(first.at("similarity").num(), 0.5);
    EXPECT_LE(first.at("similarity").num(), 1.0);
    JsonRef why = first.at("why");
    for (const char *g : {"ir", "ast", "ident", "count"}) EXPECT_TRUE(why.at("groups").at(g).is_number()) << g;
    ASSERT_GT(why.at("matched").size(), 0u);
    EXPECT_GT(why.at("matched")[0].at("contribution").num(), 0.0);
    EXPECT_TRUE(r.at("seconds").at("search").is_number());

    Json again = q.run("examples/layernorm.py");
    EXPECT_FALSE(again.at("dataset").at("rebuilt").boolean());
    EXPECT_EQ(again.at("results").dump(), r.at("results").dump()) << "the cached index answers the same";
}

TEST(Retrieve, BackwardOfEachKind) {
    Query q;
    q.opts.topk = 30;
    Json r = q.run("dataset/rmsnorm.py");
    JsonRef first = r.at("results")[0];
    EXPECT_EQ(first.at("name").str(), "rmsnorm") << "an entry is its own best match";
    EXPECT_NEAR(first.at("similarity").num(), 1.0, 1e-5);
    EXPECT_EQ(first.at("backward").at("kind").str(), "hand-written");
    EXPECT_EQ(first.at("backward").at("path").str(), kSource + "/bench/refs/rmsnorm.py");
    EXPECT_TRUE(first.at("backward").at("exists").boolean());
    for (size_t i = 0; i < r.at("results").size(); ++i) {
        JsonRef b = r.at("results")[i].at("backward");
        if (b.at("kind").str() != "generated") continue;
        EXPECT_EQ(b.at("path").str(), q.cache.path() + "/backward/" + r.at("results")[i].at("name").str() + ".py");
        EXPECT_FALSE(b.at("exists").boolean()) << "nothing built in a fresh cache";
    }
}

TEST(Retrieve, ExcludeAndMinSim) {
    Query q;
    q.opts.exclude = {"norm"};
    q.opts.topk = 1000;
    Json r = q.run("examples/layernorm.py");
    size_t norms = 0;
    for (const std::string &n : fs::list_dir(kSource + "/dataset"))
        norms += n.size() > 3 && n.substr(n.size() - 3) == ".py" && n.find("norm") != std::string::npos;
    EXPECT_GE(norms, 5u);
    EXPECT_EQ(r.at("results").size(), dataset_size() - norms) << "entries with 'norm' in their path are left out";
    for (size_t i = 0; i < r.at("results").size(); ++i)
        EXPECT_EQ(r.at("results")[i].at("path").str().find("norm"), std::string::npos);
    q.opts.exclude.clear();
    q.opts.min_sim = 0.999;
    EXPECT_EQ(q.run("examples/layernorm.py").at("results").size(), 0u);
}

void expect_invalid(const Query &q, const char *message) {
    try {
        q.run("examples/layernorm.py");
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
        EXPECT_STREQ(e.what(), message);
    }
}

TEST(Retrieve, OptionErrors) {
    Query q;
    q.opts.topk = 0;
    expect_invalid(q, "topk must be at least 1, got 0");
    q.opts.topk = 4;
    q.opts.min_sim = 1.5;
    expect_invalid(q, "min_sim must be between -1 and 1, got 1.5");
}

TEST(DatasetListing, EveryEntryWithItsSidecar) {
    Options o;
    fs::TempDir cache;
    o.dataset_dir = kSource + "/dataset";
    o.cache_dir = cache.path();
    Json l = Json::parse(dataset_listing(o), "listing");
    EXPECT_EQ(l.at("kind").str(), "dataset");
    ASSERT_EQ(l.at("entries").size(), dataset_size());
    for (size_t i = 0; i < l.at("entries").size(); ++i) {
        JsonRef e = l.at("entries")[i];
        EXPECT_TRUE(e.at("family").is_string()) << e.at("name").str() << ": every entry has a sidecar with a family";
        EXPECT_EQ(e.at("provenance").str(), "written here") << e.at("name").str();
        EXPECT_TRUE(e.at("gpu").valid()) << e.at("name").str();
        EXPECT_TRUE(e.at("features").is_object()) << e.at("name").str();
        EXPECT_FALSE(e.at("description").str().empty()) << e.at("name").str();
    }
}

}  // namespace
}  // namespace tad::retrieve
