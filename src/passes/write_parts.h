// Write parts: a backward kernel that runs out of shared memory, run as several launches.
//
// A kernel with several dots (attention, chunked recurrences) keeps their operand tiles in shared
// memory; its backward computes more of them than the forward did, and at large block sizes it can
// need more shared memory than the GPU has even with one pipeline stage (chunked linear attention's
// float32 backward at 128-wide heads: 245760 bytes of 232448). Such a kernel can instead run once
// per tensor it writes, each launch computing and writing that tensor only: Triton drops what a
// launch's writes do not need, dots included. write_parts() numbers the writes for that: each
// pointer parameter the kernel stores or adds to is a part, numbered from 1 in the order of its
// first write. The kernel is emitted with a constexpr kWritePart (default 0: every write) and each
// write under `if TAD_PART == 0 or TAD_PART == k:`; the generated module launches parts 1..n in
// turn where the whole kernel does not fit at one stage (module_runtime.py's _fit_shared_memory),
// and never otherwise. What makes it sound: the parts together make the same writes as the whole,
// each once, and no launch reads what another writes: a kernel that loads from a parameter it
// writes gets no parts (neither does one with fewer than two dots, whose shared memory is not the
// dots', nor one with a single written parameter).
#pragma once

#include <vector>

#include "ir/ir.h"

namespace tad::passes {

// The constexpr that selects a part (0: the whole kernel).
inline constexpr const char *kWritePart = "TAD_PART";

// Per op of `f`: the part of its write (1..n), 0 for ops that write nothing; empty where `f` gets no
// parts.
std::vector<int> write_parts(const ir::Function &f);

// The number of parts in write_parts()'s result (0 for none).
int part_count(const std::vector<int> &parts);

}  // namespace tad::passes
