#include "errors.h"

#include "tad.h"

namespace tad_cli {

void check(int status) {
    if (status != TAD_OK) throw Failure{status, tad_error_last()};
}

int exit_code(int status) {
    switch (status) {
    case TAD_OK: return kExitOk;
    case TAD_ERR_MISMATCH: return kExitMismatch;
    // The library only sees values that came from the command line (--dims, --dtypes, ...).
    case TAD_ERR_INVALID_ARGUMENT: return kExitUsage;
    case TAD_ERR_IO:
    case TAD_ERR_SYNTAX:
    case TAD_ERR_UNSUPPORTED:
    case TAD_ERR_NO_KERNEL:
    case TAD_ERR_NOT_FOUND: return kExitInput;
    case TAD_ERR_WORKER:
    case TAD_ERR_TIMEOUT: return kExitWorker;
    case TAD_ERR_NO_GPU: return kExitNoGpu;
    default: return kExitInternal;  // STATE, CANCELLED, INTERNAL: the CLI never asks for them
    }
}

}  // namespace tad_cli
