/* The interface of libtad_faiss.so, the plugin that holds FAISS (src/retrieve/faiss/plugin.cpp).
 *
 * Debian ships FAISS as a static library that needs BLAS, LAPACK and gfortran at run time. Linked
 * into libtad, it would make libtad unloadable where those are missing (the GPU machine); in a
 * plugin loaded on the first retrieval (vector_index.cpp), only retrieval needs them.
 *
 * C functions so that nothing C++ crosses the dlopen boundary; each returns 0 or -1 with a message
 * in `err` (at most err_size bytes, NUL-terminated). */
#ifndef TAD_FAISS_PLUGIN_H
#define TAD_FAISS_PLUGIN_H

#ifdef __cplusplus
extern "C" {
#endif

#define TAD_FAISS_PLUGIN_ABI 1

enum { TAD_FAISS_FLAT = 0, TAD_FAISS_HNSW = 1 };

typedef struct tad_faiss_index tad_faiss_index;

int tad_faiss_abi(void);
/* An empty index of `dim` floats per vector, scored by inner product: TAD_FAISS_FLAT (exact,
 * IndexFlatIP) or TAD_FAISS_HNSW (IndexHNSWFlat, M = hnsw_m, efSearch = ef_search). */
int tad_faiss_create(int dim, int kind, int hnsw_m, int ef_search, tad_faiss_index **out, char *err, int err_size);
int tad_faiss_add(tad_faiss_index *index, long long n, const float *vectors, char *err, int err_size);
/* The k best (inner product, id) of one query, best first; ids of -1 past the index's size. */
int tad_faiss_search(const tad_faiss_index *index, const float *query, int k, float *scores, long long *ids, char *err,
                     int err_size);
int tad_faiss_write(const tad_faiss_index *index, const char *path, char *err, int err_size);
int tad_faiss_read(const char *path, int ef_search, tad_faiss_index **out, char *err, int err_size);
long long tad_faiss_count(const tad_faiss_index *index);
int tad_faiss_dim(const tad_faiss_index *index);
int tad_faiss_kind(const tad_faiss_index *index);
void tad_faiss_free(tad_faiss_index *index);

#ifdef __cplusplus
}
#endif
#endif
