// HTTP POST for the LLM clients: a Transport interface (the clients' only way out, so tests can
// script replies) and its libcurl implementation.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "support/error.h"

namespace tad::llm {

struct Header {
    std::string name, value;
};

struct HttpRequest {
    std::string url;
    std::vector<Header> headers;  // besides Content-Type: application/json, which every request has
    std::string body;
    double timeout_s = 300;  // the whole exchange, connection included
    double connect_timeout_s = 30;
};

struct HttpResponse {
    long status = 0;
    std::vector<Header> headers;
    std::string body;
};

// The value of header `name` (compared without case); none when absent.
std::optional<std::string> header(const std::vector<Header> &headers, const std::string &name);

// Why no complete response came back. Status: TAD_ERR_TIMEOUT (the timeout passed),
// TAD_ERR_CANCELLED (the cancel flag was raised), TAD_ERR_IO (anything else: refused connection,
// DNS, TLS, a body cut short, a body over the size limit).
class TransportError : public Error {
public:
    using Error::Error;
};

class Transport {
public:
    virtual ~Transport() = default;
    // Sends `req` and returns the response, whatever its status; throws TransportError when none
    // came back whole. `cancel` (may be null) is polled while waiting. Safe to call from several
    // threads at once.
    virtual HttpResponse post(const HttpRequest &req, const std::atomic<bool> *cancel) = 0;
};

// libcurl (loaded at run time: curl_api.h). http and https only, no redirects followed (a redirect
// would carry the API key to another host; it comes back as its 3xx response), bodies up to
// kMaxResponseBytes.
class CurlTransport : public Transport {
public:
    static constexpr size_t kMaxResponseBytes = 32u << 20;
    // TAD_ERR_IO "libcurl is not available ..." where it cannot be loaded (curl_api.h).
    CurlTransport() { load(); }
    static void load();
    HttpResponse post(const HttpRequest &req, const std::atomic<bool> *cancel) override;
};

}  // namespace tad::llm
