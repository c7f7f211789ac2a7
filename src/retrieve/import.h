// Import of forward/backward pairs written in the sectioned single-file layout of public fwd/bwd
// datasets (docs/retrieval.md, "Importing pairs"): comment banners
//     # ==========================
//     # SHARED HELPERS ...
//     # ==========================
// open sections whose titles name shared helpers, forward kernels (and their launcher), backward
// kernels (and theirs) and the torch.autograd.Function class that ties them together.
//
// A file becomes a dataset entry: a forward file (the file without its backward and autograd.Function
// sections, plus a @tad.autodiff stub made from the Function's forward: `ctx` statements dropped,
// grad_inputs from the positions where its backward returns a gradient), the original file as the
// entry's backward, and a sidecar naming both.
#pragma once

#include <string>
#include <vector>

namespace tad::retrieve {

struct Converted {
    std::string stub;  // the stub's name
    std::vector<std::string> grad_inputs;
    std::vector<std::string> sections;  // the titles found, in order
    std::string forward;  // the forward file's text
    std::vector<std::string> notes;
};

// Converts one file. tad::Error (TAD_ERR_SYNTAX, TAD_ERR_UNSUPPORTED) with "<path>[:line:col]: ..."
// when it is not in the layout or cannot become a stub.
Converted convert_sectioned(const std::string &path, const std::string &text);

// Converts every *.py of `source_dir` (not recursive) into entries of `dataset_dir` ("": the default
// dataset); the JSON report of docs/reports.md, "Import report". An existing entry of the same name
// is left alone and reported.
std::string import_dataset(const std::string &source_dir, const std::string &dataset_dir);

}  // namespace tad::retrieve
