// A process killed in the middle of add() must leave a store that lists only complete snapshots.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "store/store.h"
#include "support/error.h"
#include "support/fs.h"

namespace fs = tad::fs;
using tad::store::Candidate;
using tad::store::Store;

namespace {

constexpr size_t kBigSize = 8u << 20;  // big enough that a kill lands while files are being written
constexpr int kMaxAdds = 40;  // bounds the disk used if the parent never kills

Candidate big_candidate(int n) {
    Candidate c;
    c.label = "big-" + std::to_string(n);
    c.forward_path = "/src/big.py";
    c.forward_source = "# forward " + std::to_string(n) + "\n";
    c.backend = "triton";
    c.kind = "generate";
    c.backward_source = std::string(kBigSize, static_cast<char>('a' + n % 26));
    c.verify_json = R"({"passed": true})";
    return c;
}

[[noreturn]] void write_forever(const std::string &work) {
    try {
        Store s = Store::open(work);
        for (int n = 0; n < kMaxAdds; ++n) s.add(big_candidate(n));
    } catch (...) {
        _exit(2);
    }
    _exit(0);
}

int count_prefixed(const std::string &dir, const std::string &prefix) {
    int n = 0;
    for (const auto &name : fs::list_dir(dir)) n += name.rfind(prefix, 0) == 0;
    return n;
}

}  // namespace

TEST(StoreCrash, SigkillMidWriteLeavesOnlyCompleteSnapshots) {
    fs::TempDir tmp;
    std::string work = fs::join(tmp.path(), "work");
    std::string snaps = fs::join(work, "snapshots");
    Store::open(work);

    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) write_forever(work);

    // Kill once one snapshot is complete and the next is half-way through its temp directory.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool mid_write = false;
    while (!mid_write && std::chrono::steady_clock::now() < deadline) {
        mid_write = count_prefixed(snaps, "0") >= 1 && count_prefixed(snaps, ".tmp-") >= 1;
        if (!mid_write) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(mid_write) << "the child never started a second snapshot";
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) << "the child finished before it was killed";

    Store s = Store::open(work);
    auto listed = s.list();
    ASSERT_GE(listed.size(), 1u);
    // Every directory named like a snapshot is a complete one: nothing half-written got its name.
    EXPECT_EQ(static_cast<int>(listed.size()), count_prefixed(snaps, "0"));
    for (size_t i = 0; i < listed.size(); ++i) {
        EXPECT_EQ(listed[i].seq, static_cast<int64_t>(i + 1));
        Candidate c = s.load(listed[i].id);
        EXPECT_EQ(c.backward_source, big_candidate(static_cast<int>(i)).backward_source) << listed[i].id;
        EXPECT_EQ(listed[i].passed, true);
    }
    ASSERT_TRUE(s.current().has_value());
    EXPECT_EQ(s.load(*s.current()).label.rfind("big-", 0), 0u);

    // The store stays usable: the next add gets a fresh id after the complete ones.
    std::string next = s.add(big_candidate(99));
    EXPECT_EQ(s.list().back().id, next);
    EXPECT_EQ(s.list().back().seq, static_cast<int64_t>(listed.size() + 1));
}
