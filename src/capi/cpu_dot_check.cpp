#include "capi/cpu_dot_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "frontend/lower.h"
#include "support/error.h"

namespace tad {

namespace {

// Both sides run in float64 with no finite differences: they agree up to rounding.
constexpr double kRtol = 1e-9;

// A dot product and the sum of its terms' squares: with random u and v both sides are sums of terms
// of random sign, whose rounding errors add up like the terms' root sum of squares. Errors are
// relative to that (or to the sums, when larger), so that a sum that cancels by chance does not
// inflate them.
struct Sum {
    double value = 0, squares = 0;
    void add(double a, double b) {
        value += a * b;
        squares += a * b * a * b;
    }
};

bool defines(const ast::File &file, const std::string &name) {
    for (const auto &s : file.module->list("body"))
        if (s->is("FunctionDef") && s->str("name") == name) return true;
    return false;
}

const frontend::ArgBinding &binding(const Derived &d, const std::string &name) {
    for (const frontend::ArgBinding &b : d.bindings)
        if (b.name == name) return b;
    fail(TAD_ERR_INTERNAL, "dot-product test: the forward has no argument '" + name + "'");
}

}  // namespace

std::string ref_key(JsonRef ref) {
    for (const char *k : {"input", "output", "temp"})
        if (ref.has(k)) return std::string(k) + ":" + std::to_string(ref.at(k).integer());
    fail(TAD_ERR_INVALID_ARGUMENT, "trace record: tensor argument without a ref");
}

Json dot_product_check(const DotCheckInput &in, std::mt19937_64 &rng) {
    Json out = Json::object();
    std::string why;
    std::vector<emit::Tangent> tangents(in.launches.size());
    for (size_t k = 0; k < in.launches.size() && why.empty(); ++k) {
        const Derived &d = *in.launches[k].derived;
        if (d.specialization.variants.empty()) continue;
        tangents[k] = derive_jvp(d);
        if (tangents[k].jvp && !defines(in.module, tangents[k].jvp->fn.name))
            tangents[k].unsupported = "the emitted module has no tangent kernel '" + tangents[k].jvp->fn.name + "'";
        why = tangents[k].unsupported;
    }
    if (!why.empty()) {
        out.set("skipped", why);
        return out;
    }

    // As the emitted launcher: one tangent buffer per tensor, v in the inputs', zeros elsewhere;
    // each launch's tangent kernel in the forward's order, on the contents its launch saw.
    std::normal_distribution<double> normal(0.0, 1.0);
    interp::Memory mem = in.mem;
    std::map<std::string, std::vector<double>> v;  // "input:<i>" -> v_i
    std::map<std::string, int> tangent;  // tensor key -> its tangent buffer in mem
    // v is drawn for GRAD_INPUTS only: a stub input that is not one (an `out=` buffer) starts at a
    // zero tangent, as in the emitted module.
    auto grad_input = [&](const std::string &key) {
        if (key.rfind("input:", 0) != 0) return false;
        const std::string &name = in.kf.stub.params.at(std::stoul(key.substr(6)));
        return std::find(in.kf.stub.grad_inputs.begin(), in.kf.stub.grad_inputs.end(), name) !=
               in.kf.stub.grad_inputs.end();
    };
    for (size_t k = 0; k < in.launches.size(); ++k) {
        if (!tangents[k].jvp) continue;
        const Derived &d = *in.launches[k].derived;
        const ad::Forward &f = *tangents[k].jvp;
        std::map<std::string, std::string> key_of;  // kernel parameter -> its tensor's key
        JsonRef args = in.trace.at("launches")[k].at("args");
        for (size_t i = 0; i < args.size(); ++i)
            if (args[i].has("ref")) key_of.emplace(args[i].at("name").str(), ref_key(args[i].at("ref")));
        std::map<std::string, interp::ArgValue> by_name = *in.launches[k].args;
        std::vector<frontend::ArgBinding> bind;
        for (size_t i = 0; i < f.fn.params.size(); ++i) {
            const ir::Param &p = f.fn.params[i];
            const ad::ParamOrigin &o = f.origins[i];
            if (o.kind != ad::ParamOrigin::Shadow) {
                bind.push_back(binding(d, p.name));
                auto copy = in.saved.find({k, p.name});
                if (copy != in.saved.end()) by_name[p.name] = interp::ArgValue::pointer(copy->second);
                continue;
            }
            frontend::ArgBinding sb = binding(d, o.primal);
            sb.name = p.name;
            bind.push_back(sb);
            const std::string &key = key_of.at(o.primal);
            if (!tangent.count(key)) {
                size_t n = in.mem.buffers.at(static_cast<size_t>(in.tensors.at(key))).data.size();
                interp::Buffer buf{p.name, sb.dtype, std::vector<double>(n, 0.0)};
                if (grad_input(key)) {
                    std::vector<double> &vi = v[key];
                    if (vi.empty())
                        for (size_t e = 0; e < n; ++e) vi.push_back(normal(rng));
                    buf.data = vi;
                }
                tangent[key] = mem.add(std::move(buf));
            }
            by_name[p.name] = interp::ArgValue::pointer(tangent.at(key));
        }
        for (const ir::Constexpr &c : f.fn.constexprs) bind.push_back(binding(d, c.name));
        ir::Function kernel = frontend::lower_kernel(in.module, f.fn.name, bind);
        std::vector<interp::ArgValue> call;
        for (const ir::Param &p : kernel.params) call.push_back(by_name.at(p.name));
        interp::run(kernel, call, in.launches[k].grid, mem);
    }
    std::map<size_t, int> jv;  // output index -> (J v)_j's buffer
    for (const auto &[key, id] : tangent)
        if (key.rfind("output:", 0) == 0) jv[static_cast<size_t>(std::stoi(key.substr(7)))] = id;
    for (const auto &[j, i] : in.chain.aliases) {  // an input updated in place and returned
        auto t = tangent.find("input:" + std::to_string(i));
        if (t != tangent.end()) jv[static_cast<size_t>(j)] = t->second;
    }

    Sum a, b;
    for (const auto &[j, id] : jv) {
        const std::vector<double> &u = in.cotangents.at(j), &t_j = mem.at(id).data;
        for (size_t e = 0; e < u.size(); ++e) a.add(u[e], t_j[e]);
    }
    // A gradient input the tangent kernel does not read still gets a v: its Jᵀu must then be zero.
    for (const auto &[key, id] : in.grads) {
        if (!grad_input(key)) continue;
        const std::vector<double> &g = in.bwd_mem.buffers.at(static_cast<size_t>(id)).data;
        std::vector<double> &vi = v[key];
        if (vi.empty())
            for (size_t e = 0; e < g.size(); ++e) vi.push_back(normal(rng));
        for (size_t e = 0; e < g.size(); ++e) b.add(vi[e], g[e]);
    }
    double scale =
        std::max({std::fabs(a.value), std::fabs(b.value), std::sqrt(a.squares), std::sqrt(b.squares), 1e-300});
    double rel = std::fabs(a.value - b.value) / scale;
    out.set("jvp", a.value);
    out.set("vjp", b.value);
    out.set("rel_err", rel);
    out.set("rtol", kRtol);
    out.set_bool("ok", rel <= kRtol);
    return out;
}

void add_dot_product(Json &entry, Json check) {
    if (check.has("ok") && !check.at("ok").boolean()) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "dot-product test fails: <J v, u> = %.10g, <v, J^T u> = %.10g, rel err %.3g (tolerance %.3g)",
                      check.num_or("jvp", NAN), check.num_or("vjp", NAN), check.num_or("rel_err", NAN),
                      check.num_or("rtol", NAN));
        JsonRef prev = entry.get("message");
        entry.set("message", prev.valid() && prev.is_string() ? prev.str() + "; " + buf : std::string(buf));
        if (entry.str_or("status", "") == "pass") entry.set("status", "fail");
    }
    entry.set_copy("dot_product", check);
}

}  // namespace tad
