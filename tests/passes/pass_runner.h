// Runs the `// RUN:` line of a pass test on its input function and returns what the check lines
// are matched against.
//
//   // RUN: cse | dce                                  transforms, applied in order; the output is the
//                                                      printed result (each result must verify)
//   // RUN: cse | plan-gradient-writes wrt=X,W outputs=Y
//                                                      per wrt parameter, its decision:
//                                                      "X: store mirror=Y guards=a==b" or
//                                                      "X: atomic"
//   // RUN: memory-params                              "loaded: X, W", "stored: ...", "accumulated: ...",
//                                                      "overwritten: ...", then per access
//                                                      "load X ptr=%7 loop=0"
//   // RUN: rewrites                                   per parameter a program may write an element
//                                                      of twice: "Y at op 29: rewritten: <why>" or
//                                                      "Y at op 29: once where stride >= C"; "none"
// Transforms: cse, dce, drop-unused-params. An analysis comes last. A pass that throws gives
// "error: <message>" as the output.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tad::testing {

// The text after "// RUN:" in a test file ("" when there is none).
std::string run_line(const std::string &file_text);

std::string run_passes(const std::string &pipeline, ir::Function f);

}  // namespace tad::testing
