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
                std::string param = "TAD_SAVED_" + std::to_string(count[d.kernel]++);
                for (const std::string &dim : u.dims) param += "__" + dim;
                out.push_back({d.kernel, at.line, at.col, u.m + " + _tad_tl." + log + "(" + u.l + ")", param,
                               passes::program_axes(d.forward), u.dims});
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
            int64_t elements = 1;  // the grid's programs times the tile's
            for (size_t a = 0; a < launches[k].at("grid").size(); ++a) elements *= launches[k].at("grid")[a].integer();
            JsonRef args = launches[k].at("args");
            for (const std::string &dim : s.dims)
                for (size_t a = 0; a < args.size(); ++a)
                    if (args[a].at("name").str() == dim) elements *= args[a].at("value").integer();
            std::string dtype = "float32";  // float64 where a tensor is (module_runtime.py's _with_saved)
            bool autograd = false;
            for (size_t a = 0; a < args.size(); ++a) {
                if (args[a].str_or("kind", "") == "tensor" && args[a].str_or("dtype", "") == "float64")
                    dtype = "float64";
                autograd = autograd || args[a].has("view_shape");
            }
            const int64_t id = static_cast<int64_t>(temps.size());
            JsonRef temp = temps.push_object();
            temp.set("id", id);
            temp.set("dtype", dtype);
            temp.set_array("shape").push(elements);
            temp.set_array("stride").push(int64_t{1});
            JsonRef arg = args.push_object();
            arg.set("name", s.param);
            arg.set("kind", "tensor");
            arg.set_object("ref").set("temp", id);
            arg.set("offset", int64_t{0});
            arg.set("dtype", dtype);
            if (autograd) {  // a trace taken with autograd (launch nodes): the view the kernel gets
                arg.set_bool("requires_grad", false);
                arg.set_array("view_shape").push(elements);
                arg.set_array("view_stride").push(int64_t{1});
            }
        }
    return t;
}

// What the derivation with the stores says of the loop at `at` (": loop at ...: online softmax ..."),
// or "".
std::string loop_report(const std::vector<Chain> &chains, const std::string &at) {
    const std::string text = explain(chains), key = "loop at " + at + ":";
    const size_t from = text.find(key);
    if (from == std::string::npos) return "";
    return ": " + text.substr(from, text.find('\n', from) - from);
}

// How many backward variants of `kernel`'s launches run on its tile coordinates (remap_programs.h):
// a store at the linear program id reads num_programs, which the remap refuses.
size_t remapped(const std::vector<Chain> &chains, const std::string &kernel) {
    size_t n = 0;
    for (const Chain &c : chains)
        for (const Derived &d : c.launches)
            if (d.kernel == kernel)
                for (const plan::KernelVariant &v : d.specialization.variants) n += v.remap.has_value();
    return n;
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
                                        const std::vector<Chain> &chains, const Derive &derive, std::string *report) {
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
    r.chains = derive(r.kf, std::vector<JsonRef>(r.traces.begin(), r.traces.end()));
    for (const frontend::ResidualStore &s : stores) {
        const std::string what = s.kernel + " saves " + s.expr + " after the loop at " + kf.file.path + ":" +
                                 std::to_string(s.line) + ":" + std::to_string(s.col) + " to " + s.param;
        if (!read_back(r.chains, s.kernel, s.param)) {
            *report +=
                "residuals not saved: " + what + ", but its backward would not read it back" +
                loop_report(r.chains, kf.file.path + ":" + std::to_string(s.line) + ":" + std::to_string(s.col)) + "\n";
            return std::nullopt;
        }
        if (remapped(r.chains, s.kernel) < remapped(chains, s.kernel)) {
            *report += "residuals not saved: " + what + ", but its backward would no longer run on tile coordinates\n";
            return std::nullopt;
        }
        std::string tile;
        for (const std::string &dim : s.dims) tile += (tile.empty() ? "" : " x ") + dim;
        r.report += "residual: " + what + (tile.empty() ? " (a value" : " (a " + tile + " tile") +
                    " per program); the backward reads it back\n";
    }
    return r;
}

}  // namespace tad::driver
