// Features -> one fixed-width unit vector (docs/retrieval.md), so that the inner product of two files'
// vectors is their similarity.
//
// Each group fills its own slice: ir, ast and ident hash every feature name (FNV-1a 64, modulo the
// slice's width) and add its weight; count puts log(1 + count) of count_names()[i] in slot i. Weights
// are sublinear term frequencies, 1 + log(tf); ident multiplies by the token's inverse document
// frequency over the dataset, ln((1 + N) / (1 + df)) + 1. Each slice is scaled to unit length, then
// by sqrt(w_g / sum of w over the groups the file has), so the whole vector has unit length and the
// similarity of two files is the weighted mean of their per-group cosines.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "retrieve/features.h"

namespace tad::retrieve {

constexpr std::array<int, kGroups> kGroupWidth = {192, 128, 160, 32};
constexpr int kDim = 512;  // the sum of kGroupWidth
// The groups whose weights are multiplied by the feature's inverse document frequency.
constexpr std::array<bool, kGroups> kIdfGroups = {false, false, true, false};
// The version of the features and their layout: an index made with another is rebuilt. Bump it
// with every change to what extract() or embed() computes.
constexpr const char *kFeatureVersion = "tad-retrieve-features-2";

struct Weights {
    std::array<double, kGroups> w = {0.35, 0.2, 0.3, 0.15};  // ir, ast, ident, count (docs/retrieval.md)
};

// Document frequencies of features over a dataset.
struct Idf {
    std::map<std::string, int64_t> df;
    int64_t docs = 0;
    void add(const Features &f);
    double of(const std::string &token) const;
};

uint64_t fnv1a(const std::string &s);

// The weight of one feature inside its group, before the group is scaled.
double feature_weight(Group g, const std::string &name, double raw, const Idf &idf);

std::vector<float> embed(const Features &f, const Idf &idf, const Weights &w = {});

// The first offset of group g in the vector.
int group_offset(Group g);

// Why two files are close: the cosine of each group's slices, and the features both have, by what
// each adds to the inner product (largest first, at most `most`).
struct Match {
    std::string feature;
    Group group;
    double contribution;
};
struct Explanation {
    std::array<double, kGroups> cosine{};
    std::vector<Match> matched;
};
Explanation explain(const Features &query, const Features &entry, const Idf &idf, const Weights &w = {},
                    size_t most = 8);

}  // namespace tad::retrieve
