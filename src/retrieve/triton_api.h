// How retrieval reads triton.language in a file's text: callee names and their categories.
#pragma once

#include <string>

#include "frontend/ast.h"

namespace tad::retrieve {

// The triton.language (or libdevice) function a dotted callee names, without its module:
// "tl.sum", "triton.language.sum", "tl.math.exp", "libdevice.tanh" -> "sum", "exp", "tanh"; "" for
// anything else.
std::string triton_function(const std::string &callee);

// The structural count a call adds to (count_names()), by triton_function() name, or by ".name"
// for a method call ("x.sum()" -> ".sum"); "" for none.
std::string call_category(const std::string &fn);

// A parameter annotated tl.constexpr (or "tl.constexpr" as a string).
bool is_constexpr_param(const ast::Node &arg);

}  // namespace tad::retrieve
