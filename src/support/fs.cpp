#include "support/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "support/error.h"

namespace tad::fs {

namespace stdfs = std::filesystem;

namespace {

[[noreturn]] void io_fail(const std::string &path, const std::string &what, int err) {
    fail(TAD_ERR_IO, path + ": " + what + ": " + std::strerror(err));
}

[[noreturn]] void io_fail(const std::string &path, const std::string &what, std::error_code ec) {
    fail(TAD_ERR_IO, path + ": " + what + ": " + ec.message());
}

std::string parent_dir(const std::string &path) {
    size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string base_name(const std::string &path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// write(2) until done; false with errno set on failure.
bool write_all(int fd, const std::string &data) {
    const char *p = data.data();
    size_t left = data.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    return true;
}

// What a file that is not a regular one is, for the refusal.
const char *kind_of(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

}  // namespace

std::string read_file(const std::string &path, size_t limit) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat refuses it.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) io_fail(path, "cannot read file", errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        io_fail(path, "cannot read file", err);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        fail(TAD_ERR_IO, path + ": cannot read file: " + kind_of(st.st_mode) + ", not a regular file");
    }
    const auto over = [&](uint64_t size) {
        ::close(fd);
        fail(TAD_ERR_IO, path + ": cannot read file: " + std::to_string(size) + " bytes, over the limit of " +
                             std::to_string(limit));
    };
    if (static_cast<uint64_t>(st.st_size) > limit) over(static_cast<uint64_t>(st.st_size));
    std::string out;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            io_fail(path, "cannot read file", err);
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
        if (out.size() > limit) over(out.size());  // it grew while we read
    }
    ::close(fd);
    return out;
}

void write_file_atomic(const std::string &path, const std::string &data) {
    std::string dir = parent_dir(path);
    std::string tmp = join(dir, "." + base_name(path) + ".tmp-XXXXXX");
    int fd = ::mkstemp(tmp.data());
    if (fd < 0) io_fail(path, "cannot write file", errno);
    // mkstemp creates the file 0600; written files should be as readable as ordinary ones.
    bool ok = ::fchmod(fd, 0644) == 0 && write_all(fd, data) && ::fsync(fd) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        ::unlink(tmp.c_str());
        io_fail(path, "cannot write file", err);
    }
    sync_dir(dir);
}

bool exists(const std::string &path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_dirs(const std::string &path) {
    std::error_code ec;
    stdfs::create_directories(path, ec);
    if (ec) io_fail(path, "cannot create directory", ec);
    if (!is_directory(path)) io_fail(path, "cannot create directory", ENOTDIR);
}

std::vector<std::string> list_dir(const std::string &path) {
    std::error_code ec;
    std::vector<std::string> names;
    for (stdfs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
        names.push_back(it->path().filename().string());
    if (ec) io_fail(path, "cannot list directory", ec);
    std::sort(names.begin(), names.end());
    return names;
}

void remove_tree(const std::string &path) {
    std::error_code ec;
    stdfs::remove_all(path, ec);
    if (ec) io_fail(path, "cannot remove", ec);
}

void rename_path(const std::string &from, const std::string &to) {
    if (::rename(from.c_str(), to.c_str()) != 0) io_fail(from, "cannot rename to '" + to + "'", errno);
}

void sync_dir(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) io_fail(path, "cannot sync directory", errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) io_fail(path, "cannot sync directory", err);
}

std::string make_unique_dir(const std::string &parent, const std::string &prefix) {
    std::string tmpl = join(parent, prefix + "XXXXXX");
    if (!::mkdtemp(tmpl.data())) io_fail(tmpl, "cannot create directory", errno);
    return tmpl;
}

std::string join(const std::string &a, const std::string &b) {
    if (a.empty() || (!b.empty() && b[0] == '/')) return b;
    if (a.back() == '/') return a + b;
    return a + "/" + b;
}

std::string absolute(const std::string &path) {
    std::error_code ec;
    stdfs::path p = stdfs::absolute(path.empty() ? "." : path, ec);
    if (ec) io_fail(path, "cannot make path absolute", ec);
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

TempDir::TempDir(const std::string &prefix) {
    const char *env = std::getenv("TMPDIR");
    path_ = make_unique_dir(env && *env ? env : "/tmp", prefix);
}

TempDir::~TempDir() { release(); }

TempDir::TempDir(TempDir &&o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }

TempDir &TempDir::operator=(TempDir &&o) noexcept {
    if (this != &o) {
        release();
        path_ = std::move(o.path_);
        o.path_.clear();
    }
    return *this;
}

void TempDir::release() noexcept {
    if (path_.empty()) return;
    std::error_code ec;  // a destructor must not throw; a leftover temp dir is harmless
    stdfs::remove_all(path_, ec);
    path_.clear();
}

}  // namespace tad::fs
