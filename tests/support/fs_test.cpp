#include <gtest/gtest.h>

#include "../common/error_of.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/error.h"
#include "support/fs.h"

namespace fs = tad::fs;

using tad::testing::error_of;

namespace {
using Names = std::vector<std::string>;

}  // namespace

TEST(Fs, ReadMissingFileNamesPathAndReason) {
    fs::TempDir tmp;
    std::string path = fs::join(tmp.path(), "absent.py");
    EXPECT_EQ(error_of([&] { fs::read_file(path); }),
              std::make_pair(int(TAD_ERR_IO), path + ": cannot read file: No such file or directory"));
}

// A FIFO (no writer: opening it must not wait for one), a device without end and a directory are
// refused at once, as is a file over the limit.
TEST(Fs, ReadRefusesWhatIsNotABoundedRegularFile) {
    fs::TempDir tmp;
    const std::string fifo = fs::join(tmp.path(), "fifo.py"), big = fs::join(tmp.path(), "big.py");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(error_of([&] { fs::read_file(fifo); }),
              std::make_pair(int(TAD_ERR_IO), fifo + ": cannot read file: a FIFO, not a regular file"));
    EXPECT_EQ(error_of([&] { fs::read_file("/dev/zero", 1 << 20); }),
              std::make_pair(int(TAD_ERR_IO), std::string("/dev/zero: cannot read file: a character device, not a "
                                                          "regular file")));
    EXPECT_EQ(error_of([&] { fs::read_file(tmp.path()); }),
              std::make_pair(int(TAD_ERR_IO), tmp.path() + ": cannot read file: a directory, not a regular file"));
    fs::write_file_atomic(big, std::string(11, 'x'));
    EXPECT_EQ(fs::read_file(big, 11), std::string(11, 'x'));
    EXPECT_EQ(error_of([&] { fs::read_file(big, 10); }),
              std::make_pair(int(TAD_ERR_IO), big + ": cannot read file: 11 bytes, over the limit of 10"));
}

TEST(Fs, WriteAtomicCreatesAndReplacesWithoutLeftovers) {
    fs::TempDir tmp;
    std::string path = fs::join(tmp.path(), "report.json");
    fs::write_file_atomic(path, "first");
    EXPECT_EQ(fs::read_file(path), "first");
    std::string binary("a\0b\xff", 4);
    fs::write_file_atomic(path, binary);
    EXPECT_EQ(fs::read_file(path), binary);
    EXPECT_EQ(fs::list_dir(tmp.path()), Names{"report.json"});
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(Fs, WriteAtomicFailureKeepsTargetAndRemovesTemp) {
    fs::TempDir tmp;
    std::string target = fs::join(tmp.path(), "target");
    fs::make_dirs(fs::join(target, "inner"));  // rename(file, non-empty dir) must fail
    auto [status, message] = error_of([&] { fs::write_file_atomic(target, "data"); });
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_EQ(message.rfind(target + ": cannot write file: ", 0), 0u) << message;
    EXPECT_EQ(fs::list_dir(tmp.path()), Names{"target"});
    EXPECT_TRUE(fs::is_directory(fs::join(target, "inner")));
}

TEST(Fs, WriteAtomicIntoMissingDirectoryFails) {
    fs::TempDir tmp;
    std::string path = fs::join(tmp.path(), "no/such/file");
    EXPECT_EQ(error_of([&] { fs::write_file_atomic(path, "x"); }),
              std::make_pair(int(TAD_ERR_IO), path + ": cannot write file: No such file or directory"));
}

TEST(Fs, MakeDirsIsIdempotentAndRejectsFiles) {
    fs::TempDir tmp;
    std::string deep = fs::join(tmp.path(), "a/b/c");
    fs::make_dirs(deep);
    fs::make_dirs(deep);
    EXPECT_TRUE(fs::is_directory(deep));
    std::string file = fs::join(tmp.path(), "file");
    fs::write_file_atomic(file, "");
    auto [status, message] = error_of([&] { fs::make_dirs(fs::join(file, "sub")); });
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_EQ(message.rfind(fs::join(file, "sub") + ": cannot create directory: ", 0), 0u) << message;
    EXPECT_EQ(error_of([&] { fs::make_dirs(file); }).first, TAD_ERR_IO);
}

TEST(Fs, ListDirIsSortedAndErrorsOnMissing) {
    fs::TempDir tmp;
    for (const char *name : {"b", ".hidden", "a"}) fs::write_file_atomic(fs::join(tmp.path(), name), "");
    fs::make_dirs(fs::join(tmp.path(), "c"));
    EXPECT_EQ(fs::list_dir(tmp.path()), (Names{".hidden", "a", "b", "c"}));
    std::string missing = fs::join(tmp.path(), "missing");
    EXPECT_EQ(error_of([&] { fs::list_dir(missing); }),
              std::make_pair(int(TAD_ERR_IO), missing + ": cannot list directory: No such file or directory"));
}

TEST(Fs, RemoveTreeDoesNotFollowSymlinks) {
    fs::TempDir tmp;
    std::string keep = fs::join(tmp.path(), "keep");
    fs::make_dirs(keep);
    fs::write_file_atomic(fs::join(keep, "precious"), "x");
    std::string tree = fs::join(tmp.path(), "tree");
    fs::make_dirs(fs::join(tree, "deep/er"));
    fs::write_file_atomic(fs::join(tree, "deep/er/f"), "y");
    ASSERT_EQ(::symlink(keep.c_str(), fs::join(tree, "link").c_str()), 0);
    fs::remove_tree(tree);
    EXPECT_FALSE(fs::exists(tree));
    EXPECT_EQ(fs::read_file(fs::join(keep, "precious")), "x");
    fs::remove_tree(tree);  // absent: nothing to do
}

TEST(Fs, ExistsAndIsDirectory) {
    fs::TempDir tmp;
    std::string file = fs::join(tmp.path(), "f");
    EXPECT_FALSE(fs::exists(file));
    fs::write_file_atomic(file, "");
    EXPECT_TRUE(fs::exists(file));
    EXPECT_FALSE(fs::is_directory(file));
    EXPECT_TRUE(fs::is_directory(tmp.path()));
}

TEST(Fs, RenamePathMovesAndReportsFailure) {
    fs::TempDir tmp;
    std::string from = fs::join(tmp.path(), "from");
    std::string to = fs::join(tmp.path(), "to");
    fs::make_dirs(from);
    fs::rename_path(from, to);
    EXPECT_TRUE(fs::is_directory(to));
    EXPECT_EQ(error_of([&] { fs::rename_path(from, to); }),
              std::make_pair(int(TAD_ERR_IO), from + ": cannot rename to '" + to + "': No such file or directory"));
}

TEST(Fs, UniqueDirsAreDistinctAndSyncable) {
    fs::TempDir tmp;
    std::string a = fs::make_unique_dir(tmp.path(), ".tmp-");
    std::string b = fs::make_unique_dir(tmp.path(), ".tmp-");
    EXPECT_NE(a, b);
    EXPECT_EQ(a.rfind(fs::join(tmp.path(), ".tmp-"), 0), 0u);
    EXPECT_TRUE(fs::is_directory(a));
    fs::sync_dir(a);
    EXPECT_EQ(error_of([&] { fs::sync_dir(fs::join(tmp.path(), "none")); }).first, TAD_ERR_IO);
}

TEST(Fs, Join) {
    EXPECT_EQ(fs::join("a", "b"), "a/b");
    EXPECT_EQ(fs::join("a/", "b"), "a/b");
    EXPECT_EQ(fs::join("", "b"), "b");
    EXPECT_EQ(fs::join("a", "/abs"), "/abs");
}

TEST(Fs, AbsoluteResolvesAgainstCwdLexically) {
    char buf[4096];
    ASSERT_NE(::getcwd(buf, sizeof buf), nullptr);
    std::string cwd = buf;
    EXPECT_EQ(fs::absolute("x/./y/../z"), fs::join(cwd, "x/z"));
    EXPECT_EQ(fs::absolute("/a/b/../c/"), "/a/c");
    EXPECT_EQ(fs::absolute(""), cwd);
    EXPECT_EQ(fs::absolute("/"), "/");
}

TEST(Fs, TempDirIsRemovedAndMovable) {
    std::string path;
    {
        fs::TempDir outer("tad-fs-test-");
        {
            fs::TempDir inner("tad-fs-test-");
            path = inner.path();
            fs::write_file_atomic(fs::join(path, "f"), "x");
            outer = std::move(inner);
        }
        EXPECT_TRUE(fs::is_directory(path));  // moved, so the inner's end did not remove it
        EXPECT_EQ(outer.path(), path);
    }
    EXPECT_FALSE(fs::exists(path));
}
