// What every C ABI entry point shares (tad.cpp, aot.cpp): the thread's last error, guard() around
// each body so that no exception crosses the ABI, the NULL and options-version checks, and
// caller-owned strings.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "support/error.h"
#include "tad.h"

namespace tad::capi {

// libgit2's convention: the message survives successful calls, so a caller may free strings or
// query reports before reading it. last_error points into last_message, or at a literal when
// copying the message itself ran out of memory.
inline thread_local std::string last_message;
inline thread_local const char *last_error = "";

// Stores "<fn>: <message>" (just the message when fn is NULL) without allocating anywhere but in
// the try block, so that it is safe inside a catch handler.
inline int record(int status, const char *fn, const char *message) noexcept {
    if (status >= TAD_OK) status = TAD_ERR_INTERNAL;  // a failure must never read as success
    try {
        last_message.clear();
        if (fn) last_message.append(fn).append(": ");
        last_message.append(message);
        last_error = last_message.c_str();
    } catch (...) {
        last_error = "out of memory";
    }
    return status;
}

// Runs `body(fn)` (returning a status) and converts what it throws. tad::Error messages are
// diagnostics that stand on their own; anything else is a bug, so the message names the function.
template <typename Body> int guard(const char *fn, Body &&body) noexcept {
    try {
        return body(fn);
    } catch (const tad::Error &e) {
        return record(e.status(), nullptr, e.what());
    } catch (const std::bad_alloc &) {
        return record(TAD_ERR_INTERNAL, nullptr, "out of memory");
    } catch (const std::exception &e) {
        return record(TAD_ERR_INTERNAL, fn, e.what());
    } catch (...) {
        return record(TAD_ERR_INTERNAL, fn, "unknown exception");
    }
}

[[noreturn]] inline void invalid(const char *fn, const std::string &what) {
    tad::fail(TAD_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + what);
}

template <typename T> void need(const T *p, const char *fn, const char *name) {
    if (!p) invalid(fn, std::string(name) + " is NULL");
}

// Clears an out pointer before anything can fail, so that a failing call leaves NULL behind.
inline void clear(char **out) {
    if (out) *out = nullptr;
}

inline char *c_string(const std::string &s) {
    char *p = static_cast<char *>(std::malloc(s.size() + 1));
    if (!p) throw std::bad_alloc();
    std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

inline std::string text_or(const char *s, const std::string &dflt) { return (s && *s) ? s : dflt; }

inline void check_version(unsigned version, size_t known, const char *fn) {
    if (version != 0 && version <= known) return;
    invalid(fn, "unsupported options version " + std::to_string(version) + " (libtad " + tad_version() + " knows " +
                    (known == 1 ? "version 1" : "versions 1 to " + std::to_string(known)) + ")");
}

// tad_*_options_init: the defaults of the fields that `version` defines, nothing past them.
template <typename T, size_t N>
void init_options(T *opts, unsigned version, const size_t (&ends)[N], const T &defaults, const char *fn) {
    need(opts, fn, "opts");
    check_version(version, N, fn);
    std::memcpy(static_cast<void *>(opts), &defaults, ends[version - 1]);
    opts->version = version;
}

// The caller's options as a struct of the library's version: the fields of the caller's version,
// read from its struct, and zero (default) for the fields that version lacks.
template <typename T, size_t N> T read_options(const T *o, const size_t (&ends)[N], const char *fn) {
    check_version(o->version, N, fn);
    T out{};
    std::memcpy(static_cast<void *>(&out), o, ends[o->version - 1]);
    return out;
}

}  // namespace tad::capi
