// Program ids a kernel maps to tile coordinates, rewritten as a grid of those coordinates.
//
// Kernels often compute their tile coordinates from the program ids with integer division,
// remainder and min / max: a grouped tile order for L2 reuse (`pid_m = first_m + (pid % per_group)
// % group_rows`), batch and head from one axis (`off_z = off_hz // H`). The access analysis cannot
// follow such addresses (they are not affine in the program ids), so every gradient they reach
// would be an atomic add.
//
// What remap_programs proves, from the IR: the program ids reach the rest of the kernel only
// through at most three scalar coordinates t_0 .. t_{d-1}. The program ids' scalar integer slice
// (the ops of add, sub, mul, div, mod, min, max and widening casts over program ids, integer
// parameters and constants, outside loops) is left only at its *exits*, each of which is a
// coordinate times and plus values that do not depend on the program ids; the kernel reads no
// num_programs. Each program's behaviour is then a function of its coordinates alone.
//
// A persistent kernel first: where a top-level loop `for t in range(pid, hi, step)` takes a
// program id (of one axis, read by nothing else) as its start, carries from one iteration to the
// next only inductions of t (a counter started at pid, or at pid - step and advanced by step in
// the body: then it is t, or t - step), and no store or atomic add lies outside it, its iterations
// are programs of their own: the loop goes and t becomes that axis's program id, over the
// (program, iteration) pairs the launch runs (the map's `tiles`). Its tile arithmetic then lies
// outside loops, as above.
//
// What it rewrites: each coordinate t_i becomes program_id(i); the slice that computed it goes.
// The rewritten kernel, launched on the grid (n_0, .., n_{d-1}), runs the same set of programs as
// the original on its launch's grid exactly when the map from that grid's programs to coordinates
// is a bijection onto the box [0, n_0) x .. x [0, n_{d-1}): programs share nothing but memory and
// run in no set order. That is a property of each launch (its sizes), which ProgramMap::box checks:
// an executor runs a backward derived from the rewritten kernel on the box only where it holds,
// and otherwise the one derived from the original kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/host_expr.h"

namespace tad::passes {

// Grids with more programs are not enumerated: box() says no (the executor keeps the original).
inline constexpr int64_t kMaxMappedPrograms = int64_t{1} << 20;

// A persistent loop's iterations as programs: program p runs t in range(lo, hi, step) (host
// expressions of p's "program_id(k)", "num_programs(k)", integer parameters and constexprs), each
// a program whose id along `axis` is t.
struct PersistentTiles {
    int axis = 0;
    HostExpr lo, hi, step;
};

struct ProgramMap {
    // Coordinate i as a host expression of "program_id(0..2)" (of the programs `tiles` makes, where
    // there is a persistent loop), integer parameters and constexprs.
    std::vector<HostExpr> coords;
    std::optional<PersistentTiles> tiles;

    // The box (n_0, .., n_{d-1}) when the map from the programs of `grid` (three sizes; with
    // `tiles`, their iterations) to coordinates, with the other names' values from `lookup`, is a
    // bijection onto it; nullopt when it is not, when a name is unknown, or past kMaxMappedPrograms.
    std::optional<std::vector<int64_t>> box(const std::vector<int64_t> &grid,
                                            const std::function<bool(const std::string &, int64_t *)> &lookup) const;
    // The names the coordinates read besides the program ids (launch scalars, constexprs), sorted.
    std::vector<std::string> names() const;
    // "(t_0, t_1)" as host expressions, names as they are (tests, --explain).
    std::string str() const;
    bool operator==(const ProgramMap &o) const;
};

struct Remapped {
    ir::Function fn;  // the kernel with program_id(i) for coordinate i
    ProgramMap map;
};

// The rewrites of `f` (after cse), or none with `why`: no program ids, program ids used affinely
// already (nothing to gain), a program id or its arithmetic inside a loop, a num_programs, more
// than three coordinates, or a coordinate the host cannot compute. Which values are coordinates is
// a choice: each exit with outer affine operations on independent values peeled off is one (a
// grouped tile row `first_m + r`), or, splitting sums of two dependent values, each term is one
// (a base offset `z * stride_z + h * stride_h`). Both rewrites are returned where they differ,
// coarse first: a launch's map may be a bijection onto a box for one and not the other.
std::vector<Remapped> remap_programs(const ir::Function &f, std::string *why);

}  // namespace tad::passes
