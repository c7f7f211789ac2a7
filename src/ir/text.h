// Internal to the IR's text form: the spellings print() writes and parse() reads back.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tad::ir::text {

std::string number(double v);  // %.17g: reads back to the same double
// A bare word: [A-Za-z_][A-Za-z0-9_.]* ("BLOCK", "tl.range", "relaxed").
bool is_word(const std::string &s);
std::string quoted(const std::string &s);  // "..." with \" \\ \n escapes
std::string word_or_quoted(const std::string &s);
// A dim: its value when the spelling is that number, else `spelling=value` (the spelling quoted
// unless it is an identifier).
std::string dim(const Dim &d);
// "f32", "ptr<f16>", "i1[BLOCK_M=64,BLOCK_N=32]".
std::string type(const Type &t);
// The kind a parameter of type t has unless printed otherwise.
ParamKind default_kind(const Type &t);
const char *kind_name(ParamKind k);  // "pointer", "int", "float"
// Whether the parameters' ops are the first ops, in order, defining values %0, %1, ... named after
// them: then the header alone stands for them.
bool leading_params(const Function &f);

}  // namespace tad::ir::text
