// Transformations and analyses over tile IR.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

// Common-subexpression elimination by value numbering, so that structurally equal address
// expressions become the same SSA values; an op that leaves an operand unchanged bit for bit (x * 1,
// x / 1, x - 0, an integer x + 0, by literals) is that operand. Memory ops are never merged, but with `read_only_loads`
// a load from a parameter the function never stores or adds to merges with an equal load before it
// in the same loop body (nothing can change what it reads).
ir::Function cse(const ir::Function &f, bool read_only_loads = false);

// Removes ops whose results are unused and that have no effect on memory. A loop-carried value goes
// (with what computes its next value) when nothing live reads its result or its value inside the
// loop; a loop goes when no carried value stays and it writes no memory.
ir::Function dce(const ir::Function &f);

// The elements plain stores reach, when they are all of some tensor's: every address is
// Σ coefficient · index, each index taking every value in [0, size) where `guards` hold. The
// stores cover a tensor whose (stride, size) pairs for sizes above 1 are the (coefficient, size)
// pairs above 1 (plan::covers checks that at run time).
struct Coverage {
    std::vector<std::pair<Poly, Poly>> digits;  // (coefficient, size)
    std::vector<Inequality> guards;
};

// How the backward writes the gradient of one pointer parameter.
struct GradWrite {
    enum Kind { Store, Atomic } kind = Atomic;
    // Store: the output parameter whose forward store has the same addresses and mask as the load
    // (so programs write disjoint gradient elements, by race freedom of the forward).
    std::string mirror;
    // Store: scalar parameter pairs that must be equal at run time for the addresses to coincide
    // (e.g. stride_x == stride_y); empty when they coincide structurally.
    std::vector<std::pair<std::string, std::string>> guards;
    // Its writes at data-dependent addresses are in a kernel of their own (split_scatter.h): Store,
    // the other writes; Atomic, that kernel's relaxed adds onto them.
    bool split = false;
    // Store: what its stores reach (the access analysis), when that can be all of the
    // buffer; the buffer then needs no zero fill where plan::covers holds.
    std::optional<Coverage> cover;
    // Split, with the adds that land on an element the same program stores added by that store
    // (fold_scatter.h): the stored values are final where the scatter kernel adds nothing, so the
    // buffer keeps the input's dtype.
    bool folded = false;
};

// Decides, for each pointer parameter in `wrt`, whether its gradient can be written with plain
// stores. Expects `f` after cse(). A parameter loaded more than once is accumulated atomically.
std::map<std::string, GradWrite> plan_gradient_writes(const ir::Function &f, const std::vector<std::string> &wrt,
                                                      const std::vector<std::string> &outputs);

// The pointer parameter a pointer value is derived from ("" when it is not one parameter's): through
// pointer arithmetic, broadcasts, tl.where between two of its pointers, and loop-carried values that
// every iteration keeps in the buffer they start in.
std::string pointer_base(const ir::Function &f, ir::ValueId p);

// The pointer_base of every store and atomic add of f ("" among them where one cannot be told).
std::set<std::string> written_buffers(const ir::Function &f);

// One load, store or atomic add of a kernel, in op order.
struct Access {
    int op = -1;  // index in f.ops
    ir::OpKind kind{};  // Load, Store or AtomicAdd
    std::string param;  // the pointer parameter it addresses
    ir::ValueId ptr = ir::kNoValue;
    int loop = -1;  // the innermost loop holding it (index into ir::loops(f)), -1: none
};

// The pointer parameters a kernel loads from, stores (or atomically adds) to, atomically adds to,
// and writes with plain stores, and every access in op order.
struct MemoryParams {
    std::set<std::string> loaded, stored, accumulated, overwritten;
    std::vector<Access> accesses;
};
// Throws TAD_ERR_UNSUPPORTED, with the access's file:line:col, for an access through a pointer whose
// parameter pointer_base cannot tell.
MemoryParams memory_params(const ir::Function &f);

// Removes parameters nothing reads (a backward needs only part of the forward's arguments).
ir::Function drop_unused_params(const ir::Function &f);

// Ops outside every loop (a loop's own ops, through its results, are inside).
std::vector<bool> top_level(const ir::Function &f);

// Whether v is a literal 0 (any type), or a broadcast of one. A constexpr spelled by name is not one,
// though 0 in the trace: the derived code keeps its name, and another launch may set it otherwise.
bool zero_constant(const ir::Function &f, ir::ValueId v);

// Whether constexpr `name` sizes one of f's tiles (a dim spelled by it): a block size, positive for
// every launch.
bool sizes_a_tile(const ir::Function &f, const std::string &name);

// Whether some op of v's cone (v's own op, its operands', and so on) satisfies `p`.
bool cone_any(const ir::Function &f, ir::ValueId v, const std::function<bool(const ir::Op &)> &p);

// The operands of the `and` tree at v (v itself where it is no `and`): a mask's conjuncts, by value.
std::vector<ir::ValueId> and_operands(const ir::Function &f, ir::ValueId v);

// What carried value k of loop l adds at every iteration, where its next value is itself plus (or,
// a pointer, offset by) a value defined before the loop, a constant, or a broadcast of either (`p +=
// D` on a tile of pointers, `c += 2`): that value (the carried value at iteration i is then init +
// i · amount); kNoValue where it is not so.
ir::ValueId advance_of(const ir::Function &f, const ir::Loop &l, size_t k);

// init + steps · amount in b's function (values of it): a carried value advance_of describes, at
// iteration `steps` (an integer scalar); a pointer's offset in 64 bits, an integer's in its type.
ir::ValueId advanced_by(ir::Builder &b, ir::ValueId init, ir::ValueId amount, ir::ValueId steps);

// Whether op `op` is the one reader of value v (`users`: ir::users of its function).
bool only_user(const std::vector<std::vector<int>> &users, ir::ValueId v, int op);

// The grid axes the kernel reads tl.program_id of, ascending.
std::vector<int> program_axes(const ir::Function &f);

// Op i of `f` for a diagnostic: "load at file.py:12:5" ("loop at ..." for a loop's start).
std::string op_at(const ir::Function &f, int i);

// The program's index in the grid linearized over grid axes `axes` (ascending, lowest fastest):
// ids[a] + counts[a] · (ids[a'] + ...), from program ids and program counts per axis (values of b's
// function; only those of `axes` are read). 0 (i32) for no axes.
ir::ValueId linear_program(ir::Builder &b, const std::array<ir::ValueId, 3> &ids,
                           const std::array<ir::ValueId, 3> &counts, const std::vector<int> &axes);

// `base`, or `base_`, `base__`, ...: the first that names no parameter or constexpr of `f`.
std::string fresh_name(const ir::Function &f, std::string base);

// A function with f's name, constexprs, specializations and source path, and nothing else yet: what
// a rewrite of f builds on.
ir::Function empty_like(const ir::Function &f);

// Appends a copy of `op` (of f) reading map's values for its operands; its result, named as in f,
// is recorded in map.
void copy_op(ir::Builder &b, const ir::Function &f, const ir::Op &op, std::vector<ir::ValueId> &map);

// Appends parameter `index`, a pointer to the buffer of f's parameter `base` as the launch left it
// (ir::Param::final_of), named `base`_final or a fresh variant of it.
ir::Param final_param(ir::Builder &b, const ir::Function &f, const std::string &base, size_t index);

// Finishes a rewrite `out` of f: f's parameters, their values mapped through `map`, then `finals`
// (final_param's).
ir::Function with_params(ir::Function out, const ir::Function &f, const std::vector<ir::ValueId> &map,
                         const std::vector<ir::Param> &finals);

// What every derived kernel goes through: cse, dce, then drop_unused_params.
ir::Function cleanup(const ir::Function &f);

// Rebuilds `f` keeping ops with keep[i] and renaming operands through `repl` (value -> value).
ir::Function compact(const ir::Function &f, const std::vector<bool> &keep, const std::vector<ir::ValueId> &repl);

// `f`'s ops in `order` (a permutation of its op indices in which every value is defined before its
// uses and the loops stay well nested), its values renumbered in the new order.
ir::Function reordered(const ir::Function &f, const std::vector<int> &order);

}  // namespace tad::passes
