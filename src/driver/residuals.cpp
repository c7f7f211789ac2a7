#include "driver/residuals.h"

#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "frontend/parser.h"
#include "frontend/residual_stores.h"
#include "passes/online_softmax.h"
#include "passes/passes.h"

namespace tad::driver {

namespace {

bool enabled() {
    const char *env = std::getenv("TAD_SAVE_RESIDUALS");
    return !(env && std::string(env) == "off");
}

// The stores worth adding, one per loop of a kernel (a kernel may be launched, and specialized,
// more than once).
std::vector<frontend::ResidualStore> choose(const std::vector<Chain> &chains) {
    std::vector<frontend::ResidualStore> out;
    std::set<std::tuple<std::string, int, int>> seen;
    std::map<std::string, int> count;  // kernel -> its parameters so far
    for (const Chain &c : chains)
        for (const Derived &d : c.launches) {
            if (d.spec.wrt.empty()) continue;
            for (const passes::UnsavedLogsumexp &u :
                 passes::unsaved_logsumexps(d.forward, d.spec.outputs, d.spec.kept)) {
                const ir::SrcLoc at = d.forward.ops[static_cast<size_t>(u.loop)].loc;
                if (!seen.insert({d.kernel, at.line, at.col}).second) continue;
                const std::string log = u.exp == ir::OpKind::Exp ? "log" : "log2";
                out.push_back({d.kernel, at.line, at.col, u.m + " + _tad_tl." + log + "(" + u.l + ")",
                               "TAD_SAVED_" + std::to_string(count[d.kernel]++), passes::program_axes(d.forward)});
            }
        }
    return out;
}

// `trace` with a buffer for each store of each launch: a temporary of one element per program, as
// the launcher allocates it.
Json with_buffers(JsonRef trace, const std::vector<frontend::ResidualStore> &stores) {
    Json t = Json::copy(trace);
    JsonRef temps = t.at("temps"), launches = t.at("launches");
    for (size_t k = 0; k < launches.size(); ++k)
        for (const frontend::ResidualStore &s : stores) {
            if (launches[k].at("kernel").str() != s.kernel) continue;
            int64_t programs = 1;
            for (size_t a = 0; a < launches[k].at("grid").size(); ++a) programs *= launches[k].at("grid")[a].integer();
            JsonRef args = launches[k].at("args");
            std::string dtype = "float32";  // float64 where a tensor is (module_runtime.py's _with_saved)
            for (size_t a = 0; a < args.size(); ++a)
                if (args[a].str_or("kind", "") == "tensor" && args[a].str_or("dtype", "") == "float64")
                    dtype = "float64";
            const int64_t id = static_cast<int64_t>(temps.size());
            JsonRef temp = temps.push_object();
            temp.set("id", id);
            temp.set("dtype", dtype);
            temp.set_array("shape").push(programs);
            temp.set_array("stride").push(int64_t{1});
            JsonRef arg = args.push_object();
            arg.set("name", s.param);
            arg.set("kind", "tensor");
            arg.set_object("ref").set("temp", id);
            arg.set("offset", int64_t{0});
            arg.set("dtype", dtype);
        }
    return t;
}

// Whether some backward variant of the chains reads `param` of `kernel` back.
bool read_back(const std::vector<Chain> &chains, const std::string &kernel, const std::string &param) {
    for (const Chain &c : chains)
        for (const Derived &d : c.launches) {
            if (d.kernel != kernel) continue;
            for (const plan::KernelVariant &v : d.specialization.variants)
                for (const ir::Param &p : v.bwd.fn.params)
                    if (p.final_of == param) return true;
        }
    return false;
}

}  // namespace

std::optional<Residuals> save_residuals(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                        const std::vector<Chain> &chains, ad::LoopPolicy loops, std::string *report) {
    if (!enabled()) return std::nullopt;
    const std::vector<frontend::ResidualStore> stores = choose(chains);
    if (stores.empty()) return std::nullopt;
    std::string why;
    const std::string source = frontend::insert_residual_stores(kf, stores, &why);
    if (source.empty()) {
        *report += "residuals not saved: " + why + "\n";
        return std::nullopt;
    }
    Residuals r{frontend::analyze(frontend::parse_source(kf.file.path, source)), {}, {}, ""};
    for (JsonRef t : traces) r.traces.push_back(with_buffers(t, stores));
    for (const Json &t : r.traces) r.chains.push_back(derive_chain(r.kf, t, loops));
    for (const frontend::ResidualStore &s : stores) {
        const std::string what = s.kernel + " saves " + s.expr + " after the loop at " + kf.file.path + ":" +
                                 std::to_string(s.line) + ":" + std::to_string(s.col) + " to " + s.param;
        if (!read_back(r.chains, s.kernel, s.param)) {
            *report += "residuals not saved: " + what + ", but its backward would not read it back\n";
            return std::nullopt;
        }
        r.report += "residual: " + what + " (one value per program); the backward reads it back\n";
    }
    return r;
}

}  // namespace tad::driver
