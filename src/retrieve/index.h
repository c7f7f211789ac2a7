// The retrieval index of a dataset: every entry's features (for `why`), the dataset's document
// frequencies, and a VectorIndex of their embeddings. Persisted in the cache directory
// (index.json + index.faiss, docs/retrieval.md) and rebuilt when the dataset's hash or the feature
// version differs from what index.json records.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "retrieve/dataset.h"
#include "retrieve/embed.h"
#include "retrieve/features.h"
#include "retrieve/vector_index.h"

namespace tad::retrieve {

struct IndexedEntry {
    std::string name;
    std::string path;  // absolute
    std::string family;
    Features features;
    std::string description = {};  // the first line of the file's docstring
};

struct Skipped {
    std::string path, reason;
};

// The features of every entry of `ds`; an entry that does not analyse (syntax error, no stub,
// malformed sidecar) is left out and listed in `skipped` with the reason.
std::vector<IndexedEntry> analyse_entries(const Dataset &ds, std::vector<Skipped> &skipped);

class Index {
public:
    // An index over `entries` built in memory; `kind` by VectorIndex::kind_for unless given.
    static Index build(std::vector<IndexedEntry> entries, const Weights &w = {});
    static Index build(std::vector<IndexedEntry> entries, VectorIndex::Kind kind, const Weights &w = {});

    // The index of `ds` cached in `cache_dir`: read when index.json there records ds.hash and the
    // feature version, else built from the dataset's files and written there. `rebuilt` tells which.
    // An entry that does not analyse (syntax error, no stub) is left out and listed in skipped().
    static Index open(const Dataset &ds, const std::string &cache_dir, bool *rebuilt = nullptr);

    struct Hit {
        size_t entry;
        double similarity;
    };
    // The best `k` entries for a query's features, best first, leaving out entries for which
    // `excluded(entry)` is true.
    template <typename Excluded> std::vector<Hit> search(const Features &query, int k, Excluded &&excluded) const;
    std::vector<Hit> search_vector(const std::vector<float> &query, int k, size_t excluded_count,
                                   const std::function<bool(size_t)> &excluded) const;

    const std::vector<IndexedEntry> &entries() const { return entries_; }
    const std::vector<Skipped> &skipped() const { return skipped_; }
    const Idf &idf() const { return idf_; }
    const Weights &weights() const { return weights_; }
    const VectorIndex &vectors() const { return vectors_; }

private:
    Index(std::vector<IndexedEntry> entries, Idf idf, VectorIndex vectors, const Weights &w)
        : entries_(std::move(entries)), idf_(std::move(idf)), vectors_(std::move(vectors)), weights_(w) {}
    static std::optional<Index> read(const Dataset &ds, const std::string &cache_dir);
    void write(const Dataset &ds, const std::string &cache_dir) const;

    std::vector<IndexedEntry> entries_;
    std::vector<Skipped> skipped_;
    Idf idf_;
    VectorIndex vectors_;
    Weights weights_;
};

template <typename Excluded>
std::vector<Index::Hit> Index::search(const Features &query, int k, Excluded &&excluded) const {
    size_t count = 0;
    for (size_t i = 0; i < entries_.size(); ++i) count += excluded(i) ? 1 : 0;
    return search_vector(embed(query, idf_, weights_), k, count, excluded);
}

}  // namespace tad::retrieve
