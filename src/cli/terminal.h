// Text from files, the worker and user code made safe to print on a terminal: control characters
// (escape sequences could move the cursor, retitle the window or hide lines) are spelled out, and
// long text is cut in the middle so that a line stays readable and its end (where an error says
// where it happened) survives.
#pragma once

#include <cstddef>
#include <string>

namespace tad_cli {

enum class Lines { One, Many };

// `text` with C0 controls, DEL, C1 controls and bytes that are not UTF-8 written as \xNN (\n and \t
// kept with Lines::Many), then, when longer than `max_bytes`, its head and tail around
// "...[N bytes cut]...". Valid UTF-8 is never split.
std::string printable(const std::string &text, size_t max_bytes, Lines lines = Lines::One);

}  // namespace tad_cli
