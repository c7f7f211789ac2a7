// Contraction accumulators a forward could save for its backward (docs/saved-residuals.md).
//
// matmul_bias_act computes acc = A·B in a K loop, then stores act(acc + bias). Reverse mode needs
// act'(acc + bias), so the backward runs the whole K loop again for acc: as much work as the
// forward. Had the forward stored acc where it stores its output, the backward would read it back
// (saved_values.h) instead.
//
// A candidate is the result of a top-level loop that holds a tl.dot, carried from zeros (so that it
// is 0 off its output's mask: off_mask.h), a float tile with a source name, whose value some later
// op uses other than linearly (a linear use, as in a plain matmul's store, needs no value in reverse
// mode), and which reaches, through elementwise ops of its shape, a store of the kernel at the top
// level into a pointer parameter. The residual is stored at that store's addresses, under its mask,
// into a float32 buffer laid out like that parameter's tensor.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tad::passes {

struct UnsavedAccumulator {
    int loop = -1;  // its loop's for_begin op
    std::string name;  // the variable holding it after the loop
    int store = -1;  // the store whose addresses and mask it is saved at
    std::string like;  // that store's pointer parameter
};

std::vector<UnsavedAccumulator> unsaved_accumulators(const ir::Function &f);

// Whether reverse mode needs v's value: some op computes from v (through the ops that do so linearly)
// other than linearly, or multiplies or divides it by a value computed from a load (whose gradient
// needs v). Linear: sums, differences, negations, float casts, shape ops, sum reductions, stores,
// products and quotients by a value computed from neither v nor memory, a tl.where choosing by a
// condition not computed from v.
bool value_needed(const ir::Function &f, ir::ValueId v);

}  // namespace tad::passes
