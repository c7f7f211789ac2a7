#include "driver/prompt.h"

#include <cstdio>

namespace tad::driver {

namespace {

const char kSystem[] =
    "You are an expert in Triton GPU kernels and automatic differentiation. You write backward passes "
    "(gradients) for Triton forward kernels. Every module you write is checked before it is used: its "
    "gradients are compared with finite differences of the forward and with its forward mode (a dot-product "
    "test), on a GPU across several problem sizes and dtypes, and only then timed. A module that is not "
    "exactly right is discarded, so never trade correctness for speed.";

std::string fenced(const std::string &lang, const std::string &code) {
    std::string c = code;
    if (!c.empty() && c.back() != '\n') c += '\n';
    return "```" + lang + "\n" + c + "```\n";
}

std::string pairs_section(const std::vector<RetrievedPair> &pairs) {
    if (pairs.empty()) return "";
    std::string out = "## Known forward/backward pairs, most similar first\n\n";
    for (const RetrievedPair &p : pairs) {
        char sim[32];
        std::snprintf(sim, sizeof sim, "%.3f", p.similarity);
        out += "### " + p.path + " (similarity " + sim + ")\n\nForward:\n" + fenced("python", p.forward_source) +
               "\nBackward:\n" + fenced("python", p.backward_source) + "\n";
    }
    return out;
}

std::string task_section(const PromptInput &in) {
    if (in.best_source.empty())
        return "## Task\n\nWrite the backward module for the stub `" + in.stub + "` of the forward file below. " +
               in.best_note +
               "\n\nThe module must define `forward(*args, **kwargs)`, which takes the stub's arguments, runs "
               "the forward kernels and returns the stub's outputs as tensors that autograd differentiates "
               "through your backward kernels (a `torch.autograd.Function`), and `GRAD_INPUTS`, the tuple of "
               "the stub's parameter names that get gradients. It may define `jvp(*args, tangents)` for "
               "forward mode. It must not call the forward file's module: copy what it needs.\n\n";
    if (!in.best_verified)
        return "## Task\n\nThe backward module of the stub `" + in.stub + "` below is wrong: " + in.best_note +
               ". Fix it, and make it fast.\n\n";
    return "## Task\n\nMake the backward of the stub `" + in.stub +
           "` faster. The current best backward module is below (" + in.best_note +
           "). Change its schedule: the grid, what each program computes, block sizes, warps and stages, "
           "the order of loops, what is recomputed or loaded, how partial results are reduced. Keep its "
           "results exactly what they are now, up to rounding.\n\n";
}

std::string answer_section(const PromptInput &in) {
    std::string out =
        "## Answer\n\nReply with one fenced code block: either the complete new module in a ```python "
        "block, or a unified diff against the current module in a ```diff block (with @@ hunk headers and "
        "a few lines of context). Nothing else is read from your reply.\n";
    if (!in.interface.empty()) {
        out += "\nThe module must keep these top-level names, with the same parameters:\n\n";
        for (const std::string &l : in.interface) out += "- `" + l + "`\n";
    }
    return out;
}

}  // namespace

llm::Prompt build_prompt(const PromptInput &in) {
    llm::Prompt p;
    p.system = kSystem;
    std::string u = task_section(in);
    u += "## Forward file (" + in.forward_path + ")\n\n" + fenced("python", in.forward_source) + "\n";
    if (!in.best_source.empty()) {
        u += "## Current best backward module (snapshot " + in.best_id + ")\n\n" + fenced("python", in.best_source) +
             "\n";
        u += in.measurements.empty() ? "It has not been timed (no GPU).\n\n"
                                     : "## Its measurements (milliseconds)\n\n" + in.measurements + "\n";
    }
    u += pairs_section(in.pairs);
    if (!in.rejections.empty()) {
        u += "## Candidates rejected so far in this run\n\n";
        for (const std::string &r : in.rejections) u += "- " + r + "\n";
        u += "\n";
    }
    u += answer_section(in);
    p.user = u;
    return p;
}

}  // namespace tad::driver
