#include <gtest/gtest.h>

#include "../common/error_of.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "store/meta.h"
#include "store/store.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

namespace fs = tad::fs;
using tad::Json;
using tad::store::Candidate;
using tad::store::Store;

using tad::testing::error_of;

namespace {

Candidate candidate(const std::string &label, const std::string &backward = "def bwd(): pass\n") {
    Candidate c;
    c.label = label;
    c.forward_path = "/src/layernorm.py";
    c.forward_source = "@triton.jit\ndef fwd(): pass\n";
    c.backend = "triton";
    c.kind = "generate";
    c.backward_source = backward;
    return c;
}

std::vector<std::string> listed_ids(const Store &s) {
    std::vector<std::string> ids;
    for (const auto &info : s.list()) ids.push_back(info.id);
    return ids;
}

}  // namespace

TEST(Store, FreshStoreIsEmpty) {
    fs::TempDir tmp;
    Store s = Store::open(fs::join(tmp.path(), "work"));
    EXPECT_TRUE(s.list().empty());
    EXPECT_EQ(s.list_json(), "[]");
    EXPECT_FALSE(s.current().has_value());
    EXPECT_TRUE(fs::is_directory(fs::join(tmp.path(), "work/snapshots")));
}

TEST(Store, AddThenLoadRoundTripsEveryField) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    Candidate c = candidate("first");
    c.parent = "0000-00000000";
    c.kind = "snapshot";
    c.launch_json = R"({"grid": [4]})";
    c.verify_json = R"({"passed": true})";
    c.bench_json = R"({"ms": 0.25})";
    std::string id = s.add(c);
    Candidate back = s.load(id);
    EXPECT_EQ(back.label, "first");
    EXPECT_EQ(back.parent, c.parent);
    EXPECT_EQ(back.forward_path, c.forward_path);
    EXPECT_EQ(back.forward_source, c.forward_source);
    EXPECT_EQ(back.backend, "triton");
    EXPECT_EQ(back.kind, "snapshot");
    EXPECT_EQ(back.backward_source, c.backward_source);
    EXPECT_EQ(back.launch_json, c.launch_json);
    EXPECT_EQ(back.verify_json, c.verify_json);
    EXPECT_EQ(back.bench_json, c.bench_json);
}

TEST(Store, AbsentOptionalsStayAbsent) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string id = s.add(candidate("bare"));
    Candidate back = s.load(id);
    EXPECT_FALSE(back.parent);
    EXPECT_FALSE(back.launch_json);
    EXPECT_FALSE(back.verify_json);
    EXPECT_FALSE(back.bench_json);
    EXPECT_EQ(fs::list_dir(fs::join(tmp.path(), "snapshots/" + id)),
              (std::vector<std::string>{"backward.py", "forward.py", "meta.json"}));
}

TEST(Store, OnDiskLayoutMatchesTheDocs) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    Candidate c = candidate("layout");
    c.launch_json = "{}";
    std::string id = s.add(c);
    std::string dir = fs::join(tmp.path(), "snapshots/" + id);
    EXPECT_EQ(fs::read_file(fs::join(tmp.path(), "current")), id + "\n");
    EXPECT_EQ(fs::read_file(fs::join(dir, "forward.py")), c.forward_source);
    EXPECT_EQ(fs::read_file(fs::join(dir, "backward.py")), c.backward_source);
    EXPECT_EQ(fs::read_file(fs::join(dir, "launch.json")), "{}");
    Json meta = Json::parse(fs::read_file(fs::join(dir, "meta.json")), "meta");
    EXPECT_EQ(meta.at("id").str(), id);
    EXPECT_EQ(meta.at("seq").integer(), 1);
    EXPECT_EQ(meta.at("label").str(), "layout");
    EXPECT_TRUE(std::regex_match(meta.at("created").str(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
    EXPECT_TRUE(meta.at("parent").is_null());
    EXPECT_EQ(meta.at("forward_path").str(), "/src/layernorm.py");
    EXPECT_EQ(meta.at("backend").str(), "triton");
    EXPECT_EQ(meta.at("kind").str(), "generate");
    EXPECT_EQ(meta.at("forward_hash").str(), tad::store::content_hash(c.forward_source));
    EXPECT_EQ(meta.at("forward_hash").str().size(), 16u);
}

// A forward.py changed after the snapshot was taken is refused before anything executes it (a
// rollback loads it); one from before forward hashes were kept loads as it is.
TEST(Store, ForwardSourceMustMatchItsContentHash) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    const std::string id = s.add(candidate("kept")), dir = fs::join(tmp.path(), "snapshots/" + id);
    fs::write_file_atomic(fs::join(dir, "forward.py"), "import os\nos.system('echo changed')\n");
    EXPECT_EQ(error_of([&] { s.load(id); }),
              std::make_pair(int(TAD_ERR_IO), fs::join(dir, "forward.py") +
                                                  ": does not match its content hash in meta.json (changed since "
                                                  "the snapshot was taken)"));
    Json meta = Json::parse(fs::read_file(fs::join(dir, "meta.json")), "meta");
    meta.remove("forward_hash");
    fs::write_file_atomic(fs::join(dir, "meta.json"), meta.dump(true));
    EXPECT_EQ(s.load(id).forward_source, "import os\nos.system('echo changed')\n");
}

TEST(Store, AddMakesCurrentAndRollbackMovesIt) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string a = s.add(candidate("a", "A\n"));
    EXPECT_EQ(s.current(), a);
    std::string b = s.add(candidate("b", "B\n"));
    EXPECT_EQ(s.current(), b);

    s.set_current(a);
    EXPECT_EQ(s.current(), a);
    EXPECT_EQ(s.load(*s.current()).backward_source, "A\n");
    EXPECT_EQ(Store::open(tmp.path()).current(), a);  // survives reopening

    Candidate c = candidate("c", "C\n");
    c.parent = a;
    std::string cid = s.add(c);
    EXPECT_EQ(s.current(), cid);
    EXPECT_EQ(listed_ids(s), (std::vector<std::string>{a, b, cid}));
    EXPECT_EQ(s.list()[2].parent, a);
}

// What an LLM optimization keeps for the record (driver/optimize.h) is listed but not current, and a
// session that had no current candidate can be restored to having none.
TEST(Store, AddWithoutMakingCurrentAndClearCurrent) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string a = s.add(candidate("a", "A\n"));
    std::string b = s.add(candidate("b", "B\n"), false);
    EXPECT_EQ(s.current(), a);
    EXPECT_EQ(listed_ids(s), (std::vector<std::string>{a, b}));
    EXPECT_EQ(s.load(b).backward_source, "B\n");
    s.clear_current();
    EXPECT_FALSE(s.current());
    EXPECT_FALSE(fs::exists(fs::join(tmp.path(), "current")));
    s.clear_current();  // nothing to clear: fine
    const std::string c = s.add(candidate("c", "C\n"), false);
    EXPECT_EQ(s.list().back().id, c);
    EXPECT_FALSE(s.current());
}

TEST(Store, UnknownIdErrorsAreExact) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    s.add(candidate("a"));
    auto not_found = [](const std::string &id) {
        return std::make_pair(int(TAD_ERR_NOT_FOUND), "unknown snapshot '" + id + "'");
    };
    EXPECT_EQ(error_of([&] { s.load("0042-deadbeef"); }), not_found("0042-deadbeef"));
    EXPECT_EQ(error_of([&] { s.load("../snapshots"); }), not_found("../snapshots"));
    EXPECT_EQ(error_of([&] { s.load(""); }), not_found(""));
    EXPECT_EQ(error_of([&] { s.set_current("0042-deadbeef"); }), not_found("0042-deadbeef"));
    EXPECT_EQ(error_of([&] { s.set_report("nope", "verify", "{}"); }), not_found("nope"));
}

TEST(Store, IdsAreSortableUniqueAndWellFormed) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::vector<std::string> ids;
    for (int i = 0; i < 12; ++i) ids.push_back(s.add(candidate("same")));  // identical content
    std::set<std::string> unique(ids.begin(), ids.end());
    EXPECT_EQ(unique.size(), ids.size());
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    EXPECT_EQ(listed_ids(s), ids);
    for (const auto &id : ids) EXPECT_TRUE(std::regex_match(id, std::regex("[0-9]{4}-[0-9a-f]{8}"))) << id;
    EXPECT_EQ(ids[0].substr(0, 5), "0001-");
    EXPECT_EQ(ids[11].substr(0, 5), "0012-");
    EXPECT_EQ(ids[0].substr(5), ids[1].substr(5));  // the hash part is a hash of the content
    EXPECT_NE(s.add(candidate("other")).substr(5), ids[0].substr(5));
}

TEST(Store, TwoStoresOnOneDirectoryGetDistinctIds) {
    fs::TempDir tmp;
    Store first = Store::open(tmp.path());
    Store second = Store::open(tmp.path());
    std::string a = first.add(candidate("x"));
    std::string b = second.add(candidate("x"));
    std::string c = first.add(candidate("x"));
    EXPECT_EQ(std::set<std::string>({a, b, c}).size(), 3u);
    EXPECT_EQ(listed_ids(second), (std::vector<std::string>{a, b, c}));
    EXPECT_EQ(second.current(), c);
}

// Processes adding identical candidates to one directory at once: the lock around id allocation
// keeps every id distinct and every snapshot, and `current` names one of them.
TEST(Store, ConcurrentProcessesGetDistinctIdsAndLoseNothing) {
    fs::TempDir tmp;
    Store::open(tmp.path());
    const int kProcesses = 8, kAdds = 10;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
        pid_t pid = fork();
        if (pid == 0) {
            try {
                Store s = Store::open(tmp.path());
                for (int i = 0; i < kAdds; ++i) s.add(candidate("same"));
            } catch (...) {
                _exit(1);
            }
            _exit(0);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = -1;
        waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
    }
    Store s = Store::open(tmp.path());
    std::set<int64_t> seqs;
    for (const auto &info : s.list()) seqs.insert(info.seq);
    std::vector<std::string> ids = listed_ids(s);
    EXPECT_EQ(ids.size(), static_cast<size_t>(kProcesses * kAdds));
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
    EXPECT_EQ(seqs.size(), ids.size());
    EXPECT_EQ(*seqs.rbegin(), kProcesses * kAdds);
    ASSERT_TRUE(s.current().has_value());
    EXPECT_EQ(std::count(ids.begin(), ids.end(), *s.current()), 1);
}

TEST(Store, SetReportReplacesAtomicallyAndFeedsTheList) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string id = s.add(candidate("a"));
    EXPECT_FALSE(s.list()[0].has_verify);
    EXPECT_FALSE(s.list()[0].passed);

    s.set_report(id, "verify", R"({"passed": false})");
    EXPECT_EQ(s.list()[0].passed, false);
    s.set_report(id, "verify", R"({"passed": true, "max_err": 1e-9})");
    s.set_report(id, "bench", R"({"ms": 1.5})");
    EXPECT_EQ(s.load(id).verify_json, R"({"passed": true, "max_err": 1e-9})");
    EXPECT_EQ(s.load(id).bench_json, R"({"ms": 1.5})");
    EXPECT_EQ(fs::list_dir(fs::join(tmp.path(), "snapshots/" + id)),
              (std::vector<std::string>{"backward.py", "bench.json", "forward.py", "meta.json", "verify.json"}));

    Json list = Json::parse(s.list_json(), "list");
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].at("id").str(), id);
    EXPECT_TRUE(list[0].at("has_verify").boolean());
    EXPECT_TRUE(list[0].at("has_bench").boolean());
    EXPECT_TRUE(list[0].at("passed").boolean());
    EXPECT_EQ(list[0].at("kind").str(), "generate");
}

TEST(Store, PassedIsNullWithoutAVerdict) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    Candidate c = candidate("a");
    c.verify_json = R"({"results": []})";
    s.add(c);
    s.add(candidate("b"));
    Json list = Json::parse(s.list_json(), "list");
    ASSERT_EQ(list.size(), 2u);
    EXPECT_TRUE(list[0].at("has_verify").boolean());
    EXPECT_TRUE(list[0].at("passed").is_null());
    EXPECT_FALSE(list[1].at("has_verify").boolean());
    EXPECT_TRUE(list[1].at("passed").is_null());
}

TEST(Store, BadInputsAreRejectedBeforeWriting) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    Candidate c = candidate("a");
    c.kind = "guess";
    EXPECT_EQ(error_of([&] { s.add(c); }),
              std::make_pair(int(TAD_ERR_INVALID_ARGUMENT),
                             std::string("unknown snapshot kind 'guess' (expected generate or snapshot)")));
    c = candidate("a");
    c.verify_json = "{oops";
    EXPECT_EQ(error_of([&] { s.add(c); }).first, TAD_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(fs::list_dir(fs::join(tmp.path(), "snapshots")).empty());

    std::string id = s.add(candidate("a"));
    EXPECT_EQ(error_of([&] { s.set_report(id, "speed", "{}"); }),
              std::make_pair(int(TAD_ERR_INVALID_ARGUMENT),
                             std::string("unknown report 'speed' (expected verify or bench)")));
    EXPECT_EQ(error_of([&] { s.set_report(id, "bench", "not json"); }).first, TAD_ERR_INVALID_ARGUMENT);
    EXPECT_FALSE(s.load(id).bench_json);
}

TEST(Store, LeftoverTmpDirectoryIsIgnored) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string a = s.add(candidate("a"));
    // What a killed add() leaves behind: a complete-looking snapshot that was never renamed.
    std::string leftover = fs::join(tmp.path(), "snapshots/.tmp-Ab12Cd");
    fs::make_dirs(leftover);
    for (const char *f : {"meta.json", "forward.py", "backward.py"})
        fs::write_file_atomic(fs::join(leftover, f), fs::read_file(fs::join(tmp.path(), "snapshots/" + a + "/" + f)));
    EXPECT_EQ(listed_ids(s), std::vector<std::string>{a});
    EXPECT_EQ(error_of([&] { s.load(".tmp-Ab12Cd"); }).first, TAD_ERR_NOT_FOUND);
    std::string b = s.add(candidate("b"));
    EXPECT_EQ(b.substr(0, 5), "0002-");
    EXPECT_EQ(listed_ids(s), (std::vector<std::string>{a, b}));
}

TEST(Store, DamagedSnapshotsAreSkippedNotFatal) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    std::string a = s.add(candidate("a"));
    std::string b = s.add(candidate("b"));
    std::string c = s.add(candidate("c"));
    std::string d = s.add(candidate("d"));
    std::string snaps = fs::join(tmp.path(), "snapshots");
    std::string b_meta = fs::join(snaps, b + "/meta.json");
    fs::write_file_atomic(b_meta, "{not json");
    fs::remove_tree(fs::join(snaps, c + "/meta.json"));
    // A meta.json copied from another snapshot: its id does not match its directory.
    fs::write_file_atomic(fs::join(snaps, d + "/meta.json"), fs::read_file(fs::join(snaps, a + "/meta.json")));
    fs::write_file_atomic(fs::join(snaps, "0100-0000000z"), "not a snapshot name");

    EXPECT_EQ(listed_ids(s), std::vector<std::string>{a});
    EXPECT_EQ(Json::parse(s.list_json(), "list").size(), 1u);
    EXPECT_EQ(error_of([&] { s.load(b); }), std::make_pair(int(TAD_ERR_IO), b_meta + ": invalid JSON near byte 2"));
    EXPECT_EQ(error_of([&] { s.load(c); }).first, TAD_ERR_IO);
    auto [status, message] = error_of([&] { s.load(d); });
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_NE(message.find("does not match its directory"), std::string::npos) << message;
    EXPECT_EQ(s.add(candidate("e")).substr(0, 5), "0005-");  // damaged ids are not reused
}

TEST(Store, CurrentNamingAMissingSnapshotIsNone) {
    fs::TempDir tmp;
    Store s = Store::open(tmp.path());
    fs::write_file_atomic(fs::join(tmp.path(), "current"), "0009-00000000\n");
    EXPECT_FALSE(s.current().has_value());
    std::string a = s.add(candidate("a"));
    EXPECT_EQ(s.current(), a);
}

TEST(Store, OpenRejectsABrokenLayout) {
    fs::TempDir tmp;
    std::string file = fs::join(tmp.path(), "file");
    fs::write_file_atomic(file, "");
    EXPECT_EQ(error_of([&] { Store::open(file); }).first, TAD_ERR_IO);

    std::string work = fs::join(tmp.path(), "w1");
    fs::make_dirs(work);
    fs::write_file_atomic(fs::join(work, "snapshots"), "");
    auto [status, message] = error_of([&] { Store::open(work); });
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_EQ(message, fs::join(work, "snapshots") + ": cannot create directory: Not a directory");

    std::string work2 = fs::join(tmp.path(), "w2");
    fs::make_dirs(fs::join(work2, "current"));
    EXPECT_EQ(error_of([&] { Store::open(work2); }),
              std::make_pair(int(TAD_ERR_IO),
                             fs::join(work2, "current") + ": cannot read file: a directory, not a regular file"));
}

TEST(Store, ReopeningKeepsSnapshots) {
    fs::TempDir tmp;
    std::string a;
    {
        Store s = Store::open(tmp.path());
        a = s.add(candidate("a", "kept\n"));
    }
    Store again = Store::open(tmp.path());
    EXPECT_EQ(listed_ids(again), std::vector<std::string>{a});
    EXPECT_EQ(again.load(a).backward_source, "kept\n");
    EXPECT_EQ(again.current(), a);
}
