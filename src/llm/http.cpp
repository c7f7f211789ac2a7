#include "llm/http.h"

#include "llm/curl_api.h"

#include <algorithm>
#include <cctype>
#include <memory>

namespace tad::llm {

namespace {

bool same_name(const std::string &a, const std::string &b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string trim(const std::string &s) {
    size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// What the callbacks fill while curl runs.
struct Transfer {
    HttpResponse response;
    const std::atomic<bool> *cancel = nullptr;
    bool too_large = false;
};

size_t on_body(char *data, size_t size, size_t count, void *user) {
    auto *t = static_cast<Transfer *>(user);
    size_t n = size * count;
    if (t->response.body.size() + n > CurlTransport::kMaxResponseBytes) {
        t->too_large = true;
        return 0;  // curl stops with CURLE_WRITE_ERROR
    }
    t->response.body.append(data, n);
    return n;
}

// Each header line of the final response; a new status line (after a 100 Continue) starts over.
size_t on_header(char *data, size_t size, size_t count, void *user) {
    auto *t = static_cast<Transfer *>(user);
    std::string line(data, size * count);
    if (line.rfind("HTTP/", 0) == 0) {
        t->response.headers.clear();
        return line.size();
    }
    size_t colon = line.find(':');
    if (colon != std::string::npos)
        t->response.headers.push_back({trim(line.substr(0, colon)), trim(line.substr(colon + 1))});
    return line.size();
}

int on_progress(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto *t = static_cast<Transfer *>(user);
    return t->cancel && t->cancel->load() ? 1 : 0;
}

struct CurlFree {
    const CurlApi *api;
    void operator()(CURL *c) const { api->easy_cleanup(c); }
    void operator()(curl_slist *l) const { api->slist_free_all(l); }
};

[[noreturn]] void failed(CURLcode code, const Transfer &t, const std::string &url, const char *detail) {
    std::string why = *detail ? detail : curl_api().easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT) throw TransportError(TAD_ERR_TIMEOUT, url + ": timed out (" + why + ")");
    if (code == CURLE_ABORTED_BY_CALLBACK) throw TransportError(TAD_ERR_CANCELLED, url + ": cancelled");
    if (t.too_large)
        throw TransportError(TAD_ERR_IO, url + ": response body over the limit of " +
                                             std::to_string(CurlTransport::kMaxResponseBytes) + " bytes");
    if (code == CURLE_PARTIAL_FILE)
        throw TransportError(TAD_ERR_IO, url + ": the response ended early after " +
                                             std::to_string(t.response.body.size()) + " bytes of its body (" + why +
                                             ")");
    throw TransportError(TAD_ERR_IO, url + ": " + why);
}

long millis(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000)); }

}  // namespace

std::optional<std::string> header(const std::vector<Header> &headers, const std::string &name) {
    for (const Header &h : headers)
        if (same_name(h.name, name)) return h.value;
    return std::nullopt;
}

void CurlTransport::load() { curl_api(); }

HttpResponse CurlTransport::post(const HttpRequest &req, const std::atomic<bool> *cancel) {
    const CurlApi &api = curl_api();
    std::unique_ptr<CURL, CurlFree> curl(api.easy_init(), CurlFree{&api});
    if (!curl) throw TransportError(TAD_ERR_IO, req.url + ": cannot start libcurl");
    curl_slist *raw = api.slist_append(nullptr, "Content-Type: application/json");
    for (const Header &h : req.headers) raw = api.slist_append(raw, (h.name + ": " + h.value).c_str());
    std::unique_ptr<curl_slist, CurlFree> headers(raw, CurlFree{&api});
    Transfer t;
    t.cancel = cancel;
    char detail[CURL_ERROR_SIZE] = "";
    CURL *c = curl.get();
    api.easy_setopt(c, CURLOPT_URL, req.url.c_str());
    api.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    api.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: other threads run
    api.easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    api.easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
    api.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    api.easy_setopt(c, CURLOPT_TIMEOUT_MS, millis(req.timeout_s));
    api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, millis(std::min(req.connect_timeout_s, req.timeout_s)));
    api.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    api.easy_setopt(c, CURLOPT_WRITEDATA, &t);
    api.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    api.easy_setopt(c, CURLOPT_HEADERDATA, &t);
    api.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    api.easy_setopt(c, CURLOPT_XFERINFODATA, &t);
    api.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    api.easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
    CURLcode code = api.easy_perform(c);
    if (code != CURLE_OK) failed(code, t, req.url, detail);
    api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.response.status);
    return std::move(t.response);
}

}  // namespace tad::llm
