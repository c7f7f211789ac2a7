// A loop's end that rises with one grid axis' program id.
//
// A causal attention's forward stops its loop over key blocks at its own query block,
// `hi = tl.minimum((start_m + 1) * BLOCK_M, N)`: program p of axis 0 runs the iterations i with
// lo + i·step < hi(p). Loop transposition (transpose.h) gives each program of that axis one
// iteration i and loops over the forward's programs p; where hi never falls as p rises, the programs
// that have iteration i are p_lo .. G-1, for the first such p_lo, and the largest trip count is the
// last program's. rising_end() proves that and gives the host that largest end.
//
// What it proves: hi is built from the axis' program id, values that read no program id (integer
// parameters, constexprs, constants, other grid sizes), by sums, differences with the program id on
// the left, products with one factor that reads no program id, quotients by one, minimum, maximum
// and widening casts. A factor or divisor that is a literal must be at least 0 (a divisor at least
// 1); one that is a parameter or a constexpr, or an expression of them, is at least 0 (1) at run
// time, a condition the caller checks (`conditions`). Trunc division by a positive divisor never
// falls as its dividend rises, nor do the others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/host_expr.h"

namespace tad::passes {

struct RisingEnd {
    HostExpr last;  // hi at the last program along the axis: program_id(axis) is num_programs(axis) - 1
    HostExpr first;  // hi at program 0 (a rising start's smallest value: transpose.h)
    std::vector<Inequality> conditions;  // what makes hi rise: factors at least 0, divisors at least 1
};

// nullopt, with `why`, where scalar v of f does not provably rise with program_id(axis).
std::optional<RisingEnd> rising_end(const ir::Function &f, ir::ValueId v, int axis, std::string *why);

}  // namespace tad::passes
