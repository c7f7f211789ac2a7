#include "driver/preconditions.h"

#include <algorithm>

#include "passes/rewrites.h"
#include "schedule/schedule.h"
#include "support/error.h"

namespace tad::driver {

namespace {

bool contains(const std::vector<std::string> &v, const std::string &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

std::string refusal(const ir::Function &fwd, const std::string &param, const std::string &at, const std::string &cond) {
    return "tad: the backward of " + fwd.name + " assumes that a program writes each element of " + param + " once (" +
           at + "), which holds where " + cond + "; these arguments do not ensure it";
}

}  // namespace

std::vector<plan::Precondition> single_write_preconditions(const ir::Function &fwd, const ad::GradSpec &spec,
                                                           std::string *report) {
    std::vector<plan::Precondition> out;
    for (const passes::Rewrite &r : passes::rewrites(fwd)) {
        if (!contains(spec.outputs, r.param)) continue;
        const ir::Op &store = fwd.ops[static_cast<size_t>(r.op)];
        const std::string at = where(fwd.source_path, store.loc.line, store.loc.col);
        if (contains(spec.mapped_once, r.param)) {
            std::vector<std::vector<passes::Inequality>> unless;
            passes::once_on_tiles(fwd, r.param, &unless);
            plan::Precondition p{unless.empty() ? plan::Guards{} : schedule::guards_of(unless), true, ""};
            std::string cond = "its programs map one to one onto tiles";
            for (const plan::Guard &g : p.guards) cond += " and " + g.str();
            p.refusal = refusal(fwd, r.param, at, cond);
            *report += r.param + ": written once where " + cond +
                       " (the backward runs on those tiles; checked when it runs)\n";
            out.push_back(std::move(p));
        } else if (r.unless.empty() || contains(spec.rewritten, r.param)) {
            const std::string why = r.unless.empty() ? r.why : "another parameter stores to its tensor";
            *report += r.param + ": a program may write an element twice (" + at + ": " + why +
                       "); its gradient is read at the last write and zeroed\n";
        } else {
            plan::Precondition p{schedule::guards_of(r.unless), false, ""};
            std::string cond;
            for (const plan::Guard &g : p.guards) cond += (cond.empty() ? "" : " and ") + g.str();
            p.refusal = refusal(fwd, r.param, at, cond);
            *report += r.param + ": written once per program where " + cond + " (checked when the backward runs)\n";
            out.push_back(std::move(p));
        }
    }
    return out;
}

}  // namespace tad::driver
