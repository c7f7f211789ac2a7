// libcurl's easy API, loaded with dlopen on first use rather than linked: libtad then loads, and
// everything but the LLM clients works, on a machine without libcurl (as the GPU machine may be).
// The headers come from Debian's libcurl4-openssl-dev at build time.
#pragma once

#include <curl/curl.h>

namespace tad::llm {

struct CurlApi {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)();
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *curl);
    const char *(*easy_strerror)(CURLcode code);
    curl_slist *(*slist_append)(curl_slist *list, const char *text);
    void (*slist_free_all)(curl_slist *list);
};

// The API of libcurl.so.4, loaded and curl_global_init'ed once per process (thread-safe). Throws
// tad::Error(TAD_ERR_IO, "libcurl is not available (<dlerror>); the LLM clients need it: apt-get
// install libcurl4") where it cannot be loaded, on every call.
const CurlApi &curl_api();

}  // namespace tad::llm
