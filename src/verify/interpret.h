// One kernel launch, described as a trace record describes it, run on the interpreter: the
// executor of the launches Python makes when the CPU tier checks a whole stub (tad_interpret in
// include/tad.h, called by src/runtime/python/tad_interpret.py for the stand-in triton).
#pragma once

#include <string>

#include "interp/interp.h"
#include "support/json.h"

namespace tad::verify {

// Runs `launch` of the @triton.jit function launch["kernel"] of the Python file `source` (named
// `path` in diagnostics) on `mem`. `launch` is a launch of a trace record (docs/worker-protocol.md:
// "grid", and "args" with every kernel parameter) whose tensor arguments' "ref" is {"buffer": i}:
// buffer i of `mem`, from element "offset" on. A host-side descriptor argument ("tensor_desc") is
// lowered as the forward file's descriptor parameter.
void interpret(const std::string &path, const std::string &source, JsonRef launch, interp::Memory &mem);

}  // namespace tad::verify
