// Integer expressions a launcher evaluates on the host from a launch's recorded arguments: a loop's
// bounds in a kernel, built from its integer parameters, constexprs and constants by integer
// arithmetic. The loop transposition (transpose.h) sizes a grid axis by such a loop's trip count.
//
// Semantics are the kernel's: Div and Mod truncate toward zero (C, as ir.h), `len(range(lo, hi,
// step))` is a loop's trip count. The kernel computes in 32 or 64 bits; the host in unbounded
// integers: they agree wherever the kernel's arithmetic does not overflow.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct HostExpr {
    // Div, Mod truncate (the kernel's integer ops); FloorDiv, FloorMod floor (Python's // and %,
    // in a constexpr's spelling).
    enum Op { Const, Name, Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max } op = Const;
    int64_t value = 0;  // Const
    std::string name;  // Name: an integer parameter or a constexpr
    std::vector<HostExpr> args;  // the operands of the others

    // Its value where `value` knows every name; false where it does not know one, or on a division
    // by zero.
    bool eval(const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out) const;
    // Python, each name spelled by `spell` (a launcher's `a["K"]`); Div and Mod as `_tdiv` / `_tmod`.
    std::string str(const std::function<std::string(const std::string &)> &spell) const;
    std::string str() const;  // names as they are
};

// The expression computing scalar `v` of `f`, or nullopt (`why` says which op) where it reads
// memory, a float, a loop value or (unless `program_ids`) a program id. A constant spelled from
// constexprs ("BLOCK_K - 1") is read from its spelling, so the expression holds for other values of
// them. Program ids are Names "program_id(0)", ... (remap_programs.h).
std::optional<HostExpr> host_expr(const ir::Function &f, ir::ValueId v, std::string *why, bool program_ids = false);

// A loop's trip count, len(range(lo, hi, step)), in programs of `per` iterations each (rounded up).
struct TripCount {
    HostExpr lo, hi, step;
    int per = 1;
    bool eval(const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out) const;
    std::string str(const std::function<std::string(const std::string &)> &spell) const;
    std::string str() const;
};

}  // namespace tad::passes
