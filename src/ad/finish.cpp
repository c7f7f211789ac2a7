#include "ad/finish.h"

#include "passes/passes.h"
#include "support/error.h"

namespace tad::ad {

Finished finish_derived(const ir::Function &raw, const std::map<std::string, ParamOrigin> &derived_params,
                        const std::string &what, const Cleanup &cleanup) {
    Finished out;
    out.fn = cleanup(raw);
    for (const ir::Param &p : out.fn.params) {
        auto it = derived_params.find(p.name);
        out.origins.push_back(it == derived_params.end() ? ParamOrigin{ParamOrigin::Primal, p.name} : it->second);
    }
    std::string problem = ir::verify(out.fn);
    if (!problem.empty()) fail(TAD_ERR_INTERNAL, what + " is invalid IR: " + problem);
    return out;
}

}  // namespace tad::ad
