// Closed-form differentiation of the online softmax (the loop of FlashAttention's forward).
//
// A loop that carries a running maximum m and values c rescaled each iteration,
//     m' = (anything),  alpha = b^(m - m'),  p = b^(s - m'),  c' = c·alpha + T(p),
// with b = e or 2 (exp or exp2 in both places), every c starting at zero (or at a finite literal
// while m starts at -inf: the first alpha zeroes it), s independent of the
// carried state and T linear in p row by row (a row sum, a dot with p on the left, a cast, a
// broadcast or expand_dims, a product with or a select against values independent of the state,
// sums of those; with a scalar m every element is one row and any sum will do), ends with
//     c_T = Σ_j T_j(b^(s_j - M)),  M = m_T,
// whatever sequence of maxima it ran through. The loop may also carry plain sums c' = c + U with U
// independent of the state (label smoothing's sum of logits next to its logsumexp): they are the
// same whatever the maxima. If the code after the loop reads m_T and the c_T only
// through expressions that stay the same when M is replaced by any other row vector (ratios of two
// rescaled values, acc / l; m_T + log_b(l), the logsumexp), then its gradient is the closed form's
// with M held constant: the iterations no longer depend on each other, and reverse mode can reverse
// the loop as an accumulator loop, in one forward-order pass, where it would otherwise recover the
// running state before each iteration (O(T²) body evaluations, or a tape).
//
// A chain of such loops, each starting where the one before ends (m from m, c from c; the Triton
// tutorial's causal attention runs its key loop below the diagonal, then on it), is one online
// softmax: each loop multiplies what it starts from by b^(m_start - m_end), and these telescope, so
// the last one ends with the sum over every loop's iterations of T_j(b^(s_j - M)). The closed form's
// copies of the chain's loops carry c from one to the next; only the last one's results are read.
//
// closed_form_online_softmax() rewrites a forward for reverse mode only. It keeps each such loop
// (its results are the values the code after it reads) and adds after it M = stop_gradient(m_T) and
// a copy of the loop that computes p = b^(s - M) and c' = c + T(p); the code after the loop reads
// grad_via(c_T, copy's c_T), so gradients reach the copy and no longer the loop. The backward's
// replay of the copy is dead code. Stores to buffers other than `outputs` (the differentiated ones:
// saved statistics) pass no gradient back, so what they store may depend on M. `report` gets one
// line per loop that carries a value rescaled by some b^(m - m'): rewritten, or why not.
//
// Reusing what the forward saved. When the forward stores the logsumexp L = m_T + log_b(c_l) over
// one carried sum c_l, and each other carried value's ratio c_k / c_l (FlashAttention's L and O),
// into buffers of `kept` (their contents reach the backward as the launch left them), M is chosen
// as L: every carried value becomes c_k · b^(m_T - L) = c_k / c_l, which is 1 for c_l and the saved
// ratio for the others. The rewrite then loads those (through a parameter with ir::Param::final_of)
// instead of reading the loop's results, and the backward no longer runs the loop: per row it is
// FlashAttention-2's p = b^(s - L) with Delta = rowsum(dO·O) computed first. Loading is right where
// each stored element comes from one program (the access analysis's disjointness proof, with run-time
// guards where it needs them) and where a store's mask leaves out whole rows whose values reach no
// differentiated output in a way that matters (the loads give M = +inf and ratios 0 there, so p = 0).
// A saved value that was rounded (O in float16) is read rounded, as hand-written backwards do.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes {

struct ClosedForm {
    ir::Function fn;
    // Per saved value it loads, alternatives of run-time conditions (each a conjunction) under which
    // its store writes each element from one program; empty where that is proved statically.
    std::vector<std::vector<std::vector<Inequality>>> guards;
};

ClosedForm closed_form_online_softmax(const ir::Function &f, const std::vector<std::string> &outputs,
                                      const std::vector<std::string> &kept, std::string *report);

// A top-level loop the closed form differentiates whose logsumexp the forward does not save where
// the backward can read it back, and which could save it as one tile per program: its running
// maximum m is a scalar or a row vector whose dims are spelled by constexprs of the kernel, one of
// its rescaled values, l, has m's shape and is the sum of the p = b^(s - m') it adds (positive, so
// log_b(l) is defined wherever the forward's is), and both are named. Saving m_T + log_b(l_T) lets
// the backward skip the loop where every other rescaled value's ratio to l is saved too (the
// output O = acc / l of attention) (docs/saved-residuals.md).
struct UnsavedLogsumexp {
    int loop = -1;  // the for_begin op
    std::string m, l;  // the carried variables' names
    ir::OpKind exp = ir::OpKind::Exp;
    std::vector<std::string> dims;  // m's shape, by the constexprs spelling it (none: a scalar)
};
std::vector<UnsavedLogsumexp> unsaved_logsumexps(const ir::Function &f, const std::vector<std::string> &outputs,
                                                 const std::vector<std::string> &kept);

}  // namespace tad::passes
