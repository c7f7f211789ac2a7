// The dataset of forward/backward pairs (docs/retrieval.md): a directory whose *.py files are
// forward files in tad's input convention, with a sidecar meta/<name>.json each:
//   {"family": "norm", "description": "...", "provenance": "written here",
//    "backward": "../bench/refs/rmsnorm.py", "backward_kind": "hand-written",
//    "gpu": null, "timings": null}
// Every member may be absent or null ("family" null: not known yet, as imported entries start).
// `backward` (relative to the dataset directory) names a backward written by hand or imported with
// the pair; without one, the entry's backward is the one tad generates and verifies (`tad dataset
// build`), kept in the cache directory. `gpu` and `timings` stay null until measured (`tad dataset
// check --record`).
#pragma once

#include <string>
#include <vector>

#include "support/json.h"

namespace tad::retrieve {

struct Entry {
    std::string name;  // the file's stem
    std::string path;  // absolute path of the forward file
    std::string source;  // its text
    std::string meta_path;  // absolute path of the sidecar ("" when there is none)
    Json meta;  // the sidecar (an empty object when there is none)
    std::string problem;  // why the sidecar could not be read ("" when fine)

    std::string family() const;  // "" when the sidecar names none
};

struct Dataset {
    std::string dir;  // absolute
    std::vector<Entry> entries;  // by name
    std::string hash;  // 16 hex digits over the feature version, every entry's name, text and sidecar
};

// Reads every *.py directly in `dir` and its sidecar. TAD_ERR_IO "<dir>: dataset directory not found"
// when `dir` is not a directory.
Dataset open_dataset(const std::string &dir);

// $TAD_DATASET, else the source tree's dataset/ when it exists, else the installed share/tad/dataset.
std::string default_dataset_dir();

// <dataset>/.cache when it can be written, else $XDG_CACHE_HOME (or ~/.cache) /tad/dataset-<hash of
// the dataset's path>.
std::string default_cache_dir(const std::string &dataset_dir);

// 16 hex digits of FNV-1a 64 of `text`.
std::string hex_hash(const std::string &text);

}  // namespace tad::retrieve
