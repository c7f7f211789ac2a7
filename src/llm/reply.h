// What a model's reply proposes: a whole backward module or a unified diff against the current one,
// taken from the reply's fenced code blocks (docs/llm.md, "What the model must answer").
#pragma once

#include <string>

namespace tad::llm {

struct Proposal {
    enum class Form { Module, Patch };
    Form form = Form::Module;
    std::string code;
};

const char *form_name(Proposal::Form f);  // "module", "patch"

// The proposal in `reply`: the last ```diff (or ```patch) block when there is one, else the longest
// ```python (or ```py) block; a block without a language is a patch when it starts like one ("--- ",
// "@@ "), else a module. A reply with no block that starts like a diff is a patch. Throws
// tad::Error(TAD_ERR_SYNTAX) with the reason otherwise: "the reply holds no code block (expected a
// ```python module or a ```diff patch)", "the reply's code block opened at line <n> is not closed"
// (with ", the reply was cut at its token limit" when `finish` says so: "length", "max_tokens").
Proposal proposal_of(const std::string &reply, const std::string &finish);

// `text` with the unified diff `diff` applied. The diff's file headers (---, +++, diff, index) are
// skipped; each hunk's removed and context lines must appear in `text` in order, after the
// previous hunk's, exactly or up to trailing white space; the hunk header's line number only says
// where to look first (models miscount). A blank line inside a hunk is a blank context line.
// Throws tad::Error(TAD_ERR_SYNTAX): "the patch has no hunk", "hunk <k> (line <n> of the patch) does
// not apply: '<its first line the module lacks>' is not in the module" (or "its lines are not in
// the module in this order").
std::string apply_patch(const std::string &text, const std::string &diff);

}  // namespace tad::llm
