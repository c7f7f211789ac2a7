// What the CPU-tier pipeline tests share: sessions whose worker runs Debian's CPU torch (with tad's
// recording stand-in for triton).
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "capi/session.h"
#include "support/fs.h"

namespace tad::test {

inline const char *kPython = "/usr/bin/python3";

inline bool torch_available() { return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0; }

// A session in `dir` with `file` loaded: an absolute path, or one relative to the source tree.
inline std::unique_ptr<Session> cpu_session(const fs::TempDir &dir, const std::string &file) {
    SessionOptions opts;
    opts.work_dir = dir.path();
    opts.python = kPython;
    auto s = std::make_unique<Session>(opts);
    s->load_forward(file.rfind('/', 0) == 0 ? file : std::string(TAD_SOURCE_DIR) + "/" + file, std::nullopt);
    return s;
}

}  // namespace tad::test
