// Local, deterministic features of a forward file for retrieval (docs/retrieval.md): no network, no
// model weights, the same text always gives the same features.
//
// Four groups, each a map from a readable feature name to a raw weight:
//   ir     n-grams of tile-IR ops along the dataflow ("ir:exp", "ir:exp>reduce_sum",
//          "ir:mul>reduce_sum>rsqrt", "ir:loop/dot"), from the kernels the stub launches, lowered
//          with bindings guessed from the file alone (guess.h): no trace, no Python
//   ast    n-grams of AST node kinds along parent -> child paths in the @triton.jit functions,
//          calls labelled by their triton.language name ("ast:Call:sum", "ast:BinOp:Mult>Call:exp")
//   ident  sub-tokens of the identifiers of the whole file ("rstd", "layer", "norm"), term counts
//          (TF-IDF weighting happens in embed(), which knows the dataset)
//   count  structural counts (kCountNames): loops, nesting depth, reductions, dots, atomics, ...
// A kernel that cannot be lowered with guessed bindings contributes no ir features; `notes` says
// which and why, and the other groups still describe it.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "frontend/kernel_file.h"

namespace tad::retrieve {

enum class Group { Ir = 0, Ast = 1, Ident = 2, Count = 3 };
constexpr int kGroups = 4;
const char *group_name(Group g);  // "ir", "ast", "ident", "count"

// The structural counts, in the order of their slots in the count group.
const std::vector<std::string> &count_names();

struct Features {
    std::array<std::map<std::string, double>, kGroups> groups;
    std::vector<std::string> lowered;  // kernels lowered to tile IR
    std::vector<std::string> notes;  // "<kernel>: not lowered: <reason>"

    std::map<std::string, double> &group(Group g) { return groups[static_cast<int>(g)]; }
    const std::map<std::string, double> &group(Group g) const { return groups[static_cast<int>(g)]; }
    double count(const std::string &name) const;  // 0 when absent
};

// The features of an analysed forward file.
Features extract(const frontend::KernelFile &kf);

// Parts, for tests: each adds to `out`.
void add_ast_features(const frontend::KernelFile &kf, Features &out);
void add_ident_features(const ast::File &file, Features &out);
void add_ir_features(const frontend::KernelFile &kf, Features &out);

// Identifier sub-tokens: split at '_', at lower -> upper case changes and around digits, lower-cased;
// tokens of one character and digit runs are dropped. "_layernorm_fwd" -> {"layernorm", "fwd"},
// "BLOCK_SIZE_M" -> {"block", "size"}, "dxHat2" -> {"dx", "hat"}.
std::vector<std::string> subtokens(const std::string &identifier);

}  // namespace tad::retrieve
