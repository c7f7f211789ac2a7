// File-system helpers. Every failure is a tad::Error with TAD_ERR_IO whose message starts with the
// path and ends with the system's reason (strerror), e.g. "x.py: cannot read file: No such file...".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tad::fs {

// The contents of the regular file at `path`. Anything else (a FIFO, a device such as /dev/zero, a
// directory) is refused at once: "<path>: cannot read file: a FIFO, not a regular file". So is a file
// of more than `limit` bytes: "<path>: cannot read file: <size> bytes, over the limit of <limit>".
std::string read_file(const std::string &path, size_t limit = SIZE_MAX);

// Replaces `path` so that a reader (or a crash) sees either the old content or the new one, never a
// mix: writes a temp file in the same directory, fsyncs it, renames it over `path`, fsyncs the
// directory. On failure the temp file is removed and `path` is untouched.
void write_file_atomic(const std::string &path, const std::string &data);

bool exists(const std::string &path);
bool is_directory(const std::string &path);  // false when absent
void make_dirs(const std::string &path);  // mkdir -p; fine if it already exists as a directory
std::vector<std::string> list_dir(const std::string &path);  // entry names, sorted, no "." / ".."
void remove_tree(const std::string &path);  // rm -rf, symlinks not followed; fine if absent

// rename(2): atomic on one file system; a directory replaces only an absent or empty one.
void rename_path(const std::string &from, const std::string &to);
// fsync of a directory, so that entries created or renamed in it survive a power loss.
void sync_dir(const std::string &path);
// A new directory "<parent>/<prefix>XXXXXX" with a random, unique suffix (mkdtemp); its path.
std::string make_unique_dir(const std::string &parent, const std::string &prefix);

// "a" + "b" -> "a/b"; an absolute `b` is returned as is; an empty `a` gives `b`.
std::string join(const std::string &a, const std::string &b);
// `path` made absolute against the current directory, "." and ".." resolved lexically.
std::string absolute(const std::string &path);

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when the object dies.
class TempDir {
public:
    explicit TempDir(const std::string &prefix = "tad-");
    ~TempDir();
    TempDir(TempDir &&o) noexcept;
    TempDir &operator=(TempDir &&o) noexcept;
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

private:
    void release() noexcept;
    std::string path_;
};

}  // namespace tad::fs
