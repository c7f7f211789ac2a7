// CPU reference interpreter of the tile IR: the numeric oracle of the CPU test tier.
//
// run() executes an ir::Function once per program of a launch grid on concrete buffers.
// - Every number is a double whatever its IR type: the point is a precise reference to compare with
//   central finite differences, so no f16/bf16/f32 rounding is emulated.
// - Integers are int64 arithmetic (wrapping past int64, no narrowing to i32), exact while |v| < 2^53.
//   Div and Mod truncate toward zero (C); integer division by zero is an error. Casts float -> int
//   truncate toward zero; any -> i1 is != 0. Float Mod is fmod (Triton's frem).
// - Undefined values are visible: a masked-off Load lane without `other` yields NaN (whose payload
//   names the load: undefined_origin). In integer and
//   i1 context NaN means "undefined" and propagates through integer ops, casts, Where and AddPtr; it
//   is an error only where it decides something: as a mask lane, or as the address of a lane that is
//   read or written. So `idx = load(I, mask=m); load(W + idx, mask=m)` runs as it does on a GPU.
// - Maximum, Minimum, ReduceMax and ReduceMin propagate NaN (stricter than Triton's maxnum), so an
//   undefined lane cannot hide behind a max; likewise Argmax / Argmin give NaN (an undefined index)
//   where a compared lane is NaN. Otherwise their ties go to the smallest index, as Triton's
//   default tie_break_left=True.
// - Programs run one after another, x (axis 0) fastest: for z, for y, for x. AtomicAdd is a plain +=.
// Errors are tad::Error:
// - TAD_ERR_INVALID_ARGUMENT for what the launch gets wrong: arguments not matching fn.params, a
//   negative grid dim, or a fault while running, reported as
//   "<source_path>:<line>:<col>: <what> in program (<pid0>, <pid1>, <pid2>)", where <what> is one of
//   "out-of-bounds <load|store|atomic_add> of '<buffer>' at element <i> (size <n>)",
//   "<load|store|atomic_add> of '<buffer>' at an undefined element",
//   "<load|store|atomic_add> with an undefined mask lane", "integer division by zero".
// - TAD_ERR_INVALID_ARGUMENT, before any program runs, for a value whose tile has more than
//   kMaxTileElements lanes: "<source_path>:<line>:<col>: a tile of shape [<dims>] in '<fn>' has more
//   than 1048576 elements, the interpreter's limit (and Triton's); use smaller block sizes".
// - TAD_ERR_INTERNAL for IR it cannot run: fails ir::verify, arithmetic on pointers, float-only
//   math on integers or bitwise ops on floats.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::interp {

// The most lanes one tile may have: Triton's TRITON_MAX_TENSOR_NUMEL.
constexpr int64_t kMaxTileElements = 1 << 20;

// One tensor's storage, element-indexed. `dtype` is what the caller converts to and from; the
// interpreter itself keeps doubles.
struct Buffer {
    std::string name;  // used in diagnostics
    ir::DType dtype = ir::DType::F32;
    std::vector<double> data;
};

struct Memory {
    std::vector<Buffer> buffers;
    int add(Buffer b);  // returns the buffer's id
    Buffer &at(int id);  // TAD_ERR_INVALID_ARGUMENT for an unknown id
};

// The value passed for one kernel parameter.
struct ArgValue {
    enum Kind { Pointer, Int, Float } kind = Int;
    int buffer = -1;
    int64_t offset = 0;  // elements
    int64_t ival = 0;
    double fval = 0;

    static ArgValue pointer(int buffer, int64_t offset = 0) { return {Pointer, buffer, offset, 0, 0}; }
    static ArgValue integer(int64_t v) { return {Int, -1, 0, v, 0}; }
    static ArgValue real(double v) { return {Float, -1, 0, 0, v}; }
};

// args: one per fn.params, in order. grid: programs per axis (0 on any axis runs none).
void run(const ir::Function &fn, const std::vector<ArgValue> &args, const std::array<int64_t, 3> &grid, Memory &mem);

// The NaN a masked-off Load lane without `other` at `loc` yields, and the load's location read back
// from a value computed from it (false where `x` carries none: a number, or a NaN of other origin).
double undefined_lane(const ir::SrcLoc &loc);
bool undefined_origin(double x, ir::SrcLoc *loc);

}  // namespace tad::interp
