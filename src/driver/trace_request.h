// The worker's "trace" request for the stub of a forward file (docs/worker-protocol.md).
#pragma once

#include <string>

#include "frontend/kernel_file.h"
#include "support/json.h"

namespace tad::driver {

// Traces `stub` of `file` with `dims`; with its grad inputs, so that the record says where the
// stub's torch code computes from them (flow::check_torch_code). `meta`: on the meta device (the
// record's kernels and constexprs only are right; docs/worker-protocol.md).
Json trace_request(const std::string &file, const frontend::StubInfo &stub, JsonRef dims, bool with_data,
                   bool meta = false);

}  // namespace tad::driver
