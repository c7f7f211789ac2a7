// Where the worker's Python files (tad_worker.py, tad_trace.py, standin/) are found.
#pragma once

#include <string>

namespace tad {

// The first of: $TAD_PYTHON_DIR; <dir of the loaded tad library>/python (a build tree, possibly
// carried to another machine); <that dir>/../share/tad/python and ../../share/tad/python (a
// relocated install); the source tree; the configured install directory.
std::string python_dir();

// The file of the shared libtad, for Python to load (the CPU tier's whole-stub check runs kernels
// through its tad_interpret): the library holding this code, else (a test program linking the code
// itself) the build tree's libtad; "" when neither exists.
std::string library_path();

}  // namespace tad
