// Triton 3.6's calling convention, as the executor must reproduce it to run a cubin Triton compiled:
//  - every argument is specialized by its value: a tensor is "*<dtype>" and divisible when its
//    address is a multiple of 16; an int is i32 (i64 outside the int32 range) and divisible when
//    a multiple of 16, except that an int equal to 1 becomes the constant 1 (a constexpr, absent
//    from the entry's parameters); a Python float is fp32; a bool is u1. A cubin serves exactly one
//    such specialization, so the executor picks the cubin whose recorded specialization equals the
//    call's (pick()).
//  - the entry takes the non-constexpr arguments in order, each at its type's width (a float
//    scalar as a 4-byte float, a bool as one byte), then two pointers: the global and the profile
//    scratch buffers (pack()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aot/dtype.h"
#include "aot/manifest.h"

namespace tad::aot {

// A device pointer: an address, an offset into the launch's workspace (whose base is 256-byte
// aligned, so an offset keeps its alignment), or one of the caller's pointers (`slot` of the
// program's list; `value` its address in the launch the program was built for). Programs keep the
// latter two symbolic, so that a program serves later launches with other buffers.
struct Ptr {
    enum Base { Address, Workspace, Caller } base = Address;
    uint64_t value = 0;
    size_t slot = 0;
};

// One argument of a kernel call, as the executor passes it.
struct CallArg {
    enum Kind { Pointer, Int, Float, Bool, Constexpr } kind = Int;
    std::string name;
    Ptr ptr;  // Pointer
    const DType *dtype = nullptr;  // Pointer: its elements
    int64_t i = 0;  // Int, Bool; Constexpr when `literal` is empty
    double f = 0;  // Float
    std::string literal;  // Constexpr given as a Python literal (not an integer)
    // False for an argument the kernel declares in do_not_specialize (an int: i32 or i64, never
    // divisible nor the constant 1) or do_not_specialize_on_alignment (a pointer: never aligned).
    bool specialize = true;

    static CallArg pointer(std::string name, Ptr p, const DType &d);
    static CallArg integer(std::string name, int64_t v);
    static CallArg constexpr_int(std::string name, int64_t v);
};

// The specialization Triton gives `a` (its type, divisibility, and a constexpr's literal).
CubinParam specialize(const CallArg &a);

// The cubin of `k` for these arguments (matched to its parameters by name, constexprs included)
// and options: num_warps equal, num_stages the largest one exported <= `num_stages` (the Python
// launcher lowers the stages until the kernel fits in shared memory; the export holds the cubin that
// ran). A kernel with pipelined loops (k.loop_stages) gets TAD_LOOP_STAGES set to those stages.
// TAD_ERR_INVALID_ARGUMENT "no exported cubin of <kernel> matches this launch: ..." naming the
// first difference from the nearest cubin.
struct Pick {
    const Cubin *cubin = nullptr;
    std::vector<CallArg> args;  // with TAD_LOOP_STAGES, where the kernel takes it
};
Pick pick(const KernelInfo &k, std::vector<CallArg> args, int num_warps, int num_stages);

// The entry's parameter bytes: each non-constexpr argument at its type's width, then the two
// scratch pointers. `patches` receives (offset, pointer) of each workspace or caller pointer, to be
// written when the launch is issued. Each parameter starts at a multiple of 8.
struct Packed {
    std::vector<unsigned char> bytes;
    std::vector<size_t> offsets;  // of each entry parameter
    std::vector<std::pair<size_t, Ptr>> patches;
};
Packed pack(const Cubin &c, const std::vector<CallArg> &args, Ptr global_scratch, Ptr profile_scratch);

}  // namespace tad::aot
