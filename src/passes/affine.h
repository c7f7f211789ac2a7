// Affine index analysis: a kernel's integer and pointer values as affine forms over its index
// variables (program ids, tile lanes, loop iterations), with coefficients that are polynomials in
// its run-time integer parameters and constexprs. The access analysis (access.h) reads addresses
// and masks through it.
//
// A form is exact where `affine` holds: value = offset + Σ coefficient(v) · v, each variable v
// ranging from 0: a program id along a grid axis, the lane index along one dim of the value's tile,
// the iteration count of a loop (0, 1, ...). A loop's induction variable is lo + step · iteration,
// a loop-carried value that each iteration advances by a loop-invariant amount is
// init + amount · iteration. A pointer's form is its offset from the pointer parameter it is built
// on (passes::pointer_base names that parameter).
// A program id divided by (or taken modulo) a loop-invariant d is split into two index variables,
// quotient and remainder (remainder in [0, d)): pid = quotient · d + remainder, so an address that
// determines both determines the program, and one that ignores a part is shared along it. One
// divisor per grid axis (another divides the program id as a compound index, below). A quotient of two loop-invariant names, `C // G`, is the symbol "C//G".
// Where the analysis is made `dividing` (access.h's proofs read these), a compound index x (an
// affine form over program ids, lanes and iterations, never below 0: no negative coefficient or
// offset) divided by a loop-invariant d is two index variables of one Division: x // d (Divided) and
// x % d (Modulo, in [0, d)); x = (x // d) · d + x % d, so an address that keeps both keeps x. The
// variables inside x no longer appear in the form: what reads a Divided or Modulo term must look
// through division() (a form with only one of the two no longer determines x).
// Anything else (a product of two variables, other divisions and remainders, tl.where, a loaded
// value, a reshape) makes the form non-affine; it still records which grid axes and loops the value
// depends on, the op that broke affinity (`blocker`) and, where a loaded value flows in, the load
// (`data`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

// An integer polynomial over named symbols: Σ coefficient · Π names. Symbols are integer parameters
// and constexprs by name, "num_programs(a)", "num_programs(a)//d" (the grid's size along a
// divided by d, a parameter, constexpr or number, rounded down) and "n//d" (two such names). Printing is deterministic.
class Poly {
public:
    Poly() = default;
    static Poly constant(int64_t c);
    static Poly symbol(const std::string &name);
    // A spelled expression of names and integers with + - * and parentheses ("2 * BLOCK"); nullopt
    // for anything else (a quotient among them: Python floors it, the executors would truncate).
    static std::optional<Poly> parse(const std::string &spelling);

    Poly operator+(const Poly &o) const;
    Poly operator-(const Poly &o) const;
    Poly operator*(const Poly &o) const;
    bool operator==(const Poly &o) const { return terms_ == o.terms_; }
    bool operator!=(const Poly &o) const { return terms_ != o.terms_; }

    bool zero() const { return terms_.empty(); }
    // Whether it is a number, and which.
    bool constant_value(int64_t *value) const;
    // `this / d` when d is one term (c · names) dividing every term exactly; false otherwise.
    bool divide(const Poly &d, Poly *out) const;
    // All coefficients negative: -this reads better and orders the same for injectivity.
    bool negative() const;
    bool mentions(const std::string &name) const;  // whether a term has symbol `name`, or a quotient of it
    std::set<std::string> symbols() const;
    std::string str() const;  // "2*N + stride_x", "0"
    // Printed with each symbol spelled by `name` (a launcher's `a["N"]`).
    std::string str(const std::function<std::string(const std::string &)> &name) const;
    // Its value where `value` knows every symbol; false where it does not know one.
    bool eval(const std::function<bool(const std::string &, int64_t *)> &value, int64_t *out) const;
    // Its terms: sorted symbol names (none: the constant term) -> nonzero coefficient.
    const std::map<std::vector<std::string>, int64_t> &terms() const { return terms_; }

private:
    std::map<std::vector<std::string>, int64_t> terms_;  // sorted names -> nonzero coefficient
};

// A run-time condition `lhs >= rhs` of a proof (the access analysis' disjointness guards).
struct Inequality {
    Poly lhs, rhs;
    bool operator==(const Inequality &o) const { return lhs == o.lhs && rhs == o.rhs; }
    std::string str() const { return lhs.str() + " >= " + rhs.str(); }  // "stride >= 2*N"
};

// An index variable of address arithmetic.
struct IndexVar {
    enum Kind { Program, Lane, Iteration, Quotient, Remainder, Divided, Modulo } kind = Program;
    // Program, Quotient, Remainder: grid axis; Lane: dim of the value's tile; Iteration: index in
    // ir::loops(f); Divided, Modulo: index in Affine::divisions()
    int n = 0;

    bool operator<(const IndexVar &o) const { return kind != o.kind ? kind < o.kind : n < o.n; }
    bool operator==(const IndexVar &o) const { return kind == o.kind && n == o.n; }
    std::string str() const;  // "pid0", "lane1", "iter0", "quot0", "rem0", "div0", "mod0"
    bool divides() const { return kind == Divided || kind == Modulo; }
};

struct Form {
    std::map<IndexVar, Poly> terms;  // nonzero coefficients
    Poly offset;
    bool affine = true;
    std::set<int> axes, loops;  // grid axes and loops (ir::loops index) the value depends on
    int blocker = -1;  // op index: where the form stopped being affine (-1: affine)
    int data = -1;  // op index of a load whose value flows in (-1: none)

    bool invariant() const { return affine && terms.empty(); }  // same for every lane and program
    std::string str() const;  // "N + 1*lane0 + stride*pid0"
};

// `form < bound` for every active lane: a conjunct of a mask.
struct Bound {
    Form form;
    Poly bound;
    // Where the mask bounds its index by a minimum, `a < tl.minimum(b, c)` (a < b and a < c): that
    // minimum (the scalar, where the mask broadcasts one), the same for each of its bounds, and the
    // operand this bound is by (b or c).
    ir::ValueId minimum = ir::kNoValue, operand = ir::kNoValue;
    // A loop's own range (access.cpp trip_bound), `step · k < hi - lo`: a digit of its own, never a
    // part of a wider compound (there it would lose that step · k is a multiple of the step).
    bool range = false;
};

// A compound index divided by a loop-invariant (Affine, `dividing`): `dividend` // `divisor` and
// `dividend` % `divisor`. `dividend` has only Program, Lane and Iteration terms, in the lane
// coordinates of the division's own tile.
struct Division {
    Form dividend;
    Poly divisor;
    int op = -1;  // the first div or mod of it
    // What makes the division as the form says, where symbols have run-time values: each symbol of
    // the dividend at least 0 (so that x >= 0: Triton's // and % truncate toward zero) and a symbolic
    // divisor at least 1. A proof that reads the division takes them as guards.
    std::vector<Inequality> signs;
    // Where the dividend is a loop's iterator (a persistent kernel's `tile` in `tile // tiles_n`), the
    // loop's end when it is the same for every program: the dividend stays below it (the step is
    // positive: a number, a grid size, or a guard in `signs`).
    std::optional<Poly> below;
};

// Whether `name` (a named constant's or a tile dim's spelling) is an expression of constexprs f is
// specialized on ("WIDTH - 1" where f serves WIDTH=4 only): its value holds for every launch f
// serves, and no launch records the expression. A constexpr's own name, a number, or an expression of
// a constexpr f is not specialized on ("BLOCK // 2" where one backward serves every BLOCK) is not.
// The affine forms carry such an expression as its value, everything else named as a symbol.
bool specialized_expression(const ir::Function &f, const std::string &name);

class Affine {
public:
    explicit Affine(const ir::Function &f, bool dividing = false);

    const Form &of(ir::ValueId v);
    // The conjuncts `a < b` of a mask (through &, broadcasts and expand_dims) with affine a and b,
    // as `a - (b's index terms) < b's offset`, in the mask's lane coordinates. kNoValue: none.
    std::vector<Bound> bounds(ir::ValueId mask);
    // Whether every conjunct of a mask is one of those bounds (bounds() drops the others): the mask
    // is exactly their conjunction. True for kNoValue.
    bool only_bounds(ir::ValueId mask);
    const std::vector<ir::Loop> &loops() const { return loops_; }
    // The loops holding op i, innermost last.
    std::vector<int> loops_around(int op) const;
    // The divisor grid axis `axis` is split by (Quotient / Remainder), if any.
    const Poly *divisor(int axis) const;
    // The compound indices divided (Divided / Modulo variables' n).
    const std::vector<Division> &divisions() const { return divisions_; }

private:
    Form compute(ir::ValueId v);
    Form shape_op(const ir::Op &op, const ir::Type &t);
    Form arith(const ir::Op &op, int index);
    Form loop_var(const ir::Op &op, int index);
    Form carried(const ir::Op &op, int index);
    Form opaque(const ir::Op &op, int index);
    Form split(const ir::Op &op, int index);
    Form quotient(const ir::Op &op, int index);
    Form divided(const ir::Op &op, int index);
    int division_of(const Division &d);  // its index in divisions_, added where new
    void iterator_end(ir::ValueId x, Division *div);
    std::vector<Inequality> signs(const Form &dividend, const Poly &divisor) const;
    Form relane(const Form &in, int (*map)(int, int), int arg);
    Form broadcast_lanes(const Form &in, const ir::Type &from, const ir::Type &to);
    Form expand_lanes(const Form &in, int axis);
    int loop_begun_at(int op) const;
    int loop_of_arg(int op, int *slot) const;

    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    std::map<ir::ValueId, Form> memo_;
    std::map<int, Poly> divisors_;  // grid axis -> the divisor of its split
    bool dividing_ = false;
    std::vector<Division> divisions_;
};

}  // namespace tad::passes
