// Buffers a program may write an element of more than once: reverse mode must then zero that
// element's gradient after the last write's backward reads it (the earlier writes' values were
// lost), which costs a shadow of the buffer; where each element is written once, the incoming
// gradient is read as it is.
//
// A parameter's plain stores write each element once per program when they share one index map and
// mask (several at constant distances: `P + offs`, `P + N + offs`) and their address is injective over
// the lanes and the iterations of every loop holding them, the program ids held fixed (access.h's
// writes_once_per_program). A store in a loop whose address does not move with it, one that keeps
// the quotient of an index divided (`Y + t // 2`), or stores indexing one buffer differently are
// rewrites. What the proof needs at run time (`stride_t >= C`) is a precondition of the backward,
// which the generated module checks: two programs writing one element race in the forward already,
// so programs are not compared.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct Rewrite {
    std::string param;
    // Alternatives of run-time conditions under which each element is written once after all (one
    // per order of the index variables); none: the proof failed, and `why` says why.
    std::vector<std::vector<Inequality>> unless;
    std::string why;
    int op = -1;  // the first of its stores
};

// The parameters f stores to (plain stores; adds accumulate) that a program may write an element of
// twice, in parameter order. Expects `f` after cse().
std::vector<Rewrite> rewrites(const ir::Function &f);

// Whether the store at op `store` alone writes each element at most once over the lanes and the
// iterations of the loops holding it, per program (writes_once_per_program; run-time conditions
// aside): then a load through its pointer in its loop never reads what an earlier iteration stored.
bool store_once_per_program(const ir::Function &f, int store);

// The first plain store to one of `params` whose lanes along a dim of more than one lane address one
// element (a tile of one value stored at one address: no backward tells the lanes' cotangents
// apart), its op index; -1 where there is none (or its address is not affine).
int store_with_repeated_lanes(const ir::Function &f, const std::vector<std::string> &params);

// Where f on some choice of its tile coordinates (passes/remap_programs.h, whose backward runs only
// where the launch's programs map one to one onto a box of tiles: a persistent kernel's loop over
// its tiles) stores `param` outside loops at an address injective over all its programs and lanes
// (access.h's writes_distinct over every grid axis: two iterations of the loop that became two
// programs must not write one element either): that choice's index among remap_programs(f)'s, the
// proof's run-time conditions in `unless` (alternatives, none where it needs none); -1 where none
// does (or its conditions name a grid size, which is the box's, not the launch's).
int once_on_tiles(const ir::Function &f, const std::string &param, std::vector<std::vector<Inequality>> *unless);

}  // namespace tad::passes
