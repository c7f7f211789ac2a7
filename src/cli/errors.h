// How the CLI fails: a usage error (exit 2) or a library status with its message, and the mapping
// from statuses to the exit codes documented in docs/cli.md.
#pragma once

#include <stdexcept>
#include <string>

namespace tad_cli {

enum ExitCode {
    kExitOk = 0,
    kExitMismatch = 1,
    kExitUsage = 2,
    kExitInput = 3,
    kExitWorker = 4,
    kExitNoGpu = 5,
    kExitInternal = 70,
};

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A failed step: a tad_status and the message to print after "tad: error: ".
struct Failure {
    int status;
    std::string message;
};

// Throws Failure{status, tad_error_last()} unless status is TAD_OK.
void check(int status);

int exit_code(int status);

}  // namespace tad_cli
