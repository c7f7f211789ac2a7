// Whether the GPU tier can run here: $TAD_PYTHON (else python3) imports torch and triton and sees a
// CUDA device. The GPU tests skip with "[SKIP] no GPU: <why>" otherwise.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tad::gpu_test {

inline std::string python() {
    const char *p = std::getenv("TAD_PYTHON");
    return p && *p ? p : "python3";
}

// Empty when a GPU with torch and triton is usable, else why not.
inline std::string gpu_unavailable() {
    std::string cmd =
        python() + " -c 'import torch, triton; assert torch.cuda.is_available(), \"CUDA unavailable\"' >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? "" : python() + " has no CUDA device with torch and triton";
}

}  // namespace tad::gpu_test

// Skips the test, visibly, where gpu_unavailable() says why.
#define REQUIRE_GPU()                                              \
    do {                                                           \
        const std::string why_ = tad::gpu_test::gpu_unavailable(); \
        if (!why_.empty()) {                                       \
            std::printf("[SKIP] no GPU: %s\n", why_.c_str());      \
            GTEST_SKIP() << "[SKIP] no GPU: " << why_;             \
        }                                                          \
    } while (0)
