// A FAISS index of vectors scored by inner product, through the plugin libtad_faiss.so
// (retrieve/faiss_plugin.h says why FAISS lives in a plugin).
//
// Exact search (IndexFlatIP) up to kHnswAbove vectors; above, HNSW (IndexHNSWFlat, M = 32,
// efSearch = 128): approximate, but sublinear. The plugin is looked for in $TAD_FAISS_PLUGIN, beside
// the binary holding this code (libtad.so), in the build tree, then in the installed library
// directory; when none loads, every use is TAD_ERR_UNSUPPORTED "retrieval needs libtad_faiss.so
// (FAISS): <why>".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct tad_faiss_index;

namespace tad::retrieve {

class VectorIndex {
public:
    enum class Kind { Flat, Hnsw };
    static constexpr int64_t kHnswAbove = 4096;
    static constexpr int kHnswM = 32;
    static constexpr int kHnswEfSearch = 64;
    static Kind kind_for(int64_t vectors) { return vectors > kHnswAbove ? Kind::Hnsw : Kind::Flat; }
    static const char *kind_name(Kind k) { return k == Kind::Hnsw ? "hnsw" : "flat"; }

    VectorIndex(int dim, Kind kind);
    // TAD_ERR_IO "<path>: cannot read index: <why>".
    static VectorIndex read(const std::string &path);
    VectorIndex(VectorIndex &&o) noexcept;
    VectorIndex &operator=(VectorIndex &&o) noexcept;
    VectorIndex(const VectorIndex &) = delete;
    VectorIndex &operator=(const VectorIndex &) = delete;
    ~VectorIndex();

    // Appends vectors.size() / dim() vectors; ids follow the order of addition from 0.
    void add(const std::vector<float> &vectors);
    struct Hit {
        int64_t id;
        float score;
    };
    // The min(k, size()) best hits of one query of dim() floats, best first.
    std::vector<Hit> search(const float *query, int k) const;
    // Written to a temp file renamed over `path`. TAD_ERR_IO "<path>: cannot write index: <why>".
    void write(const std::string &path) const;

    int64_t size() const;
    int dim() const;
    Kind kind() const;

private:
    explicit VectorIndex(tad_faiss_index *h) : h_(h) {}
    tad_faiss_index *h_ = nullptr;
};

// The path the plugin was loaded from (loading it if needed).
std::string faiss_plugin_path();

}  // namespace tad::retrieve
