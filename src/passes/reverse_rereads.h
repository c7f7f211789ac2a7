// A loop that reads again what an earlier loop read, run last iteration first.
//
// A two-pass backward (group norm's: the sums over a group first, then dx over the same group) reads
// its input twice. Where a program's share outgrows its part of the L2, the second pass in the same
// order finds nothing there: the first blocks it asks for were evicted first, and each block it then
// loads evicts the next one it needs. Run from the other end, it starts on the blocks the first pass
// read last, which are still in the L2: the program reads from DRAM only what did not fit.
//
// What it proves: loop B's iterations commute, so their order is free. B is a top-level loop that
// carries no value, holds no nested loop, atomic add or barrier, loads nothing the kernel writes,
// and stores only to parameters each program writes each element of once (rewrites.h, with no
// run-time condition): no iteration reads or overwrites another's work. Its step is a positive
// literal or a constexpr that sizes a tile (positive on every launch). What it rewrites: B's
// iterator i (lo, lo + step, ... < hi) is replaced in its body by lo + (last - i), last = lo +
// ((hi - lo - 1) / step) · step computed before it, which takes the same values in the opposite
// order. It does so only where an earlier top-level loop loads through a pointer of the same
// parameter as one of B's loads (a reread; nothing to gain otherwise).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct ReversedLoops {
    ir::Function fn;
    std::vector<int> loops;  // the for_begin op index (in the input) of each loop reversed
    std::string why;  // where none is: why the last loop that rereads was not reversed ("" if none rereads)
};

ReversedLoops reverse_rereads(const ir::Function &f);

}  // namespace tad::passes
