// Retrieval of the dataset entries closest to a forward file, as the JSON report of tad_retrieve
// (docs/reports.md, "Retrieve report"), and the dataset listing of tad_dataset_list.
#pragma once

#include <string>
#include <vector>

#include "frontend/kernel_file.h"

namespace tad::retrieve {

struct Options {
    int topk = 4;
    double min_sim = 0.0;  // results below are left out
    std::vector<std::string> exclude;  // entries whose path contains one of these are left out
    std::string dataset_dir;  // "": default_dataset_dir()
    std::string cache_dir;  // "": default_cache_dir(dataset_dir)
};

std::string retrieve(const frontend::KernelFile &query, const Options &opts);

// Every entry of the dataset with its sidecar, its backward and a summary of its features
// (docs/reports.md, "Dataset listing"). Uses dataset_dir and cache_dir of `opts`; needs no FAISS
// (the features are computed, not read from the index), so it works where the plugin cannot load.
std::string dataset_listing(const Options &opts);

}  // namespace tad::retrieve
