#include "retrieve/index.h"

#include "frontend/parser.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::retrieve {

namespace {

constexpr int64_t kFormat = 1;

Json features_json(const Features &f) {
    Json j = Json::object();
    for (int g = 0; g < kGroups; ++g) {
        JsonRef group = j.set_object(group_name(static_cast<Group>(g)));
        for (const auto &[name, raw] : f.groups[g]) group.set(name, raw);
    }
    JsonRef lowered = j.set_array("lowered");
    for (const auto &k : f.lowered) lowered.push(k);
    JsonRef notes = j.set_array("notes");
    for (const auto &n : f.notes) notes.push(n);
    return j;
}

Features features_of(JsonRef j) {
    Features f;
    for (int g = 0; g < kGroups; ++g) {
        JsonRef group = j.at(group_name(static_cast<Group>(g)));
        for (const auto &name : group.keys()) f.groups[g][name] = group.at(name).num();
    }
    for (size_t i = 0; i < j.at("lowered").size(); ++i) f.lowered.push_back(j.at("lowered")[i].str());
    for (size_t i = 0; i < j.at("notes").size(); ++i) f.notes.push_back(j.at("notes")[i].str());
    return f;
}

Json weights_json(const Weights &w) {
    Json j = Json::array();
    for (double x : w.w) j.push(x);
    return j;
}

std::string index_json_path(const std::string &cache) { return fs::join(cache, "index.json"); }
std::string index_faiss_path(const std::string &cache) { return fs::join(cache, "index.faiss"); }

std::string docstring_line(const ast::File &f) {
    const ast::NodeList &body = f.module->list("body");
    if (body.empty() || !body[0]->is("Expr") || !body[0]->node("value")->is("Constant")) return "";
    const ast::Value &v = *body[0]->node("value")->find("value");
    if (!std::holds_alternative<std::string>(v)) return "";
    const std::string &doc = std::get<std::string>(v);
    return doc.substr(0, doc.find('\n'));
}

}  // namespace

std::vector<IndexedEntry> analyse_entries(const Dataset &ds, std::vector<Skipped> &skipped) {
    std::vector<IndexedEntry> out;
    for (const Entry &e : ds.entries) {
        if (!e.problem.empty()) {
            skipped.push_back({e.path, e.problem});
            continue;
        }
        try {
            frontend::KernelFile kf = frontend::analyze(frontend::parse_source(e.path, e.source));
            out.push_back({e.name, e.path, e.family(), extract(kf), docstring_line(kf.file)});
        } catch (const Error &err) {
            skipped.push_back({e.path, err.what()});
        }
    }
    return out;
}

Index Index::build(std::vector<IndexedEntry> entries, const Weights &w) {
    const VectorIndex::Kind kind = VectorIndex::kind_for(static_cast<int64_t>(entries.size()));
    return build(std::move(entries), kind, w);
}

Index Index::build(std::vector<IndexedEntry> entries, VectorIndex::Kind kind, const Weights &w) {
    Idf idf;
    for (const auto &e : entries) idf.add(e.features);
    std::vector<float> all;
    all.reserve(entries.size() * static_cast<size_t>(kDim));
    for (const auto &e : entries) {
        std::vector<float> v = embed(e.features, idf, w);
        all.insert(all.end(), v.begin(), v.end());
    }
    VectorIndex vectors(kDim, kind);
    vectors.add(all);
    return Index(std::move(entries), std::move(idf), std::move(vectors), w);
}

Index Index::open(const Dataset &ds, const std::string &cache_dir, bool *rebuilt) {
    if (std::optional<Index> cached = read(ds, cache_dir)) {
        if (rebuilt) *rebuilt = false;
        return std::move(*cached);
    }
    std::vector<Skipped> skipped;
    Index idx = build(analyse_entries(ds, skipped));
    idx.skipped_ = std::move(skipped);
    idx.write(ds, cache_dir);
    if (rebuilt) *rebuilt = true;
    return idx;
}

std::optional<Index> Index::read(const Dataset &ds, const std::string &cache_dir) {
    const std::string json_path = index_json_path(cache_dir), faiss_path = index_faiss_path(cache_dir);
    if (!fs::exists(json_path) || !fs::exists(faiss_path)) return std::nullopt;
    try {
        Json j = Json::parse(fs::read_file(json_path), json_path);
        const Weights w;
        if (j.int_or("format", 0) != kFormat || j.str_or("features", "") != kFeatureVersion ||
            j.str_or("dataset_hash", "") != ds.hash || j.at("weights").dump() != weights_json(w).dump())
            return std::nullopt;
        std::vector<IndexedEntry> entries;
        JsonRef list = j.at("entries");
        for (size_t i = 0; i < list.size(); ++i) {
            const std::string name = list[i].at("name").str();
            entries.push_back({name, fs::join(ds.dir, name + ".py"), list[i].str_or("family", ""),
                               features_of(list[i].at("features")), list[i].str_or("description", "")});
        }
        Idf idf;
        for (const auto &e : entries) idf.add(e.features);
        VectorIndex vectors = VectorIndex::read(faiss_path);
        if (vectors.size() != static_cast<int64_t>(entries.size()) || vectors.dim() != kDim) return std::nullopt;
        Index idx(std::move(entries), std::move(idf), std::move(vectors), w);
        JsonRef skipped = j.at("skipped");
        for (size_t i = 0; i < skipped.size(); ++i)
            idx.skipped_.push_back({skipped[i].at("path").str(), skipped[i].at("reason").str()});
        return idx;
    } catch (const Error &) {
        return std::nullopt;  // a damaged or partial cache is rebuilt
    }
}

void Index::write(const Dataset &ds, const std::string &cache_dir) const {
    fs::make_dirs(cache_dir);
    Json j = Json::object();
    j.set("format", kFormat);
    j.set("features", kFeatureVersion);
    j.set("dataset_hash", ds.hash);
    j.set("dataset_dir", ds.dir);
    j.set("dim", static_cast<int64_t>(kDim));
    j.set("kind", VectorIndex::kind_name(vectors_.kind()));
    j.set_copy("weights", weights_json(weights_));
    JsonRef list = j.set_array("entries");
    for (const auto &e : entries_) {
        JsonRef o = list.push_object();
        o.set("name", e.name);
        o.set("family", e.family);
        o.set("description", e.description);
        o.set_copy("features", features_json(e.features));
    }
    JsonRef skipped = j.set_array("skipped");
    for (const auto &s : skipped_) {
        JsonRef o = skipped.push_object();
        o.set("path", s.path);
        o.set("reason", s.reason);
    }
    // The vectors first: a reader that finds the new index.json finds the index.faiss it describes
    // (a reader between the two renames sees a count or hash mismatch and rebuilds).
    vectors_.write(index_faiss_path(cache_dir));
    fs::write_file_atomic(index_json_path(cache_dir), j.dump());
}

std::vector<Index::Hit> Index::search_vector(const std::vector<float> &query, int k, size_t excluded_count,
                                             const std::function<bool(size_t)> &excluded) const {
    std::vector<Hit> out;
    const int want = k + static_cast<int>(std::min<size_t>(excluded_count, entries_.size()));
    for (const auto &h : vectors_.search(query.data(), want)) {
        const size_t i = static_cast<size_t>(h.id);
        if (excluded && excluded(i)) continue;
        out.push_back({i, h.score});
        if (static_cast<int>(out.size()) == k) break;
    }
    return out;
}

}  // namespace tad::retrieve
