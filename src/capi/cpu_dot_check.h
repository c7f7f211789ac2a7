// The CPU tier's second, reference-free check: the dot-product test <J v, u> = <v, Jᵀ u> between the
// emitted tangent kernel (forward mode) and the emitted backward, both run on the interpreter.
#pragma once

#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "capi/pipeline.h"
#include "frontend/ast.h"
#include "interp/interp.h"
#include "support/json.h"

namespace tad {

// One launch of the traced call, as check_entry (cpu_verify.cpp) ran it.
struct DotLaunch {
    const Derived *derived = nullptr;
    const std::map<std::string, interp::ArgValue> *args = nullptr;  // by parameter name, buffers of `mem`
    std::array<int64_t, 3> grid{};
};

// What check_entry has after running the backward on one traced call.
struct DotCheckInput {
    const frontend::KernelFile &kf;
    const ast::File &module;  // the emitted module, re-parsed
    JsonRef trace;  // with data
    const Chain &chain;  // derive_chain of the trace
    std::vector<DotLaunch> launches;
    const interp::Memory &mem;  // after the forward ran
    // (launch, parameter) -> the tensor's contents as that launch saw them, in `mem`, where a later
    // launch (or the launch itself) overwrote them.
    const std::map<std::pair<size_t, std::string>, int> &saved;
    const std::map<std::string, int> &tensors;  // "input:i" / "output:j" / "temp:k" -> buffer in `mem`
    const std::vector<std::vector<double>> &cotangents;  // u, per stub output (its storage)
    const interp::Memory &bwd_mem;  // after the backward ran
    const std::map<std::string, int> &grads;  // "input:<i>" -> Jᵀu's buffer in bwd_mem
};

// "input:i" / "output:j" / "temp:k": the key of the tensor a trace record's `ref` names.
std::string ref_key(JsonRef ref);

// Draws v for each gradient input, runs the module's tangent kernels (lowered from the emitted text)
// in the forward's order over one tangent buffer per tensor, each on the primal contents its launch
// saw, and compares Σ_j <u_j, (J v)_j> with Σ_i <v_i, (Jᵀ u)_i>. Returns {"jvp", "vjp", "rel_err",
// "rtol", "ok"}, or {"skipped": why} when forward mode does not handle the kernel.
Json dot_product_check(const DotCheckInput &in, std::mt19937_64 &rng);

// Puts `check` into a verify entry as "dot_product"; a failed check fails the entry, with a message.
void add_dot_product(Json &entry, Json check);

}  // namespace tad
