// Internal to the online softmax pass (online_softmax.h): what recognition finds, for the rewrite.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"

namespace tad::passes::detail {

struct OnlineSoftmax {
    ir::Loop loop;
    size_t m = 0;  // carried index of the running maximum
    ir::OpKind exp = ir::OpKind::Exp;  // b = e (Exp) or 2 (Exp2)
    struct Rescaled {
        size_t k = 0;  // carried index of c
        ir::ValueId product = ir::kNoValue;  // c·alpha in the body
        int axis = 0;  // the dim of c that alpha's rows scale (-1: a scalar alpha scales all)
    };
    std::vector<Rescaled> rescaled;
    // Carried indices of plain running sums c' = c + U, U independent of the state (label
    // smoothing's sum of logits): the same in the closed form's copy of the loop, read from there.
    std::vector<size_t> sums;
    // Body ops the closed form has no use for: m' and what only it reads, alpha, its broadcasts and
    // the products c·alpha.
    std::set<int> dropped;
    // The earlier top-level online softmaxes whose results this loop continues from, first first
    // (match_start): the closed form is the whole chain's.
    std::vector<OnlineSoftmax> before;
    // Carried indices of rescaled values that start at a finite literal while m starts at -inf: the
    // first alpha, b^(-inf - m'), zeroes them, so the closed form's copy starts them at zero.
    std::set<size_t> killed;
};

// The value of a literal scalar (not a constexpr: the backward is not specialized on those), of a
// broadcast of one, or of sums, differences, products and negations of those (the Triton
// tutorial's `tl.zeros([BM], tl.float32) - float("inf")`); nullopt for anything else.
std::optional<double> literal_value(const ir::Function &f, ir::ValueId v);

// How a value changes when a maximum M becomes M + d, row by row: it is multiplied by e^(-w·d) and
// shifted by shift·d. `axis`: the dim its rows are in (-1: every element).
struct Shift {
    double w = 0, shift = 0;
    int axis = -1;
    bool tracked() const { return w != 0 || shift != 0; }
};

// The one dim of a tile along which it varies (size above 1): -1 for none (a scalar), -2 for several.
int varying_axis(const ir::Type &t);

// The shift of op's result from its operands' in `t` (`why` set when the op may not see a tracked
// value).
Shift propagate(const ir::Function &f, const ir::Op &op, const std::map<ir::ValueId, Shift> &t, std::string *why);

// Where row axis `axis` of a broadcast's or expand_dims' operand is in its result (-1 stays -1: a
// scalar's factor applies to every element).
int row_axis_after(const ir::Function &f, const ir::Op &op, int axis);

// Whether loop l carries some c rescaled by b^(m - m') (the loops the report mentions); `why` is ""
// and `out` filled when l is an online softmax (online_softmax.h), else why it is not.
bool match_online_softmax(const ir::Function &f, const ir::Loop &l, OnlineSoftmax *out, std::string *why);

// "" when every carried value of s starts where the closed form can start it, else why not:
//  - a rescaled c at zero, or at a finite literal while m starts at -inf (s.killed);
//  - or every carried float at zero or at the result of an earlier top-level loop that is an online
//    softmax with the same base, m from its m, each rescaled c from a rescaled one and each plain
//    sum from a plain sum, where nothing else reads that loop's floats (the Triton tutorial's
//    causal attention runs its key loop in two stages). With M the last loop's final maximum, the
//    chain ends with c_T = Σ over all its loops' iterations of T_j(b^(s_j - M)): each loop
//    multiplies what it starts from by b^(m_start - m_end), and these telescope. s.before gets the
//    earlier loops (each checked the same way), first first.
std::string match_start(const ir::Function &f, OnlineSoftmax *s);

// "" when the ops after the loop read m_T and the c_T only through expressions that do not change
// when M is replaced by another row vector, or store them to buffers other than `outputs`; else the
// first read that may change.
std::string shift_invariant_uses(const ir::Function &f, const OnlineSoftmax &s,
                                 const std::vector<std::string> &outputs);

// A value the forward stores once, outside loops, into a kept buffer: the backward loads it back.
struct SavedValue {
    int store = -1;
    double scale = 1;  // the store writes scale · (the value), possibly cast
    bool masked = false;  // the store has a mask: its lanes outside it load a neutral value
};

// What the forward saved of an online softmax. With M = L = m_T + log_b(c_l) (the logsumexp over the
// carried sum c_l) every carried value becomes c_k · b^(m_T - M) = c_k / c_l: 1 for c_l, the saved
// ratio for the others. Then the backward needs nothing of the loop.
struct Saved {
    size_t l = 0;  // carried index of c_l
    SavedValue lse;
    std::map<size_t, SavedValue> ratios;  // carried index k != l -> c_k / c_l
    // Per saved value, alternatives of run-time conditions under which its store writes each
    // element from one program (empty when that holds statically).
    std::vector<std::vector<std::vector<Inequality>>> guards;
};

// "" and `out` filled when the forward stores the logsumexp of loop `s` and every other carried
// value's ratio to its sum into buffers of `kept` (ad::GradSpec), where each program's backward can
// load back what it stored, and the lanes a store's mask leaves out cannot reach a differentiated
// output (`outputs`) with a value that would matter; else why not.
std::string find_saved(const ir::Function &f, const OnlineSoftmax &s, const std::vector<std::string> &outputs,
                       const std::vector<std::string> &kept, Saved *out);

}  // namespace tad::passes::detail
