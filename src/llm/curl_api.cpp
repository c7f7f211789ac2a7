#include "llm/curl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "support/error.h"

namespace tad::llm {

namespace {

struct Loaded {
    CurlApi api{};
    std::string error;  // why it is not loaded
};

template <typename F> bool bind(void *lib, const char *name, F &f, std::string &error) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) error = std::string("libcurl.so.4 has no ") + name;
    return f != nullptr;
}

Loaded load() {
    Loaded l;
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        l.error = e ? e : "libcurl.so.4: cannot load";
        return l;
    }
    CurlApi &a = l.api;
    const bool ok = bind(lib, "curl_global_init", a.global_init, l.error) &&
                    bind(lib, "curl_easy_init", a.easy_init, l.error) &&
                    bind(lib, "curl_easy_setopt", a.easy_setopt, l.error) &&
                    bind(lib, "curl_easy_perform", a.easy_perform, l.error) &&
                    bind(lib, "curl_easy_getinfo", a.easy_getinfo, l.error) &&
                    bind(lib, "curl_easy_cleanup", a.easy_cleanup, l.error) &&
                    bind(lib, "curl_easy_strerror", a.easy_strerror, l.error) &&
                    bind(lib, "curl_slist_append", a.slist_append, l.error) &&
                    bind(lib, "curl_slist_free_all", a.slist_free_all, l.error);
    // curl_global_init is not thread-safe: here, once, before any handle exists.
    if (ok && a.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) l.error = "curl_global_init failed";
    return l;
}

}  // namespace

const CurlApi &curl_api() {
    static std::once_flag once;
    static Loaded loaded;
    std::call_once(once, [] { loaded = load(); });
    if (!loaded.error.empty())
        fail(TAD_ERR_IO,
             "libcurl is not available (" + loaded.error + "); the LLM clients need it: apt-get install libcurl4");
    return loaded.api;
}

}  // namespace tad::llm
