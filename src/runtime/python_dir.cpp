#include "runtime/python_dir.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

namespace tad {

namespace {
bool has_worker(const std::string &dir) { return ::access((dir + "/tad_worker.py").c_str(), R_OK) == 0; }

// The directory of the binary holding this code (libtad.so, or an executable linking it).
std::string own_directory() {
    Dl_info info;
    if (!::dladdr(reinterpret_cast<void *>(&python_dir), &info) || !info.dli_fname) return "";
    char resolved[PATH_MAX];
    std::string path = ::realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}
}  // namespace

std::string python_dir() {
    if (const char *env = ::getenv("TAD_PYTHON_DIR"); env && *env) return env;
    std::string own = own_directory();
    if (!own.empty()) {
        for (const char *rel : {"/python", "/../share/tad/python", "/../../share/tad/python"})
            if (has_worker(own + rel)) return own + rel;
    }
    if (has_worker(TAD_SOURCE_PYTHON_DIR)) return TAD_SOURCE_PYTHON_DIR;
    return TAD_INSTALL_PYTHON_DIR;
}

}  // namespace tad
