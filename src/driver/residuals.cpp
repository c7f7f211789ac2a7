#include "driver/residuals.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "frontend/parser.h"
#include "frontend/residual_stores.h"
#include "passes/online_softmax.h"
#include "passes/passes.h"
#include "passes/unsaved_accumulators.h"
#include "support/error.h"

namespace tad::driver {

namespace {

bool enabled() {
    const char *env = std::getenv("TAD_SAVE_RESIDUALS");
    return !(env && std::string(env) == "off");
}

// The dims a row vector may be saved with: constexpr parameters of the kernel's signature (a
// constexpr lowering made up, as a descriptor's block, is none), without "__", which separates them
// in the buffer's parameter name.
bool spelled(const frontend::KernelFile &kf, const std::string &kernel, const std::vector<std::string> &dims) {
    const std::vector<std::string> params = frontend::param_names(*kf.jit(kernel));
    return std::all_of(dims.begin(), dims.end(), [&](const std::string &d) {
        return d.find("__") == std::string::npos && std::find(params.begin(), params.end(), d) != params.end();
    });
}

// The stores worth adding, one per loop of a kernel (a kernel may be launched, and specialized,
// more than once).
std::vector<frontend::ResidualStore> choose(const frontend::KernelFile &kf, const std::vector<Chain> &chains) {
    std::vector<frontend::ResidualStore> out;
    std::set<std::tuple<std::string, int, int>> seen;
    std::map<std::string, int> count;  // kernel -> its parameters so far
    for (const Chain &c : chains)
        for (const Derived &d : c.launches) {
            if (d.spec.wrt.empty()) continue;
            for (const passes::UnsavedLogsumexp &u :
                 passes::unsaved_logsumexps(d.forward, d.spec.outputs, d.spec.kept)) {
                const ir::SrcLoc at = d.forward.ops[static_cast<size_t>(u.loop)].loc;
                if (!spelled(kf, d.kernel, u.dims) || !seen.insert({d.kernel, at.line, at.col}).second) continue;
                const std::string log = u.exp == ir::OpKind::Exp ? "log" : "log2";
                std::string param = frontend::kResidualPrefix + std::to_string(count[d.kernel]++);
                for (const std::string &dim : u.dims) param += "__" + dim;
                out.push_back({d.kernel, at.line, at.col, u.m + " + _tad_tl." + log + "(" + u.l + ")", param,
                               passes::program_axes(d.forward), u.dims});
            }
            for (const passes::UnsavedAccumulator &u : passes::unsaved_accumulators(d.forward)) {
                const ir::SrcLoc at = d.forward.ops[static_cast<size_t>(u.loop)].loc;
                const ir::SrcLoc st = d.forward.ops[static_cast<size_t>(u.store)].loc;
                if (u.like.find("__") != std::string::npos || !seen.insert({d.kernel, at.line, at.col}).second)
                    continue;
                const std::string param =
                    frontend::kResidualPrefix + std::to_string(count[d.kernel]++) + "_LIKE_" + u.like;
                out.push_back({d.kernel, at.line, at.col, u.name, param, {}, {}, u.like, st.line, st.col});
            }
        }
    return out;
}

// The elements from a launch argument's first to the end of the tensor holding it (an input, output
// or temporary of the trace): what a buffer laid out like it needs.
int64_t elements_from(JsonRef trace, JsonRef arg) {
    JsonRef ref = arg.at("ref");
    const char *kind = ref.has("input") ? "input" : ref.has("output") ? "output" : "temp";
    const int64_t index = ref.at(kind).integer();
    JsonRef list = trace.at(std::string(kind) == "input"    ? "inputs"
                            : std::string(kind) == "output" ? "outputs"
                                                            : "temps");
    for (size_t i = 0; i < list.size(); ++i) {
        const char *key = std::string(kind) == "temp" ? "id" : "index";
        if (list[i].at(key).integer() != index) continue;
        int64_t extent = 1;
        for (size_t d = 0; d < list[i].at("shape").size(); ++d) {
            const int64_t n = list[i].at("shape")[d].integer();
            if (n == 0) return 0;
            extent += (n - 1) * list[i].at("stride")[d].integer();
        }
        return extent - arg.at("offset").integer();
    }
    fail(TAD_ERR_INTERNAL, std::string("trace: no ") + kind + " " + std::to_string(index));
}

// A store's buffer in one launch: the grid's programs times the row vector's length, float64 where
// the launch has a float64 tensor, a descriptor's base included (module_runtime.py's _with_saved
// allocates the same).
int64_t buffer_elements(JsonRef trace, JsonRef launch, const frontend::ResidualStore &s) {
    JsonRef args = launch.at("args");
    if (!s.like.empty())
        for (size_t a = 0; a < args.size(); ++a)
            if (args[a].at("name").str() == s.like) return elements_from(trace, args[a]);
    int64_t n = 1;
    for (size_t a = 0; a < launch.at("grid").size(); ++a) n *= launch.at("grid")[a].integer();
    for (const std::string &dim : s.dims)
        for (size_t a = 0; a < args.size(); ++a)
            if (args[a].at("name").str() == dim) n *= args[a].at("value").integer();
    return n;
}

std::string buffer_dtype(JsonRef launch) {
    JsonRef args = launch.at("args");
    for (size_t a = 0; a < args.size(); ++a)
        if ((args[a].str_or("kind", "") == "tensor" || args[a].str_or("kind", "") == "tensor_desc") &&
            args[a].str_or("dtype", "") == "float64")
            return "float64";
    return "float32";
}

// Binds s's buffer, temporary `id`, in `launch`; in a trace taken with autograd (launch nodes) with
// the view the kernel gets.
void bind_buffer(JsonRef launch, const frontend::ResidualStore &s, int64_t id, int64_t elements,
                 const std::string &dtype) {
    JsonRef args = launch.at("args");
    bool autograd = false;
    for (size_t a = 0; a < args.size(); ++a) autograd = autograd || args[a].has("view_shape");
    JsonRef arg = args.push_object();
    arg.set("name", s.param);
    arg.set("kind", "tensor");
    arg.set_object("ref").set("temp", id);
    arg.set("offset", int64_t{0});
    arg.set("dtype", dtype);
    if (!autograd) return;
    arg.set_bool("requires_grad", false);
    arg.set_array("view_shape").push(elements);
    arg.set_array("view_stride").push(int64_t{1});
}

// `trace` with a buffer for each store of each launch, a temporary, as the launcher allocates it.
Json with_buffers(JsonRef trace, const std::vector<frontend::ResidualStore> &stores) {
    Json t = Json::copy(trace);
    JsonRef temps = t.at("temps"), launches = t.at("launches");
    for (size_t k = 0; k < launches.size(); ++k)
        for (const frontend::ResidualStore &s : stores) {
            if (launches[k].at("kernel").str() != s.kernel) continue;
            const int64_t elements = buffer_elements(t, launches[k], s), id = static_cast<int64_t>(temps.size());
            const std::string dtype = buffer_dtype(launches[k]);
            JsonRef temp = temps.push_object();
            temp.set("id", id);
            temp.set("dtype", dtype);
            temp.set_array("shape").push(elements);
            temp.set_array("stride").push(int64_t{1});
            bind_buffer(launches[k], s, id, elements, dtype);
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
    const std::vector<frontend::ResidualStore> stores = choose(kf, chains);
    if (stores.empty()) return std::nullopt;
    std::string why;
    const std::string source = frontend::insert_residual_stores(kf, stores, &why);
    if (source.empty()) {
        *report += "residuals not saved: " + why + "\n";
        return std::nullopt;
    }
    std::optional<Residuals> r;
    try {  // saving is optional: a derivation the stores break keeps the file as written
        r = Residuals{frontend::analyze(frontend::parse_source(kf.file.path, source), true), {}, {}, ""};
        for (JsonRef t : traces) r->traces.push_back(with_buffers(t, stores));
        r->chains = derive(r->kf, std::vector<JsonRef>(r->traces.begin(), r->traces.end()));
    } catch (const Error &e) {
        *report += std::string("residuals not saved: deriving with them failed: ") + e.what() + "\n";
        return std::nullopt;
    }
    for (const frontend::ResidualStore &s : stores) {
        const std::string what = s.kernel + " saves " + s.expr + " after the loop at " + kf.file.path + ":" +
                                 std::to_string(s.line) + ":" + std::to_string(s.col) + " to " + s.param;
        if (!read_back(r->chains, s.kernel, s.param)) {
            *report +=
                "residuals not saved: " + what + ", but its backward would not read it back" +
                loop_report(r->chains, kf.file.path + ":" + std::to_string(s.line) + ":" + std::to_string(s.col)) +
                "\n";
            return std::nullopt;
        }
        if (remapped(r->chains, s.kernel) < remapped(chains, s.kernel)) {
            *report += "residuals not saved: " + what + ", but its backward would no longer run on tile coordinates\n";
            return std::nullopt;
        }
        const std::string kind = !s.like.empty() ? " (a tile, where the store at " + kf.file.path + ":" +
                                                       std::to_string(s.store_line) + ":" +
                                                       std::to_string(s.store_col) + " writes " + s.like
                                 : s.dims.empty() ? " (a value per program"
                                                  : " (a " + s.dims[0] + " row vector per program";
        r->report += "residual: " + what + kind + "); the backward reads it back\n";
    }
    return r;
}

std::vector<std::string> residual_params(const ast::File &file, const frontend::KernelFile &forward) {
    std::set<std::string> kernels;  // the forward's, by their def names
    for (const auto &[name, def] : forward.jit_functions) kernels.insert(def->str("name"));
    std::vector<std::string> out;
    for (const auto &[name, def] : frontend::jit_functions_of(file))
        for (const std::string &p : frontend::param_names(*def))
            if (kernels.count(def->str("name")) && p.rfind(frontend::kResidualPrefix, 0) == 0)
                out.push_back(def->str("name") + "." + p);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace tad::driver
