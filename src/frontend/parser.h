// Python 3.11 parser: source text -> tad::ast (a tree that mirrors CPython's ast.parse output,
// locations included).
#pragma once

#include <string>

#include "frontend/ast.h"

namespace tad::frontend {

// Parses `source`; `path` names the file in diagnostics. Throws tad::Error(TAD_ERR_SYNTAX,
// "<path>:<line>:<col>: syntax error: <what>") with a 1-based column when the text is not valid
// Python. "\r\n" and "\r" line endings and a UTF-8 byte-order mark are accepted; File::source holds
// the text with '\n' line endings and without the mark, which is what locations refer to.
ast::File parse_source(const std::string &path, const std::string &source);

// Reads and parses a file. Throws tad::Error(TAD_ERR_IO, "<path>: cannot read file: <reason>") when
// it cannot be read.
ast::File parse_file(const std::string &path);

}  // namespace tad::frontend
