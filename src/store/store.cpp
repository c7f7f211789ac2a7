#include "store/store.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "store/lock.h"
#include "store/meta.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::store {

namespace {

const char kMeta[] = "meta.json";
const char kForward[] = "forward.py";
const char kBackward[] = "backward.py";
const char kLaunch[] = "launch.json";
const char kExplain[] = "explain.txt";
const char kCurrent[] = "current";
// Snapshots are assembled under this prefix and renamed into place; ids never start with '.'.
const char kTmpPrefix[] = ".tmp-";

void check_json(const std::optional<std::string> &text, const std::string &what) {
    if (text) Json::parse(*text, what);
}

std::optional<std::string> read_if_present(const std::string &path) {
    if (!fs::exists(path)) return std::nullopt;
    return fs::read_file(path);
}

SnapshotInfo read_info(const std::string &dir, const std::string &id) {
    std::string meta_path = fs::join(dir, kMeta);
    SnapshotInfo info = meta_from_json(fs::read_file(meta_path), id, meta_path);
    info.has_verify = fs::exists(fs::join(dir, "verify.json"));
    info.has_bench = fs::exists(fs::join(dir, "bench.json"));
    if (info.has_verify) {
        // A damaged report only loses its verdict; the snapshot itself stays listed.
        try {
            Json verify = Json::parse(fs::read_file(fs::join(dir, "verify.json")), "verify.json");
            if (verify.get("passed").is_bool()) info.passed = verify.get("passed").boolean();
        } catch (const Error &) {}
    }
    return info;
}

// Everything but meta.json, which names the id: that is only known under the lock.
void write_snapshot_files(const std::string &dir, const Candidate &c) {
    fs::write_file_atomic(fs::join(dir, kForward), c.forward_source);
    fs::write_file_atomic(fs::join(dir, kBackward), c.backward_source);
    if (c.launch_json) fs::write_file_atomic(fs::join(dir, kLaunch), *c.launch_json);
    if (c.explain) fs::write_file_atomic(fs::join(dir, kExplain), *c.explain);
    if (c.verify_json) fs::write_file_atomic(fs::join(dir, "verify.json"), *c.verify_json);
    if (c.bench_json) fs::write_file_atomic(fs::join(dir, "bench.json"), *c.bench_json);
}

}  // namespace

Store Store::open(const std::string &work_dir) {
    Store s(fs::absolute(work_dir));
    fs::make_dirs(s.snapshots_dir());
    std::string current = fs::join(s.work_dir_, kCurrent);
    if (fs::exists(current)) fs::read_file(current);  // a directory or unreadable file fails here
    return s;
}

std::string Store::snapshots_dir() const { return fs::join(work_dir_, "snapshots"); }

std::string Store::snapshot_dir(const std::string &id) const {
    std::string dir = fs::join(snapshots_dir(), id);
    if (!is_snapshot_id(id) || !fs::is_directory(dir)) fail(TAD_ERR_NOT_FOUND, "unknown snapshot '" + id + "'");
    return dir;
}

int64_t Store::next_seq() const {
    // Damaged snapshots count too, so that their ids are never reused.
    int64_t last = 0;
    for (const std::string &name : fs::list_dir(snapshots_dir()))
        if (is_snapshot_id(name)) last = std::max(last, seq_of(name));
    return last + 1;
}

std::string Store::add(const Candidate &c, bool make_current) {
    if (c.kind != "generate" && c.kind != "snapshot")
        fail(TAD_ERR_INVALID_ARGUMENT, "unknown snapshot kind '" + c.kind + "' (expected generate or snapshot)");
    check_json(c.launch_json, "launch record");
    check_json(c.verify_json, "verify report");
    check_json(c.bench_json, "bench report");

    SnapshotInfo info;
    info.label = c.label;
    info.parent = c.parent;
    info.forward_path = c.forward_path;
    info.backend = c.backend;
    info.loops = c.loops;
    info.kind = c.kind;
    info.forward_hash = content_hash(c.forward_source);

    std::string tmp = fs::make_unique_dir(snapshots_dir(), kTmpPrefix);
    try {
        write_snapshot_files(tmp, c);
        // Other processes may add to this directory at the same time: the id is allocated and taken
        // (the rename) under the lock, and `current` set there, so the last to add (and make
        // current) is current.
        DirLock lock(work_dir_);
        info.seq = next_seq();
        info.id = make_id(info.seq, c);
        info.created = utc_now_iso8601();
        fs::write_file_atomic(fs::join(tmp, kMeta), meta_to_json(info).dump(true) + "\n");
        fs::sync_dir(tmp);
        fs::rename_path(tmp, fs::join(snapshots_dir(), info.id));
        fs::sync_dir(snapshots_dir());
        if (make_current) set_current(info.id);
    } catch (const Error &) {
        try {
            fs::remove_tree(tmp);
        } catch (const Error &) {
            // Readers ignore .tmp-* directories; the first error is the one worth reporting.
        }
        throw;
    }
    return info.id;
}

Candidate Store::load(const std::string &id) const {
    std::string dir = snapshot_dir(id);
    SnapshotInfo info = read_info(dir, id);
    Candidate c;
    c.label = info.label;
    c.parent = info.parent;
    c.forward_path = info.forward_path;
    c.backend = info.backend;
    c.loops = info.loops;
    c.kind = info.kind;
    c.forward_source = fs::read_file(fs::join(dir, kForward));
    if (!info.forward_hash.empty() && content_hash(c.forward_source) != info.forward_hash)
        fail(TAD_ERR_IO, fs::join(dir, kForward) +
                             ": does not match its content hash in meta.json (changed since the snapshot was taken)");
    c.backward_source = fs::read_file(fs::join(dir, kBackward));
    c.launch_json = read_if_present(fs::join(dir, kLaunch));
    c.explain = read_if_present(fs::join(dir, kExplain));
    c.verify_json = read_if_present(fs::join(dir, "verify.json"));
    c.bench_json = read_if_present(fs::join(dir, "bench.json"));
    return c;
}

void Store::set_report(const std::string &id, const std::string &name, const std::string &json) {
    if (name != "verify" && name != "bench")
        fail(TAD_ERR_INVALID_ARGUMENT, "unknown report '" + name + "' (expected verify or bench)");
    std::string dir = snapshot_dir(id);
    Json::parse(json, name + " report");
    fs::write_file_atomic(fs::join(dir, name + ".json"), json);
}

std::vector<SnapshotInfo> Store::list() const {
    std::vector<SnapshotInfo> out;
    for (const std::string &name : fs::list_dir(snapshots_dir())) {
        std::string dir = fs::join(snapshots_dir(), name);
        if (!is_snapshot_id(name) || !fs::is_directory(dir)) continue;
        try {
            out.push_back(read_info(dir, name));
        } catch (const Error &) {
            // One damaged snapshot must not hide the others; load() reports what is wrong with it.
        }
    }
    std::sort(out.begin(), out.end(), [](const SnapshotInfo &a, const SnapshotInfo &b) {
        return a.seq != b.seq ? a.seq < b.seq : a.id < b.id;
    });
    return out;
}

std::string Store::list_json() const {
    Json arr = Json::array();
    for (const SnapshotInfo &info : list()) {
        Json item = meta_to_json(info);
        item.set_bool("has_verify", info.has_verify);
        item.set_bool("has_bench", info.has_bench);
        if (info.passed)
            item.set_bool("passed", *info.passed);
        else
            item.set_null("passed");
        arr.push_copy(item);
    }
    return arr.dump(true);
}

std::optional<std::string> Store::current() const {
    std::string path = fs::join(work_dir_, kCurrent);
    if (!fs::exists(path)) return std::nullopt;
    std::string id = fs::read_file(path);
    while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back()))) id.pop_back();
    if (!is_snapshot_id(id) || !fs::is_directory(fs::join(snapshots_dir(), id))) return std::nullopt;
    return id;
}

void Store::set_current(const std::string &id) {
    snapshot_dir(id);
    fs::write_file_atomic(fs::join(work_dir_, kCurrent), id + "\n");
}

void Store::clear_current() {
    std::string path = fs::join(work_dir_, kCurrent);
    if (fs::exists(path) && std::remove(path.c_str()) != 0) fail(TAD_ERR_IO, path + ": cannot remove");
}

}  // namespace tad::store
