#include "retrieve/dataset.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "retrieve/embed.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::retrieve {

namespace {

bool ends_with(const std::string &s, const std::string &tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The sidecar of `e`, when there is one; a malformed one leaves `problem` set.
void read_meta(Entry &e, const std::string &dir) {
    e.meta = Json::object();
    const std::string path = fs::join(fs::join(dir, "meta"), e.name + ".json");
    if (!fs::exists(path)) return;
    e.meta_path = path;
    try {
        Json m = Json::parse(fs::read_file(path, 1 << 20), path);
        if (!m.is_object()) fail(TAD_ERR_SYNTAX, path + ": expected a JSON object");
        if (m.has("family") && !m.get("family").is_string() && !m.get("family").is_null())
            fail(TAD_ERR_SYNTAX, path + ": \"family\" must be a string or null");
        e.meta = std::move(m);
    } catch (const Error &err) {
        e.problem = err.what();
    }
}

}  // namespace

std::string Entry::family() const { return meta.valid() ? meta.str_or("family", "") : ""; }

std::string hex_hash(const std::string &text) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
    return buf;
}

Dataset open_dataset(const std::string &dir) {
    Dataset ds;
    ds.dir = fs::absolute(dir);
    if (!fs::is_directory(ds.dir)) fail(TAD_ERR_IO, dir + ": dataset directory not found");
    std::string digest = kFeatureVersion;
    for (const auto &name : fs::list_dir(ds.dir)) {
        const std::string path = fs::join(ds.dir, name);
        if (!ends_with(name, ".py") || fs::is_directory(path)) continue;
        Entry e;
        e.name = name.substr(0, name.size() - 3);
        e.path = path;
        e.source = fs::read_file(path, TAD_MAX_FORWARD_BYTES);
        read_meta(e, ds.dir);
        digest += "\n" + e.name + "\n" + hex_hash(e.source) + "\n" + e.meta.dump();
        ds.entries.push_back(std::move(e));
    }
    ds.hash = hex_hash(digest);
    return ds;
}

std::string default_dataset_dir() {
    if (const char *env = std::getenv("TAD_DATASET"); env && *env) return env;
    if (fs::is_directory(TAD_SOURCE_DATASET_DIR)) return TAD_SOURCE_DATASET_DIR;
    return TAD_INSTALL_DATASET_DIR;
}

std::string default_cache_dir(const std::string &dataset_dir) {
    const std::string abs = fs::absolute(dataset_dir);
    const std::string local = fs::join(abs, ".cache");
    if (fs::is_directory(local) ? ::access(local.c_str(), W_OK) == 0 : ::access(abs.c_str(), W_OK) == 0) return local;
    const char *xdg = std::getenv("XDG_CACHE_HOME");
    const char *home = std::getenv("HOME");
    std::string base = xdg && *xdg ? xdg : fs::join(home && *home ? home : "/tmp", ".cache");
    return fs::join(fs::join(base, "tad"), "dataset-" + hex_hash(abs));
}

}  // namespace tad::retrieve
