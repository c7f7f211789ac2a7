// Widening a transposed kernel's tile: launching it with a constexpr block size W times larger.
//
// Loop transposition (transpose.h) gives each program of a grid axis one iteration of the forward's
// loop: a tile of BLOCK_K elements of the gradient (matmul's dA tile of BLOCK_M x BLOCK_K). Owning R
// consecutive iterations with R copies of the slice makes R thin contractions per step; the same
// kernel launched with BLOCK_K' = R·BLOCK_K makes one R times wider, which the tensor cores run far
// better (matmul's dA and dB: 128-wide tiles instead of four 32-wide ones). widen_proof() shows that
// a kernel computes the same gradient for every value of the constexpr: nothing it computes depends
// on where a tile's boundary falls, only on each element's global index t·C + lane, for t the program
// id along `axis`, C the constexpr and `lane` the index along a dim spelled C. It rewrites nothing;
// the plan launches the kernel with C·W (its grid along `axis` sized with that value too).
//
// What it checks, on the kernel's values that depend on that program id, on C or on a lane of a C
// dim (the index values): they reach only integer arithmetic, comparisons, pointer offsets, and the
// address, mask or condition operands of loads, stores, atomic adds and tl.where; each address and
// each bound of a mask or condition (affine.h) moves with the program id C times as fast as with its
// lane of a C dim (so it is a function of t·C + lane), mentions C nowhere else, and is affine (a
// quotient or remainder of an index that reads neither that program id nor a C lane, a row offset
// wrapped `% M` in a kernel widened along K, counts as one more index variable). No
// reduction, scan or contraction runs along a C dim, no reshape, join or split touches one, and no
// literal equals C's value (it could be C baked in).
//
// Retiling the other block sizes (retile_proof, free_tiles). A transposed kernel's other tiles, those
// along a grid axis it keeps (matmul dB's BLOCK_N) and those its loop over the forward's G programs
// steps through (dB's BLOCK_M), were chosen for the forward's work. The same proof, with the program
// id replaced by that axis's id or by the loop's iteration, shows the kernel depends only on global
// indices t·C + lane; along the loop it also allows a sum or contraction along C whose result only
// adds into an accumulator of that loop (the same sum, split at other boundaries, rounded in another
// order). The launcher then sets C to C' only where C' divides the work exactly (value · count =
// C' · count', count the programs along the axis or the loop's G), so the kernel covers exactly the
// indices it did, no mask needed; the launch's grid along the axis, or G, becomes count'.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

// Whose tiles a constexpr spans: the program id along `axis`, or the iterations of loop `loop`
// (ir::loops index); `exact`: the launcher keeps the covered indices exactly (no mask needed).
struct TileRole {
    int axis = -1;
    int loop = -1;
    bool exact = false;
};

// How the launcher widens constexpr `name` of a transposed kernel (transpose.h): by a factor it
// computes from the launch's block sizes (widen_factor), never one fixed at the traced sizes, which
// at other sizes (another autotune config) could make a tile Triton computes wrong. `tiles`: the
// gradient tiles a program owns, each its dims spelled as constexpr names or integer literals.
struct Widening {
    std::string name;  // "" when not widened
    int64_t width = 1;  // the factor at the traced sizes (printed)
    int64_t most = 1;  // the largest factor
    std::vector<std::vector<std::string>> tiles;
};

// The widest tile side and the most elements a widened program owns. On the H100 with Triton 3.6 a
// float32 (TF32) dot of a 64-row tile and a transposed 512-wide one computes wrong values, and
// float32 matmul's dB at 256 x 64 ran 1.24x slower than at 128 x 64, as fast in 16 bits
// (bench/results/2026-11-26-h100-issue12-widen-cap.md).
constexpr int64_t kWidenSide = 128;
constexpr int64_t kWidenElements = 128 * 128;

// The factor: the largest power of two w <= most with w · elements <= kWidenElements and
// w · value <= kWidenSide, where `value` is the constexpr's and `elements` the tiles' elements at
// the launch. The generated module's _widen (module_runtime.py) computes the same.
int64_t widen_factor(int64_t value, int64_t most, int64_t elements);

// The widened constexpr's value for a launch whose constexpr values `lookup` gives; false where a
// tile's dim is neither a literal nor a constexpr the lookup knows.
bool widened_value(const Widening &w, const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out);

// A constexpr block size of a transposed kernel the launcher may set to another power of two.
struct FreeTile {
    std::string name;
    int axis = -1;  // the grid axis whose programs its tiles split; -1: the loop over the G programs
    int64_t target = 0;  // the value to launch with where it divides the work exactly (0: as recorded)
};

// Whether kernel `g` is independent of constexpr `c`'s value as above, along grid axis `axis`; `why`
// says what depends on it.
bool widen_proof(const ir::Function &g, int axis, const std::string &c, std::string *why);

// The loop over the G programs of a transposed kernel (ir::loops index): range(0, G, 1) with G, the
// parameter `grid_param`, read by nothing else; -1 where there is none.
int loop_over_grid(const ir::Function &g, const std::string &grid_param);

// The same proof for constexpr `c` in role `role` (above).
bool retile_proof(const ir::Function &g, TileRole role, const std::string &c, std::string *why);

// The constexprs of transposed kernel `g` (other than `widened`, launched at `width` times its
// value) proved free along one of the grid axes `axes` or along its loop over `grid_param`
// (range(0, G, 1), G read nowhere else), with targets where that loop contracts its tiles: a
// 64-wide step, and, where it accumulates one two-dimensional tile with one dim along a free axis
// and computes no 64-bit integer tile, that dim sized for about 128 x 256 elements (the tensor
// cores' preferred 16-bit shapes on the H100; the module applies targets to 16-bit launches only).
// The same kernel with its addresses in 64-bit tiles inside the loop (block pointers lowered to
// offsets) ran 3x slower at 128 x 256 (bench/results/2026-11-25-h100-issue12-retile.md): its
// axis tiles keep their size unless the tuner chooses.
std::vector<FreeTile> free_tiles(const ir::Function &g, const std::vector<int> &axes, const std::string &grid_param,
                                 const std::string &widened, int64_t width);

}  // namespace tad::passes
