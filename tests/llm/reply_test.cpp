// What a model's reply proposes, and unified diffs applied to a module (llm/reply.h).
#include <gtest/gtest.h>

#include "llm/reply.h"
#include "support/error.h"

using namespace tad;
using namespace tad::llm;

namespace {

std::string refusal(const std::string &reply, const std::string &finish = "stop") {
    try {
        proposal_of(reply, finish);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_SYNTAX);
        return e.what();
    }
    return "";
}

std::string patch_error(const std::string &text, const std::string &diff) {
    try {
        apply_patch(text, diff);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_SYNTAX);
        return e.what();
    }
    return "";
}

TEST(Reply, APythonBlockIsAModule) {
    Proposal p = proposal_of("Here it is:\n\n```python\nimport torch\nx = 1\n```\nDone.", "stop");
    EXPECT_EQ(p.form, Proposal::Form::Module);
    EXPECT_EQ(p.code, "import torch\nx = 1\n");
    EXPECT_STREQ(form_name(p.form), "module");
}

TEST(Reply, TheLongestPythonBlockWinsOverSnippets) {
    Proposal p = proposal_of("Use `a`:\n```py\na = 1\n```\nThe module:\n```python\nimport torch\n\nb = 2\n```\n", "");
    EXPECT_EQ(p.code, "import torch\n\nb = 2\n");
}

TEST(Reply, ADiffBlockIsAPatchEvenBesideAModule) {
    Proposal p = proposal_of("```python\nx = 1\n```\n```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```\n", "");
    EXPECT_EQ(p.form, Proposal::Form::Patch);
    EXPECT_EQ(p.code, "--- a\n+++ b\n@@ -1 +1 @@\n-x = 1\n+x = 2\n");
    // A block without a language that starts like a diff, and a bare diff, are patches too.
    EXPECT_EQ(proposal_of("```\n@@ -1 +1 @@\n-a\n+b\n```", "").form, Proposal::Form::Patch);
    EXPECT_EQ(proposal_of("--- backward.py\n+++ backward.py\n@@ -1 +1 @@\n-a\n+b\n", "").form, Proposal::Form::Patch);
    EXPECT_EQ(proposal_of("```\nimport torch\n```", "").form, Proposal::Form::Module);
}

TEST(Reply, RepliesWithoutCodeAreRefusedWithTheReason) {
    EXPECT_EQ(refusal("I cannot make it faster."),
              "the reply holds no code block (expected a ```python module or a ```diff patch)");
    EXPECT_EQ(refusal("Sure.\n```python\nimport torch\n"), "the reply's code block opened at line 2 is not closed");
    EXPECT_EQ(refusal("```python\nimport torch\n", "length"),
              "the reply's code block opened at line 1 is not closed, the reply was cut at its token limit");
    EXPECT_EQ(refusal("```python\nimport torch\n", "max_tokens"),
              "the reply's code block opened at line 1 is not closed, the reply was cut at its token limit");
}

const char kModule[] = "import torch\n\n\ndef f(x):\n    y = x * 2\n    return y\n\n\ndef g(x):\n    return x\n";

TEST(Patch, AHunkReplacesItsLines) {
    EXPECT_EQ(apply_patch(kModule,
                          "--- a/m.py\n+++ b/m.py\n@@ -4,3 +4,3 @@\n def f(x):\n-    y = x * 2\n+    y = x + x\n"
                          "     return y\n"),
              "import torch\n\n\ndef f(x):\n    y = x + x\n    return y\n\n\ndef g(x):\n    return x\n");
}

TEST(Patch, MiscountedHeadersBlankContextAndTrailingSpaceStillApply) {
    // The header says line 40 and the counts are wrong; the blank context line lost its space; the
    // model's context line has a trailing space the module lacks.
    EXPECT_EQ(
        apply_patch(kModule, "@@ -40,9 +40,9 @@\n     return y \n\n\n def g(x):\n-    return x\n+    return -x\n"),
        "import torch\n\n\ndef f(x):\n    y = x * 2\n    return y\n\n\ndef g(x):\n    return -x\n");
}

TEST(Patch, SeveralHunksApplyInOrderAndInsertionsWork) {
    EXPECT_EQ(
        apply_patch(kModule,
                    "@@ -1,1 +1,2 @@\n import torch\n+import math\n@@ -10 +11 @@\n-    return x\n+    return x * 1\n"),
        "import torch\nimport math\n\n\ndef f(x):\n    y = x * 2\n    return y\n\n\ndef g(x):\n    return x * 1\n");
    EXPECT_EQ(apply_patch("a\nb\n", "@@ -1,0 +2,1 @@\n+between\n"), "a\nbetween\nb\n");
}

TEST(Patch, WhatDoesNotApplyIsRefusedByHunk) {
    EXPECT_EQ(patch_error(kModule, "@@ -5 +5 @@\n-    y = x * 3\n+    y = x * 4\n"),
              "hunk 1 (line 1 of the patch) does not apply: '    y = x * 3' is not in the module");
    EXPECT_EQ(
        patch_error(kModule, "--- a\n+++ b\n@@ -1 +1 @@\n import torch\n@@ -5 +5 @@\n     return y\n-    y = x * 2\n"),
        "hunk 2 (line 5 of the patch) does not apply: its lines are not in the module in this order");
    EXPECT_EQ(patch_error(kModule, "just words\n"), "the patch has no hunk");
}

}  // namespace
