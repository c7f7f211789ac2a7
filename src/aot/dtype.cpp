#include "aot/dtype.h"

#include <iterator>

#include "support/error.h"

namespace tad::aot {

namespace {

// torch's dtype names and Triton's type_canonicalisation_dict spellings of them.
const DType kTypes[] = {
    {"float32", "fp32", 4, true}, {"float16", "fp16", 2, true}, {"bfloat16", "bf16", 2, true},
    {"float64", "fp64", 8, true}, {"int8", "i8", 1, false},     {"int16", "i16", 2, false},
    {"int32", "i32", 4, false},   {"int64", "i64", 8, false},   {"uint8", "u8", 1, false},
    {"bool", "i1", 1, false},
};

}  // namespace

const DType *find_dtype(const std::string &torch_name) {
    for (const DType &d : kTypes)
        if (torch_name == d.torch) return &d;
    return nullptr;
}

const DType &dtype(const std::string &torch_name, const std::string &what) {
    if (const DType *d = find_dtype(torch_name)) return *d;
    std::string known;
    for (const DType &d : kTypes) known += (known.empty() ? "" : ", ") + std::string(d.torch);
    fail(TAD_ERR_INVALID_ARGUMENT, what + ": unknown dtype '" + torch_name + "' (known: " + known + ")");
}

const DType &wide(const DType &d) { return std::string(d.torch) == "float64" ? d : kTypes[0]; }

}  // namespace tad::aot
