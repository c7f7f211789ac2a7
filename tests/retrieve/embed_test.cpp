// The vector layout of src/retrieve/embed.h: unit length, per-group weights, TF-IDF, explanations.
#include <gtest/gtest.h>

#include <cmath>

#include "retrieve/embed.h"

namespace tad::retrieve {
namespace {

Features make(std::map<std::string, double> ir, std::map<std::string, double> ident, double loops) {
    Features f;
    f.group(Group::Ir) = std::move(ir);
    f.group(Group::Ident) = std::move(ident);
    f.group(Group::Count)["count:loops"] = loops;
    return f;
}

double dot(const std::vector<float> &a, const std::vector<float> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
}

TEST(Embed, UnitLengthFixedWidth) {
    Idf idf;
    Features f = make({{"ir:exp", 2}, {"ir:exp>reduce_sum", 1}}, {{"id:rstd", 3}}, 1);
    idf.add(f);
    std::vector<float> v = embed(f, idf);
    ASSERT_EQ(v.size(), static_cast<size_t>(kDim));
    EXPECT_NEAR(dot(v, v), 1.0, 1e-6);
    EXPECT_EQ(kGroupWidth[0] + kGroupWidth[1] + kGroupWidth[2] + kGroupWidth[3], kDim);
    EXPECT_GE(kGroupWidth[3], static_cast<int>(count_names().size()));
}

TEST(Embed, SimilarityIsTheWeightedMeanOfGroupCosines) {
    Idf idf;
    Features a = make({{"ir:exp", 1}}, {{"id:rstd", 1}}, 1);
    Features b = make({{"ir:exp", 1}}, {{"id:softmax", 1}}, 1);
    idf.add(a);
    idf.add(b);
    Weights w;
    // ir and count agree fully, ident not at all (the two tokens hash apart), ast is absent in both.
    const double expected = (w.w[0] + w.w[3]) / (w.w[0] + w.w[2] + w.w[3]);
    EXPECT_NEAR(dot(embed(a, idf, w), embed(b, idf, w)), expected, 1e-6);
    Explanation x = explain(a, b, idf, w);
    EXPECT_NEAR(x.cosine[0], 1.0, 1e-9);
    EXPECT_NEAR(x.cosine[2], 0.0, 1e-9);
    ASSERT_EQ(x.matched.size(), 2u);
    EXPECT_EQ(x.matched[0].feature, "ir:exp");  // w_ir > w_count
    EXPECT_EQ(x.matched[1].feature, "count:loops");
    double sum = 0;
    for (const auto &m : x.matched) sum += m.contribution;
    EXPECT_NEAR(sum, expected, 1e-6) << "with no hash collisions the matches add up to the similarity";
}

TEST(Embed, RareTokensWeighMore) {
    Idf idf;
    idf.add(make({}, {{"id:common", 1}, {"id:rare", 1}}, 0));
    idf.add(make({}, {{"id:common", 1}}, 0));
    idf.add(make({}, {{"id:common", 1}}, 0));
    EXPECT_GT(idf.of("id:rare"), idf.of("id:common"));
    EXPECT_NEAR(idf.of("id:common"), std::log(4.0 / 4.0) + 1.0, 1e-12);
    EXPECT_NEAR(idf.of("id:unseen"), std::log(4.0) + 1.0, 1e-12);
}

TEST(Embed, HashIsFnv1a) {
    EXPECT_EQ(fnv1a(""), 14695981039346656037ULL);
    EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace tad::retrieve
