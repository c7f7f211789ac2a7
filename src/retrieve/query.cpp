#include "retrieve/query.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "retrieve/index.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::retrieve {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Six significant decimals: enough to rank, short enough to read.
double rounded(double x) { return std::round(x * 1e6) / 1e6; }

struct Dirs {
    std::string dataset, cache;
};

Dirs dirs_of(const Options &o) {
    Dirs d;
    d.dataset = fs::absolute(o.dataset_dir.empty() ? default_dataset_dir() : o.dataset_dir);
    d.cache = fs::absolute(o.cache_dir.empty() ? default_cache_dir(d.dataset) : o.cache_dir);
    return d;
}

// Where an entry's backward is: the sidecar's, else the generated one `tad dataset build` keeps in
// the cache (built when its record names this forward's text and says it passed).
void backward_json(JsonRef out, const Entry &e, const Dirs &d) {
    JsonRef b = out.set_object("backward");
    if (e.meta.get("backward").is_string()) {
        const std::string path = fs::absolute(fs::join(d.dataset, e.meta.get("backward").str()));
        b.set("kind", e.meta.str_or("backward_kind", "hand-written"));
        b.set("path", path);
        b.set_bool("exists", fs::exists(path));
        return;
    }
    const std::string dir = fs::join(d.cache, "backward");
    const std::string path = fs::join(dir, e.name + ".py"), record = fs::join(dir, e.name + ".json");
    bool built = false;
    if (fs::exists(path) && fs::exists(record)) {
        try {
            Json r = Json::parse(fs::read_file(record, 1 << 20), record);
            built = r.str_or("forward_hash", "") == hex_hash(e.source) && r.bool_or("passed", false);
        } catch (const Error &) {}
    }
    b.set("kind", "generated");
    b.set("path", path);
    b.set_bool("exists", built);
}

void counts_json(JsonRef out, const Features &f) {
    JsonRef c = out.set_object("counts");
    for (const auto &name : count_names()) c.set(name, f.count(name));
}

void strings_json(JsonRef out, const std::string &key, const std::vector<std::string> &items) {
    JsonRef a = out.set_array(key);
    for (const auto &s : items) a.push(s);
}

void why_json(JsonRef out, const Explanation &x) {
    JsonRef why = out.set_object("why");
    JsonRef groups = why.set_object("groups");
    for (int g = 0; g < kGroups; ++g) groups.set(group_name(static_cast<Group>(g)), rounded(x.cosine[g]));
    JsonRef matched = why.set_array("matched");
    for (const auto &m : x.matched) {
        JsonRef o = matched.push_object();
        o.set("feature", m.feature);
        o.set("group", group_name(m.group));
        o.set("contribution", rounded(m.contribution));
    }
}

JsonRef dataset_json(JsonRef out, const Dataset &ds, const Dirs &d, size_t entries,
                     const std::vector<Skipped> &skipped_entries) {
    JsonRef o = out.set_object("dataset");
    o.set("dir", ds.dir);
    o.set("cache_dir", d.cache);
    o.set("hash", ds.hash);
    o.set("entries", static_cast<int64_t>(entries));
    JsonRef skipped = o.set_array("skipped");
    for (const auto &s : skipped_entries) {
        JsonRef x = skipped.push_object();
        x.set("path", s.path);
        x.set("reason", s.reason);
    }
    return o;
}

bool excluded_by(const std::string &path, const std::vector<std::string> &subs) {
    for (const auto &s : subs)
        if (!s.empty() && path.find(s) != std::string::npos) return true;
    return false;
}

void check(const Options &o) {
    if (o.topk < 1) fail(TAD_ERR_INVALID_ARGUMENT, "topk must be at least 1, got " + std::to_string(o.topk));
    if (!(o.min_sim >= -1.0 && o.min_sim <= 1.0)) {
        char got[32];
        std::snprintf(got, sizeof got, "%g", o.min_sim);
        fail(TAD_ERR_INVALID_ARGUMENT, std::string("min_sim must be between -1 and 1, got ") + got);
    }
}

}  // namespace

std::string retrieve(const frontend::KernelFile &query, const Options &opts) {
    check(opts);
    const Dirs d = dirs_of(opts);
    Clock::time_point t0 = Clock::now();
    const Features q = extract(query);
    const double t_features = seconds_since(t0);
    t0 = Clock::now();
    const Dataset ds = open_dataset(d.dataset);
    bool rebuilt = false;
    const Index idx = Index::open(ds, d.cache, &rebuilt);
    const double t_index = seconds_since(t0);
    t0 = Clock::now();
    const auto hits =
        idx.search(q, opts.topk, [&](size_t i) { return excluded_by(idx.entries()[i].path, opts.exclude); });
    const double t_search = seconds_since(t0);

    std::map<std::string, const Entry *> by_name;
    for (const auto &e : ds.entries) by_name[e.name] = &e;
    Json r = Json::object();
    r.set("kind", "retrieve");
    JsonRef qj = r.set_object("query");
    qj.set("path", query.file.path);
    strings_json(qj, "lowered", q.lowered);
    strings_json(qj, "notes", q.notes);
    counts_json(qj, q);
    JsonRef dj = dataset_json(r, ds, d, idx.entries().size(), idx.skipped());
    dj.set("index", VectorIndex::kind_name(idx.vectors().kind()));
    dj.set_bool("rebuilt", rebuilt);
    JsonRef results = r.set_array("results");
    for (const auto &h : hits) {
        if (h.similarity < opts.min_sim) continue;
        const IndexedEntry &e = idx.entries()[h.entry];
        JsonRef o = results.push_object();
        o.set("rank", static_cast<int64_t>(results.size()));
        o.set("name", e.name);
        o.set("path", e.path);
        if (e.family.empty())
            o.set_null("family");
        else
            o.set("family", e.family);
        o.set("similarity", rounded(h.similarity));
        backward_json(o, *by_name.at(e.name), d);
        why_json(o, explain(q, e.features, idx.idf(), idx.weights()));
    }
    JsonRef secs = r.set_object("seconds");
    secs.set("features", t_features);
    secs.set("index", t_index);
    secs.set("search", t_search);
    return r.dump();
}

std::string dataset_listing(const Options &opts) {
    const Dirs d = dirs_of(opts);
    const Dataset ds = open_dataset(d.dataset);
    std::vector<Skipped> skipped;
    const std::vector<IndexedEntry> entries = analyse_entries(ds, skipped);
    std::map<std::string, const IndexedEntry *> indexed;
    for (const auto &e : entries) indexed[e.name] = &e;
    Json r = Json::object();
    r.set("kind", "dataset");
    dataset_json(r, ds, d, entries.size(), skipped);
    JsonRef list = r.set_array("entries");
    for (const Entry &e : ds.entries) {
        JsonRef o = list.push_object();
        o.set("name", e.name);
        o.set("path", e.path);
        o.set("source_hash", hex_hash(e.source));
        for (const char *key : {"family", "provenance"})
            if (e.meta.get(key).is_string())
                o.set(key, e.meta.get(key).str());
            else
                o.set_null(key);
        auto it = indexed.find(e.name);
        if (it != indexed.end())
            o.set("description", it->second->description);
        else
            o.set_null("description");
        backward_json(o, e, d);
        for (const char *key : {"gpu", "timings"})
            if (e.meta.get(key).valid())
                o.set_copy(key, e.meta.get(key));
            else
                o.set_null(key);
        if (it == indexed.end()) {
            o.set_null("features");
            continue;
        }
        JsonRef f = o.set_object("features");
        counts_json(f, it->second->features);
        strings_json(f, "lowered", it->second->features.lowered);
        strings_json(f, "notes", it->second->features.notes);
    }
    return r.dump();
}

}  // namespace tad::retrieve
