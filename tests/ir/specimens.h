// Small kernels that use every op of the table, for the tests that check each consumer handles each
// op (ops_table_test) and that print / parse round trip (parse_test).
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::testing {

struct Specimen {
    std::string name;
    ir::Function f;
};

// An elementwise op of the table (Unary, Binary, Compare, Logical) on operands of type `elem`:
// loads X0 (and X1), applies the op, stores the result to Y.
ir::Function elementwise_specimen(ir::OpKind k, ir::DType elem);

// Hand-built kernels for the ops with attributes or structure: leaves, shapes, reductions, dot,
// where / rand / casts, memory, loops.
const std::vector<Specimen> &structural_specimens();

// Every specimen: the structural ones, then elementwise ones for each lane the table defines.
std::vector<Specimen> all_specimens();

// Runs `f` on one program with every pointer parameter bound to a 64-element buffer of its element
// type (values in (0, 1) for floats, 1..4 for integers) and scalars bound to 2 / 0.5; throws what
// the interpreter throws.
void run_specimen(const ir::Function &f);

}  // namespace tad::testing
