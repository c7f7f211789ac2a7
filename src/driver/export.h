// tad_export's assembly of a manifest (src/aot/manifest.h) from what the pipeline and the worker
// produced; Session::export_kernels (export.cpp) runs the rest: traces, plan, the worker's export.
#pragma once

#include <map>
#include <string>

#include "aot/manifest.h"
#include "frontend/kernel_file.h"
#include "plan/plan.h"
#include "support/json.h"

namespace tad::driver {

// The manifest of backward plan `p` of the stub's one launch as `trace` recorded it (its pointer
// parameters are the stub tensors `tensors` names) and the worker's export `reply`
// (docs/worker-protocol.md). A kernel of the plan the module never launched at the export's dims (a
// branch they did not take) gets no cubin; TAD_ERR_WORKER "tad_export: the module launched none of
// the plan's kernels (<names>) at the export's dims and dtypes" when no kernel has one.
aot::Manifest manifest_of(const frontend::KernelFile &kf, const plan::Plan &p, JsonRef trace,
                          const std::map<std::string, plan::TensorRef> &tensors, JsonRef reply);

}  // namespace tad::driver
