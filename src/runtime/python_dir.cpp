#include "runtime/python_dir.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

namespace tad {

namespace {
bool has_worker(const std::string &dir) { return ::access((dir + "/tad_worker.py").c_str(), R_OK) == 0; }

// The binary holding this code (libtad.so, or an executable linking it).
std::string own_file() {
    Dl_info info;
    if (!::dladdr(reinterpret_cast<void *>(&python_dir), &info) || !info.dli_fname) return "";
    char resolved[PATH_MAX];
    return ::realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

std::string own_directory() {
    std::string path = own_file();
    if (path.empty()) return "";
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

std::string library_path() {
    std::string own = own_file();
    size_t slash = own.rfind('/');
    if (own.compare(slash == std::string::npos ? 0 : slash + 1, 7, "libtad.") == 0) return own;
    return ::access(TAD_BUILD_LIBRARY, R_OK) == 0 ? TAD_BUILD_LIBRARY : "";
}

}  // namespace tad
