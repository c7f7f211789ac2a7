// The tape: scratch global memory that holds the carried state of loops with nonlinear state, one
// slot per iteration, so their reversal reads the state instead of recomputing it (LoopPolicy::Tape).
//
// Layout, per program: the taped loops' regions one after another in forward order; a region is
// trips × S float32 elements, where S is the total element count of the loop's nonlinear carried
// float values (not its accumulators); iteration k's slot starts at k·S and holds the values in
// carried order, each flattened row-major. Only top-level loops are taped (loops inside them run
// within their iterations).
// Program p's tape starts at p · tape_stride, p being the linear program id. The launcher learns
// tape_stride from a sizing kernel (tape_sizing below) that writes each program's need, or, where
// that need is the same for every program and computed from the launch's integer arguments and
// constexprs alone (host_need), from that expression on the host: no kernel, no synchronization.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"
#include "passes/host_expr.h"

namespace tad::ad {

// Integer scalar arithmetic that skips the identities (x + 0, x * 1, x // 1, (x + c) - c) unit
// steps and zero starts would leave in the emitted code.
ir::ValueId int_op(ir::Builder &b, ir::OpKind k, ir::ValueId a, ir::ValueId b2);

// Iterations of `for i in range(lo, hi, step)` with step > 0: (hi - lo + step - 1) // step, or 0.
ir::ValueId trip_count(ir::Builder &b, ir::ValueId lo, ir::ValueId hi, ir::ValueId step);

// Element count of a tile type as i32, spelled with the dims' constexpr names.
ir::ValueId numel_of(ir::Builder &b, const ir::Type &t);

// Linear program id as i64: pid0 + pid1·n0 + pid2·n0·n1 over the grid axes the kernel reads.
ir::ValueId program_index(ir::Builder &b, int max_axis);
int max_program_axis(const ir::Function &f);

// Pointers to a value of type `t` at element `offset` (i32) of slot `k` (i32) of a region starting
// at scalar pointer `base`, whose slots hold `slot` (i32) elements each.
ir::ValueId tape_pointers(ir::Builder &b, ir::ValueId base, ir::ValueId k, ir::ValueId slot, ir::ValueId offset,
                          const ir::Type &t);

// A loop of the forward that is reversed from the tape.
struct TapedLoop {
    int begin = -1;  // its for_begin op index
    std::vector<ir::ValueId> state;  // the forward's loop_arg values that are taped, in carried order
};

// The sizing kernel: replays what the forward needs to know the taped loops' trip counts and stores
// each program's tape need (elements, i64) at Need[program]. Its parameters are the forward's that it
// reads, then `need_name` (ParamOrigin::TapeNeed).
TapeSizing tape_sizing(const ir::Function &fwd, const std::vector<TapedLoop> &loops, const std::string &name,
                       const std::string &need_name, const Cleanup &cleanup = passes::cleanup);

// The need a sizing kernel stores, as an expression of its integer parameters and constexprs; none
// where it reads a program id or memory (trip counts that differ per program, causal attention's).
std::optional<passes::HostExpr> host_need(const ir::Function &sizing);

}  // namespace tad::ad
