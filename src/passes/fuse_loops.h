// Sibling loops fused: two loops over the same range, the second needing nothing the first
// computes, run as one loop whose body is the first's followed by the second's.
//
// A backward walks its input several times where the forward did: group norm's reverse mode has a
// loop for the mean's and the weights' adjoints and one for the variance's (each reading the whole
// group), and with its factor taken out (factor_sums.h) the second needs nothing from the first.
// Fused, each block of the input is loaded once for both: one pass over the input less. The
// second body's ops that repeat one of the first's (same op on the same operands, the induction
// variable now shared) are not repeated: address arithmetic, masks, and loads from parameters the
// kernel never writes.
//
// What it fuses: loops A and B, B the next loop after A with the same parent, whose for_begin ops
// are identical (bounds, step, iterator); loops inside either move with its body (segment_atomics.h's
// guarded adds sit in group norm's first loop). The ops between them that B or
// its initial values need must not depend on A and must not write memory; they move before A, the
// others stay after the fused loop (it computes everything they read), stores and barriers included
// (batch norm's dW, dB and running statistics' gradients). Where ops with effects stay between so,
// B writes no memory and B and what moves before A read only buffers the kernel never writes:
// parameters the kernel writes may be one buffer at run time (a launch passing x twice gets one
// shadow for both), so nothing else can tell that B does not see those writes move. B may not read anything A computes, and neither
// loop may read or write a parameter the other writes (by pointer base). What makes it sound: an
// iteration of B depends on no iteration of A, through values or memory, so interleaving the
// iterations (A's i-th, then B's i-th) computes the same values; the merged ops compute the same
// values by definition, loads included since nothing writes their memory. The ops between the
// loops may read no parameter either loop writes (they move before A or after B), and what they
// write, they write after A as before, and after B instead of before it, which B does not see.
// Otherwise parameters are told apart by name: two pointer parameters are taken to be distinct
// buffers, as in the schedule passes (a launch passing one tensor twice gets atomic adds for its
// gradient, pipeline.cpp's keep_atomic), with the exception above.
#pragma once

#include "ir/ir.h"

namespace tad::passes {

struct FusedLoops {
    ir::Function fn;
    int fused = 0;  // pairs of loops fused
};

FusedLoops fuse_loops(const ir::Function &f);

}  // namespace tad::passes
