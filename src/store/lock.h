// An exclusive lock on a session directory (flock on <work_dir>/lock), held while a snapshot id is
// allocated and the snapshot renamed into place, so that processes sharing one directory get
// distinct ids. The kernel releases it when the holder dies, so a killed process cannot leave it
// held.
#pragma once

#include <string>

namespace tad::store {

class DirLock {
public:
    // Blocks until the lock is ours; TAD_ERR_IO when the lock file cannot be opened or locked.
    explicit DirLock(const std::string &work_dir);
    ~DirLock();
    DirLock(const DirLock &) = delete;
    DirLock &operator=(const DirLock &) = delete;

private:
    int fd_ = -1;
};

}  // namespace tad::store
