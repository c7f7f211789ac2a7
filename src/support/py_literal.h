// Text as a Python string literal: the one way every string that reaches generated Python (paths,
// names, string constexprs, messages) is written, so that no value can end the literal, the line or
// the comment it sits in.
#pragma once

#include <string>
#include <string_view>

namespace tad {

// Single: quoted as Python's repr() quotes (single quotes, double ones when the text holds a single
// quote and no double one); tad writes values so. Double: the other way round; tad writes names so
// ("x"). Docstring: `"""..."""`, every `"` inside escaped.
enum class PyQuotes { Single, Double, Docstring };

// A literal on one line that Python reads back as `text`: `\`, the quote, \n \r \t and other
// control characters (C0, DEL, C1, U+2028, U+2029) are escaped; other UTF-8 is kept as is; a byte
// that is not part of valid UTF-8 becomes \udcXX, as os.fsdecode reads it (surrogateescape), so a
// path's bytes survive os.fsencode. The spelling is not always repr()'s (repr escapes more).
std::string py_literal(std::string_view text, PyQuotes quotes = PyQuotes::Single);

}  // namespace tad
