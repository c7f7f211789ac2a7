// Element types as the three sides spell them: torch ("float16"), Triton's signature ("fp16") and
// their size. The AOT executor types every pointer it passes the way Triton's specialization does.
#pragma once

#include <string>

namespace tad::aot {

struct DType {
    const char *torch;  // "float32"
    const char *triton;  // "fp32": a pointer to it is "*fp32" in a Triton signature
    int bytes;
    bool floating;
};

// The dtype of a torch name; nullptr for a name tad does not know.
const DType *find_dtype(const std::string &torch_name);
// As find_dtype; TAD_ERR_INVALID_ARGUMENT "<what>: unknown dtype '<name>' (known: ...)" otherwise.
const DType &dtype(const std::string &torch_name, const std::string &what);

// Where the launcher keeps sums unrounded: float32, or float64 for float64 (module_runtime.py's
// _wide_dtype).
const DType &wide(const DType &d);

}  // namespace tad::aot
