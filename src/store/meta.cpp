#include "store/meta.h"

#include <cctype>
#include <cstdio>
#include <ctime>

#include "support/error.h"

namespace tad::store {

namespace {

// FNV-1a: the hash only makes ids tell candidates apart at a glance; uniqueness comes from seq.
uint64_t fnv1a(uint64_t h, const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;  // a separator, so ("ab","c") and ("a","bc") differ
}

}  // namespace

std::string make_id(int64_t seq, const Candidate &c) {
    uint64_t h = 14695981039346656037ull;
    for (const std::string *s :
         {&c.label, &c.forward_path, &c.forward_source, &c.backend, &c.loops, &c.kind, &c.backward_source})
        h = fnv1a(h, *s);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04lld-%08x", static_cast<long long>(seq),
                  static_cast<unsigned>((h >> 32) ^ (h & 0xffffffffu)));
    return buf;
}

std::string content_hash(const std::string &text) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(14695981039346656037ull, text)));
    return buf;
}

bool is_snapshot_id(const std::string &name) {
    size_t dash = name.find('-');
    if (dash == std::string::npos || dash < 4 || dash > 18 || name.size() != dash + 9) return false;
    for (size_t i = 0; i < dash; ++i)
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    for (size_t i = dash + 1; i < name.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(name[i])) && (name[i] < 'a' || name[i] > 'f')) return false;
    return true;
}

int64_t seq_of(const std::string &id) { return std::stoll(id.substr(0, id.find('-'))); }

std::string utc_now_iso8601() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

Json meta_to_json(const SnapshotInfo &info) {
    Json j = Json::object();
    j.set("id", info.id);
    j.set("seq", info.seq);
    j.set("label", info.label);
    j.set("created", info.created);
    if (info.parent)
        j.set("parent", *info.parent);
    else
        j.set_null("parent");
    j.set("forward_path", info.forward_path);
    j.set("backend", info.backend);
    if (!info.loops.empty()) j.set("loops", info.loops);
    j.set("kind", info.kind);
    if (!info.forward_hash.empty()) j.set("forward_hash", info.forward_hash);
    return j;
}

SnapshotInfo meta_from_json(const std::string &text, const std::string &id, const std::string &path) {
    Json j;
    try {
        j = Json::parse(text, path);
    } catch (const Error &e) {
        fail(TAD_ERR_IO, e.what());
    }
    try {
        SnapshotInfo info;
        info.id = j.at("id").str();
        info.seq = j.at("seq").integer();
        info.label = j.at("label").str();
        info.created = j.at("created").str();
        if (!j.at("parent").is_null()) info.parent = j.at("parent").str();
        info.forward_path = j.at("forward_path").str();
        info.backend = j.at("backend").str();
        info.loops = j.str_or("loops", "");
        info.kind = j.at("kind").str();
        info.forward_hash = j.str_or("forward_hash", "");
        if (info.id != id || info.seq != seq_of(id))
            fail(TAD_ERR_IO, "id '" + info.id + "' does not match its directory");
        return info;
    } catch (const Error &e) {
        fail(TAD_ERR_IO, path + ": damaged snapshot metadata: " + e.what());
    }
}

}  // namespace tad::store
