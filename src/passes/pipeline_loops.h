// Software pipelining of grid-stride loops: prefetching each iteration's loads ahead.
//
// Triton pipelines a loop's loads (issued num_stages - 1 iterations ahead, through shared memory)
// only in loops that feed a dot, unless the loop asks for stages itself: tl.range(..., num_stages=S).
// A re-gridded backward (regrid.h) runs the forward's programs one after another in a loop
// `for r in range(program_id, G, num_programs)`; each iteration loads its rows, reduces them and
// stores, and without prefetching every program waits out each row's loads in turn.
// pipeline_loops() marks such loops `pipelined`; the kernel is emitted with
// `tl.range(lo, hi, step, num_stages=TAD_LOOP_STAGES)` and a constexpr TAD_LOOP_STAGES that the
// generated module sets to the launch's num_stages (lowered with it where shared memory runs out).
//
// What makes it sound: pipelining moves a load before the stores of earlier iterations (Triton
// does no alias analysis), so the kernel must write (store or add to) no buffer the loop loads from,
// by name; and the driver runs the pass on re-gridded kernels only, whose loop's iterations were the
// forward's programs: two parameters bound to one tensor cannot carry a value from one iteration to
// the next without a race in the forward itself. A loop a user wrote runs its iterations in order,
// so it could; it is not given to the pass. The hint changes no value otherwise. What it marks: a
// loop whose start is a program id and whose step is the number of programs along that axis, with
// no dot (those pipeline at the kernel's num_stages already) and no loop in its body, and at least
// one tile load whose address depends on no value the loop carries (Triton does not pipeline scalar
// loads). Other loops are left alone: pipelining group norm's strided loops (8 iterations each)
// made its float32 backward 1.7x slower (bench/results/2026-11-25-h100-issue12-pipelined.md).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

// The constexpr a pipelined loop's num_stages is spelled with (the module sets its value).
inline constexpr const char *kLoopStages = "TAD_LOOP_STAGES";

struct PipelinedLoops {
    ir::Function fn;  // the input, with the marked loops' for_begin `pipelined`
    std::vector<int> loops;  // their for_begin op indices
    std::string why;  // why the first loop it left alone was not marked ("" if none was left)
};

PipelinedLoops pipeline_loops(const ir::Function &f);

// Whether some loop of `f` is pipelined (its kernel then takes the constexpr kLoopStages).
bool has_pipelined_loop(const ir::Function &f);

// "the loop over the programs of axis 0 pipelined (its loads prefetched TAD_LOOP_STAGES - 1
// iterations ahead)", one line per loop, or "no loop pipelined: why".
std::string print(const PipelinedLoops &p);

}  // namespace tad::passes
