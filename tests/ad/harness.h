// Runs a forward kernel, its tangent kernel (ad::jvp) and its backward (ad::reverse) on the
// interpreter in float64, with every buffer named by the forward pointer parameter it belongs to.
// Shared by the numeric tests of tests/ad.
#pragma once

#include <array>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ad/reverse.h"
#include "ir/ir.h"
#include "rule_cases.h"

namespace tad::testing {

using Buffers = std::map<std::string, std::vector<double>>;  // forward pointer parameter -> contents

struct Problem {
    ir::Function fwd;  // after passes::cse
    ad::GradSpec spec;
    std::array<int64_t, 3> grid{1, 1, 1};
    std::map<std::string, int64_t> ints;  // integer parameters
    Buffers memory;  // every pointer parameter's contents before the launch
};

// The outputs (spec.outputs) after running the forward on `memory`.
Buffers run_forward(const Problem &p, const Buffers &memory);
// J·v: the outputs' tangents from the tangent kernel, given the inputs' (spec.wrt) tangents v.
Buffers run_jvp(const Problem &p, const Buffers &v);
// Jᵀ·u: the inputs' gradients from the backward, given the outputs' cotangents u.
Buffers run_vjp(const Problem &p, const Buffers &u);

// memory ± h·v, per buffer v names: the points of a central difference along v.
std::pair<Buffers, Buffers> perturbed(const Buffers &memory, const Buffers &v, double h);

// Standard-normal contents for `names`, sized like their buffers in p.memory.
Buffers random_like(const Problem &p, const std::vector<std::string> &names, std::mt19937_64 &rng);

// <a, b> over the buffers of `a`, and Σ|aᵢ·bᵢ|: the scale its rounding error is relative to.
struct Dot {
    double value = 0, magnitude = 0;
};
Dot dot(const Buffers &a, const Buffers &b);

// A rule case's kernel with inputs X0, X1, ... drawn from the case's range, differentiated into Y.
Problem rule_problem(const RuleCase &c, std::mt19937_64 &rng);

// Multi-op kernels, several programs each, for the tests across ops:
// - layer_norm: program r normalizes the N live lanes of row r of X (BLOCK_N lanes, rows `stride`
//   apart), scales by W, shifts by B and stores Y, the row's Mean and its Rstd. Differentiated
//   w.r.t. X, W, B into Y and Mean; Rstd is a saved statistic.
// - masked_other: program p loads row p of X where lanes < N are live and A² elsewhere (a masked
//   load whose `other` is a differentiable tile), then stores S[p] = Σ eˣ·A.
Problem layer_norm_problem(std::mt19937_64 &rng);
Problem masked_other_problem(std::mt19937_64 &rng);

}  // namespace tad::testing
