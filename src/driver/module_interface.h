// What a backward module offers its callers, so that a module a model rewrote can be held to the
// interface of the one it replaces (optimize.h).
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.h"

namespace tad::driver {

// The module's public top-level names, one line each in the order of the text: a function as
// "def name(a, b=..., *args, c, **kwargs)" (parameter names and kinds; defaults shown as "=..."),
// a class as "class Name", a name assigned at top level as "NAME =". Names starting with "_" are
// the module's own and left out.
std::vector<std::string> module_interface(const ast::File &module);

// Why `candidate` does not keep `baseline`: "it no longer defines 'def jvp(*args, **kwargs)'", or
// "it changes 'def forward(*args, **kwargs)' to 'def forward(x)'"; "" when every line of
// `baseline` is in `candidate` (which may add names).
std::string interface_change(const std::vector<std::string> &baseline, const std::vector<std::string> &candidate);

}  // namespace tad::driver
