// The exported backward of one forward launch, as `tad_export` writes it and `tad_kernels_load`
// reads it: a directory holding manifest.json (schema in docs/reports.md, "Kernel manifest") and
// one file per cubin. The manifest carries the launch plan (plan/json.h) and, per kernel the plan
// runs, the cubins Triton compiled for it: one per specialization (constexpr values, options, and
// the types Triton gave the arguments).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "support/json.h"

namespace tad::aot {

// 3: a Covered allocation may carry `run` (plan::Alloc::run): its cover is that run's.
// 4: a case may carry preconditions (plan::Precondition) the executor checks before its branches.
constexpr int kManifestVersion = 4;
constexpr const char *kManifestFile = "manifest.json";

// One parameter of a compiled kernel, as Triton 3.6 specialized it: `type` is its signature's
// ("*fp32", "i32", "i64", "u1", "fp32", ...) or "constexpr" (a tl.constexpr, or an integer
// argument equal to 1, which Triton folds into the code and drops from the entry's parameters).
struct CubinParam {
    std::string name;
    std::string type;
    bool divisible = false;  // tt.divisibility 16: the pointer's address / the integer a multiple of 16
    std::string value;  // constexpr: its value as a Python literal
    bool operator==(const CubinParam &o) const {
        return name == o.name && type == o.type && divisible == o.divisible && value == o.value;
    }
};

struct Cubin {
    std::string file;  // in the export directory
    std::string function;  // the entry's name
    int num_warps = 4, num_stages = 3, num_ctas = 1;
    std::array<int, 3> cluster_dims{1, 1, 1};
    int shared = 0;  // dynamic shared memory, bytes
    int64_t global_scratch_size = 0, global_scratch_align = 1;  // per program
    int64_t profile_scratch_size = 0, profile_scratch_align = 1;
    bool cooperative = false, pdl = false;
    std::vector<CubinParam> params;  // every parameter of the kernel, in order
    // Bytes of each parameter of the entry (the PTX .entry's): the non-constexpr parameters, then
    // Triton's two trailing scratch pointers (global, profile).
    std::vector<int> abi;
    bool operator==(const Cubin &o) const;
};

struct KernelInfo {
    std::string name;
    // Its largest tile's dims (constexpr names or numbers): a re-gridded run's program count.
    std::vector<std::string> largest_tile;
    bool loop_stages = false;  // takes TAD_LOOP_STAGES, set to the launch's num_stages
    // None for a kernel of a branch the export's launches did not take.
    std::vector<Cubin> cubins;
    bool operator==(const KernelInfo &o) const {
        return name == o.name && largest_tile == o.largest_tile && loop_stages == o.loop_stages && cubins == o.cubins;
    }
};

// A parameter of the forward kernel: kind "tensor" (with the stub tensor it is and that tensor's
// rank), "int", "float", "bool" or another trace-record kind (docs/worker-protocol.md).
struct ForwardParam {
    std::string name;
    std::string kind;
    plan::TensorRef tensor;
    int ndim = 0;
    bool operator==(const ForwardParam &o) const {
        return name == o.name && kind == o.kind && tensor == o.tensor && ndim == o.ndim;
    }
};

// The support kernels the executor launches for what the Python launcher does with torch
// (src/runtime/python/tad_aot_support.py): per-program partial rows summed in order, and casts.
constexpr const char *kRowSum = "tad_row_sum";
constexpr const char *kCast = "tad_cast";
constexpr int64_t kSupportBlock = 1024;  // their BLOCK constexpr
constexpr int kSupportWarps = 4;

struct Manifest {
    std::string tad_version, triton_version, device;
    int capability = 0;  // 10 * major + minor of the device it was compiled on
    std::string stub, kernel;  // the stub and the forward kernel it launches
    std::vector<ForwardParam> params;  // the forward kernel's, in order
    plan::Plan plan;  // the backward plan: one step
    std::map<std::string, KernelInfo> kernels;  // the plan's kernels and the support kernels, by name
};

// Why this executor cannot run `p` ("" when it can): a named step or argument it does not handle.
std::string unsupported(const plan::Plan &p);

Json manifest_json(const Manifest &m);
// One cubin of kernel `kernel` in the manifest's form (as the worker's export reply gives it too);
// TAD_ERR_INVALID_ARGUMENT when its entry's parameters are not its signature's at Triton's widths
// followed by the two scratch pointers.
Cubin cubin_from_json(const std::string &kernel, JsonRef j);
// Writes manifest.json into `dir` (which holds the cubins).
void write_manifest(const std::string &dir, const Manifest &m);
// Reads `dir`/manifest.json: TAD_ERR_IO when it cannot be read, TAD_ERR_INVALID_ARGUMENT
// "<dir>/manifest.json: <what>" when it is not a manifest of this version, TAD_ERR_UNSUPPORTED
// when its plan has a step this executor does not handle (unsupported()).
Manifest read_manifest(const std::string &dir);

}  // namespace tad::aot
