// Atomic adds that no two writes share, as plain stores.
//
// An atomic add into a zeroed buffer whose address, over every lane, every program and every
// iteration of its loop, is a different element adds to each element once: a plain store of the
// value writes the same. adds_to_stores() rewrites the buffers written by one such add and by
// nothing else (no other write, no read), proved by writes_distinct (access.h) over the grid axes
// the kernel reads. What the proof cannot settle statically (`stride_xn >= C//G*G*HW`) are guards:
// the store is right only where one alternative holds, and the caller keeps the adds as the
// fallback. The stored buffer can take the input's dtype (no float32 buffer and cast), and where
// the stores reach every element (write_coverage) it needs no zero fill.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

struct StoredAdd {
    std::string param;
    std::vector<std::vector<Inequality>> alternatives;  // the proof's guards: one alternative suffices
    std::optional<Coverage> cover;  // what the stores reach, when they reach the whole buffer
    std::string uncovered;  // why they may not
};

struct StoredAdds {
    ir::Function fn;
    std::vector<StoredAdd> stored;
    std::string report;  // a line per buffer stored, and when
    std::string kept;  // a line per other candidate the kernel adds to: why not
};

// Rewrites the adds to the pointer parameters in `candidates` that the proof allows.
StoredAdds adds_to_stores(const ir::Function &f, const std::set<std::string> &candidates);

// f with the atomic adds at op indices `adds` turned into plain stores of their values and the ops
// at `dropped` left out; a barrier right after a barrier kept is left out too.
ir::Function adds_as_stores(const ir::Function &f, const std::set<int> &adds, const std::set<int> &dropped = {});

}  // namespace tad::passes
