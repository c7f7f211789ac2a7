#include "store/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"
#include "support/fs.h"

namespace tad::store {

DirLock::DirLock(const std::string &work_dir) {
    std::string path = fs::join(work_dir, "lock");
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(TAD_ERR_IO, path + ": cannot open the lock file: " + std::strerror(errno));
    int r;
    while ((r = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {}
    if (r != 0) {
        int err = errno;
        ::close(fd_);
        fail(TAD_ERR_IO, path + ": cannot lock: " + std::strerror(err));
    }
}

DirLock::~DirLock() { ::close(fd_); }  // closing the only descriptor releases the lock

}  // namespace tad::store
