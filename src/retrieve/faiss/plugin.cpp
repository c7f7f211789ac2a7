// libtad_faiss.so: FAISS behind the C functions of retrieve/faiss_plugin.h. Every function catches
// what FAISS throws (faiss::FaissException, std::bad_alloc) and reports it through `err`.
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/index_io.h>
#include <omp.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "retrieve/faiss_plugin.h"

struct tad_faiss_index {
    std::unique_ptr<faiss::Index> index;
};

namespace {

int report(const char *what, char *err, int err_size) {
    if (err && err_size > 0) std::snprintf(err, static_cast<size_t>(err_size), "%s", what);
    return -1;
}

template <typename Body> int guarded(char *err, int err_size, Body &&body) {
    try {
        body();
        return 0;
    } catch (const std::exception &e) {
        return report(e.what(), err, err_size);
    } catch (...) {
        return report("unknown exception in FAISS", err, err_size);
    }
}

int kind_of(const faiss::Index *index) {
    return dynamic_cast<const faiss::IndexHNSW *>(index) ? TAD_FAISS_HNSW : TAD_FAISS_FLAT;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int tad_faiss_abi(void) { return TAD_FAISS_PLUGIN_ABI; }

__attribute__((visibility("default"))) int tad_faiss_create(int dim, int kind, int hnsw_m, int ef_search,
                                                            tad_faiss_index **out, char *err, int err_size) {
    return guarded(err, err_size, [&] {
        auto made = std::make_unique<tad_faiss_index>();
        if (kind == TAD_FAISS_HNSW) {
            auto hnsw = std::make_unique<faiss::IndexHNSWFlat>(dim, hnsw_m, faiss::METRIC_INNER_PRODUCT);
            hnsw->hnsw.efSearch = ef_search;
            made->index = std::move(hnsw);
        } else {
            made->index = std::make_unique<faiss::IndexFlatIP>(dim);
        }
        *out = made.release();
    });
}

__attribute__((visibility("default"))) int tad_faiss_add(tad_faiss_index *index, long long n, const float *vectors,
                                                         char *err, int err_size) {
    return guarded(err, err_size, [&] { index->index->add(n, vectors); });
}

__attribute__((visibility("default"))) int tad_faiss_search(const tad_faiss_index *index, const float *query, int k,
                                                            float *scores, long long *ids, char *err, int err_size) {
    // One query is a short scan: an OpenMP team costs more than it saves, and on a busy machine its
    // threads wait for cores (p90 of 37 ms against 0.5 ms single-threaded at 10k entries, HNSW).
    // The caller's thread gets its setting back.
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const int status = guarded(err, err_size, [&] {
        std::unique_ptr<faiss::Index::idx_t[]> labels(new faiss::Index::idx_t[static_cast<size_t>(k)]);
        index->index->search(1, query, k, scores, labels.get());
        for (int i = 0; i < k; ++i) ids[i] = static_cast<long long>(labels[static_cast<size_t>(i)]);
    });
    omp_set_num_threads(threads);
    return status;
}

__attribute__((visibility("default"))) int tad_faiss_write(const tad_faiss_index *index, const char *path, char *err,
                                                           int err_size) {
    return guarded(err, err_size, [&] { faiss::write_index(index->index.get(), path); });
}

__attribute__((visibility("default"))) int tad_faiss_read(const char *path, int ef_search, tad_faiss_index **out,
                                                          char *err, int err_size) {
    return guarded(err, err_size, [&] {
        auto made = std::make_unique<tad_faiss_index>();
        made->index.reset(faiss::read_index(path));
        if (auto *hnsw = dynamic_cast<faiss::IndexHNSW *>(made->index.get())) hnsw->hnsw.efSearch = ef_search;
        *out = made.release();
    });
}

__attribute__((visibility("default"))) long long tad_faiss_count(const tad_faiss_index *index) {
    return static_cast<long long>(index->index->ntotal);
}

__attribute__((visibility("default"))) int tad_faiss_dim(const tad_faiss_index *index) {
    return static_cast<int>(index->index->d);
}

__attribute__((visibility("default"))) int tad_faiss_kind(const tad_faiss_index *index) {
    return kind_of(index->index.get());
}

__attribute__((visibility("default"))) void tad_faiss_free(tad_faiss_index *index) { delete index; }

}  // extern "C"
