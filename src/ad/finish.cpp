#include "ad/finish.h"

#include "passes/passes.h"
#include "support/error.h"

namespace tad::ad {

Finished finish_derived(const ir::Function &raw, const std::map<std::string, ParamOrigin> &derived_params,
                        const std::string &what, const Cleanup &cleanup) {
    Finished out;
    // Checked before the cleanup too: its passes assume valid IR (an operand defined before its use).
    std::string problem = ir::verify(raw);
    if (!problem.empty()) fail(TAD_ERR_INTERNAL, what + " is invalid IR before its cleanup: " + problem);
    out.fn = cleanup(raw);
    for (const ir::Param &p : out.fn.params) {
        auto it = derived_params.find(p.name);
        if (it != derived_params.end())
            out.origins.push_back(it->second);
        else if (!p.final_of.empty())
            out.origins.push_back({ParamOrigin::Final, p.final_of});
        else
            out.origins.push_back({ParamOrigin::Primal, p.name});
    }
    problem = ir::verify(out.fn);
    if (!problem.empty()) fail(TAD_ERR_INTERNAL, what + " is invalid IR: " + problem);
    return out;
}

}  // namespace tad::ad
