// Python 3.11 parser: source text -> tad::ast (a tree that mirrors CPython's ast.parse output,
// locations included).
#pragma once

#include <string>

#include "frontend/ast.h"

namespace tad::frontend {

// Parses `source`; `path` names the file in diagnostics. Throws tad::Error(TAD_ERR_SYNTAX,
// "<path>:<line>:<col>: syntax error: <what>") with a 1-based column when the text is not valid
// Python. The text is UTF-8, or Latin-1 when a PEP 263 comment says so; "\r\n" and "\r" line
// endings and a byte-order mark are accepted. File::source holds the text as UTF-8 with '\n' line
// endings and without the mark: what node locations refer to.
//
// Not supported: \N{name} escapes (tad carries no Unicode name table), NFKC normalization of
// non-ASCII identifiers, source encodings other than UTF-8 and Latin-1.
ast::File parse_source(const std::string &path, const std::string &source);

// Reads and parses a file. Throws tad::Error(TAD_ERR_IO, "<path>: cannot read file: <reason>") when
// it cannot be read.
ast::File parse_file(const std::string &path);

}  // namespace tad::frontend
