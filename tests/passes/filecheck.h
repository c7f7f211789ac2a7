// A small FileCheck (after LLVM's) for the pass tests: check lines in a test file are matched, in
// order, against the lines of a pass's output.
//
//   // CHECK: text        the next output line, at or after the current one, that contains `text`
//   // CHECK-NEXT: text   the output line right after the previous match contains `text`
//   // CHECK-NOT: text    no output line between the previous match and the next one (or the end)
//                        contains `text`
// `text` is literal except for {{regex}} (ECMAScript), [[NAME:regex]] which matches regex and binds
// NAME to what it matched, and [[NAME]], which matches what NAME was bound to (earlier in the same
// pattern too). Regexes must not use
// capturing groups (write (?:...)). Runs of spaces and tabs count as one space on both sides.
#pragma once

#include <string>
#include <vector>

namespace tad::testing {

struct Check {
    enum Kind { Match, Next, Not } kind = Match;
    std::string pattern;
    int line = 0;  // in the test file, for messages
};

// The CHECK lines of a test file (its `// CHECK...:` comment lines), in order.
std::vector<Check> parse_checks(const std::string &file_text);

// "" when `output` satisfies every check, else why not ("line 12: CHECK-NEXT: ... ").
std::string run_checks(const std::vector<Check> &checks, const std::string &output);

}  // namespace tad::testing
