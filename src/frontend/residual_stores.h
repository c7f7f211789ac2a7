// Residual stores: a forward file's source with stores added to its kernels, of values the backward
// would otherwise recompute (docs/saved-residuals.md).
//
// The edit is textual and minimal, so that the kernel's own outputs stay bit for bit the user's:
// after a top-level `for` loop of a kernel's body, one statement,
//     _tad_tl.store(TAD_SAVED_<k> + <the program's linear id> (* D + <lane>), <expr>)
// (before the next statement on its line where that is a simple statement, so that no line moves;
// else on a line of its own at the loop's indentation, moving the lines after it by one), the parameter TAD_SAVED_<k> (see below)
// appended to the kernel's signature (with a default of None where the parameters before it have
// defaults), and at the end of the file `import triton.language as _tad_tl`. The linear id runs over
// the grid axes the kernel reads (program_id(a) + num_programs(a) · program_id(b) for axes a < b):
// programs that differ only along another axis compute the same value, so each element holds one
// value. A row vector of D elements (D a constexpr parameter of the kernel) is saved whole, lane i
// at i: the parameter is then named TAD_SAVED_<k>__D, which tells the launcher (module_runtime.py's
// _Recorded, for every launch that does not pass the buffer) its D float32 elements (float64 beside
// a float64 tensor) per program of the launch's grid. The edited kernel runs on every launch, with
// or without grad (one store per program more than the user's).
//
// A tile saved like a tensor (ResidualStore::like, a contraction's accumulator) is stored instead at
// the addresses of one of the kernel's own stores, under its mask:
//     _tad_tl.store(<its pointer expression, `like` replaced by TAD_SAVED_<k>_LIKE_<like>>, <expr>,
//                   mask=<its mask>)
// Each name those expressions read is a parameter the kernel never assigns, a global, a name the
// kernel assigns once, at the top level of its body, before the loop, or one it assigns so after
// the loop and before that store: then replaced by its value's text, in parentheses, read likewise.
// The launcher allocates the buffer like the tensor: float32 (float64 beside a float64 tensor),
// from the tensor's first element to the end of its storage.
#pragma once

#include <string>
#include <vector>

#include "frontend/kernel_file.h"

namespace tad::frontend {

struct ResidualStore {
    std::string kernel;  // a jit function of the file, by the name the stub launches it with
    int line = 0, col = 0;  // the `for` statement's position, as ir::SrcLoc (column 1-based)
    std::string expr;  // Python, over the kernel's variables after the loop and `_tad_tl` (triton.language)
    std::string param;  // TAD_SAVED_<k>, then __<dim> for each of `dims`
    std::vector<int> axes;  // the grid axes the kernel reads, ascending
    std::vector<std::string> dims;  // the saved row vector's dim, a constexpr parameter (none: a scalar)
    // A tile saved where a store of the kernel writes (`like`: that store's pointer parameter, the
    // tl.store call at store_line:store_col) instead of at the linear program id: see above.
    std::string like = {};
    int store_line = 0, store_col = 0;
};

// The source with `stores` inserted, or "" with `why` set when one cannot be: its kernel is wrapped
// in something other than triton.jit (@triton.autotune or @triton.heuristics: the buffer is sized
// before the launch chooses its config), takes *args, **kwargs or positional-only parameters, or has
// no `for` loop at that position directly in its body (a loop of a helper it calls, or a nested
// one), or that loop has an `else` clause, or the value is a tile of more than one dim (saved at
// the linear program id); for a tile saved like a tensor, when its store is not a tl.store statement
// at the top level of the body after the loop, or takes a boundary check, or its expressions read a
// name other than as said above, or `like` other than once in the pointer, or call a load, store,
// atomic or random function.
std::string insert_residual_stores(const KernelFile &kf, const std::vector<ResidualStore> &stores, std::string *why);

}  // namespace tad::frontend
