// Loads libtad_faiss.so once per process and forwards to it.
#include "retrieve/vector_index.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "retrieve/faiss_plugin.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::retrieve {

namespace {

struct Plugin {
    std::string path, problem;
    decltype(&tad_faiss_create) create = nullptr;
    decltype(&tad_faiss_add) add = nullptr;
    decltype(&tad_faiss_search) search = nullptr;
    decltype(&tad_faiss_write) write = nullptr;
    decltype(&tad_faiss_read) read = nullptr;
    decltype(&tad_faiss_count) count = nullptr;
    decltype(&tad_faiss_dim) dim = nullptr;
    decltype(&tad_faiss_kind) kind = nullptr;
    decltype(&tad_faiss_free) free = nullptr;
};

std::string own_directory() {
    Dl_info info;
    if (!::dladdr(reinterpret_cast<void *>(&faiss_plugin_path), &info) || !info.dli_fname) return "";
    char resolved[PATH_MAX];
    std::string own = ::realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    size_t slash = own.rfind('/');
    return slash == std::string::npos ? "." : own.substr(0, slash);
}

std::vector<std::string> candidates() {
    std::vector<std::string> out;
    if (const char *env = ::getenv("TAD_FAISS_PLUGIN"); env && *env) return {env};
    std::string own = own_directory();
    if (!own.empty()) out.push_back(own + "/libtad_faiss.so");
    out.push_back(TAD_BUILD_FAISS_PLUGIN);
    out.push_back(TAD_INSTALL_FAISS_PLUGIN);
    return out;
}

template <typename F> void bind(void *handle, const char *name, F &slot) {
    slot = reinterpret_cast<F>(::dlsym(handle, name));
    if (!slot) throw std::string("no symbol ") + name;
}

void bind_all(void *h, Plugin &p) {
    decltype(&tad_faiss_abi) abi = nullptr;
    bind(h, "tad_faiss_abi", abi);
    if (abi() != TAD_FAISS_PLUGIN_ABI) throw std::string("plugin ABI ") + std::to_string(abi()) + ", expected 1";
    bind(h, "tad_faiss_create", p.create);
    bind(h, "tad_faiss_add", p.add);
    bind(h, "tad_faiss_search", p.search);
    bind(h, "tad_faiss_write", p.write);
    bind(h, "tad_faiss_read", p.read);
    bind(h, "tad_faiss_count", p.count);
    bind(h, "tad_faiss_dim", p.dim);
    bind(h, "tad_faiss_kind", p.kind);
    bind(h, "tad_faiss_free", p.free);
}

Plugin load() {
    Plugin p;
    std::string tried;
    for (const auto &path : candidates()) {
        if (!fs::exists(path)) {
            tried += (tried.empty() ? "" : ", ") + path + " (absent)";
            continue;
        }
        void *h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            tried += (tried.empty() ? "" : ", ") + std::string(::dlerror());
            continue;
        }
        try {
            bind_all(h, p);
            p.path = path;
            return p;
        } catch (const std::string &why) {
            tried += (tried.empty() ? "" : ", ") + path + ": " + why;
            ::dlclose(h);
        }
    }
    p.problem = "not loaded: " + tried;
    return p;
}

const Plugin &plugin() {
    static std::once_flag once;
    static Plugin p;
    std::call_once(once, [] { p = load(); });
    if (!p.problem.empty())
        fail(TAD_ERR_UNSUPPORTED,
             "retrieval needs libtad_faiss.so (FAISS; scripts/setup.sh installs libfaiss-dev): " + p.problem);
    return p;
}

// Runs a plugin call that reports failures through an error buffer.
template <typename Call> void checked(const std::string &what, Call &&call, int status = TAD_ERR_INTERNAL) {
    char err[512] = "";
    if (call(err, static_cast<int>(sizeof err)) != 0) fail(status, what + ": " + err);
}

}  // namespace

std::string faiss_plugin_path() { return plugin().path; }

VectorIndex::VectorIndex(int dim, Kind kind) {
    const Plugin &p = plugin();
    const int k = kind == Kind::Hnsw ? TAD_FAISS_HNSW : TAD_FAISS_FLAT;
    checked("FAISS: cannot create an index",
            [&](char *e, int n) { return p.create(dim, k, kHnswM, kHnswEfSearch, &h_, e, n); });
}

VectorIndex VectorIndex::read(const std::string &path) {
    const Plugin &p = plugin();
    tad_faiss_index *h = nullptr;
    checked(
        path + ": cannot read index", [&](char *e, int n) { return p.read(path.c_str(), kHnswEfSearch, &h, e, n); },
        TAD_ERR_IO);
    return VectorIndex(h);
}

VectorIndex::VectorIndex(VectorIndex &&o) noexcept : h_(o.h_) { o.h_ = nullptr; }

VectorIndex &VectorIndex::operator=(VectorIndex &&o) noexcept {
    if (this != &o) {
        if (h_) plugin().free(h_);
        h_ = o.h_;
        o.h_ = nullptr;
    }
    return *this;
}

VectorIndex::~VectorIndex() {
    if (h_) plugin().free(h_);
}

void VectorIndex::add(const std::vector<float> &vectors) {
    const long long n = static_cast<long long>(vectors.size()) / dim();
    checked("FAISS: cannot add vectors", [&](char *e, int len) { return plugin().add(h_, n, vectors.data(), e, len); });
}

std::vector<VectorIndex::Hit> VectorIndex::search(const float *query, int k) const {
    k = static_cast<int>(std::min<int64_t>(k, size()));
    if (k <= 0) return {};
    std::vector<float> scores(static_cast<size_t>(k));
    std::vector<long long> ids(static_cast<size_t>(k));
    checked("FAISS: search failed",
            [&](char *e, int n) { return plugin().search(h_, query, k, scores.data(), ids.data(), e, n); });
    std::vector<Hit> out;
    for (int i = 0; i < k; ++i)
        if (ids[static_cast<size_t>(i)] >= 0)
            out.push_back({ids[static_cast<size_t>(i)], scores[static_cast<size_t>(i)]});
    return out;
}

void VectorIndex::write(const std::string &path) const {
    // Unique per process and call: threads of one process may write the same cache at once.
    static std::atomic<unsigned> calls{0};
    const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(calls++);
    checked(
        path + ": cannot write index", [&](char *e, int n) { return plugin().write(h_, tmp.c_str(), e, n); },
        TAD_ERR_IO);
    fs::rename_path(tmp, path);
}

int64_t VectorIndex::size() const { return plugin().count(h_); }
int VectorIndex::dim() const { return plugin().dim(h_); }
VectorIndex::Kind VectorIndex::kind() const { return plugin().kind(h_) == TAD_FAISS_HNSW ? Kind::Hnsw : Kind::Flat; }

}  // namespace tad::retrieve
