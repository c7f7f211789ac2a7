#include "capi/cpu_verify.h"

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "capi/cpu_dot_check.h"
#include "capi/pipeline.h"
#include "frontend/parser.h"
#include "interp/interp.h"
#include "support/base64.h"
#include "support/error.h"

namespace tad {

namespace {

int64_t storage_size(JsonRef shape, JsonRef stride) {
    int64_t n = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i].integer() == 0) return 0;
        n += (shape[i].integer() - 1) * stride[i].integer();
    }
    return n;
}

std::vector<double> normal(size_t n, std::mt19937_64 &rng) {
    std::normal_distribution<double> d(0.0, 1.0);
    std::vector<double> v(n);
    for (double &x : v) x = d(rng);
    return v;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

// Buffers of one traced call: "input:i" / "output:j" / "temp:k" -> buffer id.
struct Tensors {
    interp::Memory mem;
    std::map<std::string, int> ids;
};

int add_tensor(Tensors &t, const std::string &key, const std::string &name, JsonRef desc, double fill) {
    ir::DType dt = ir::DType::F32;
    ir::dtype_from_torch(desc.at("dtype").str(), &dt);
    interp::Buffer b{name, dt,
                     std::vector<double>(static_cast<size_t>(storage_size(desc.at("shape"), desc.at("stride"))), fill)};
    return t.ids[key] = t.mem.add(std::move(b));
}

std::vector<interp::ArgValue> args_for(const ir::Function &fn, const std::map<std::string, interp::ArgValue> &by_name) {
    std::vector<interp::ArgValue> out;
    for (const ir::Param &p : fn.params) out.push_back(by_name.at(p.name));
    return out;
}

frontend::ArgBinding tensor_binding(const std::string &name, ir::DType dtype) {
    frontend::ArgBinding b;
    b.kind = frontend::ArgBinding::Tensor;
    b.name = name;
    b.dtype = dtype;
    return b;
}

std::array<int64_t, 3> grid_of(JsonRef launch) {
    std::array<int64_t, 3> g{1, 1, 1};
    JsonRef grid = launch.at("grid");
    for (size_t i = 0; i < grid.size() && i < 3; ++i) g[i] = grid[i].integer();
    return g;
}

// One launch of the traced call, ready for the interpreter.
struct LaunchRun {
    const Derived *derived = nullptr;
    std::map<std::string, JsonRef> arg_desc;
    std::map<std::string, interp::ArgValue> args;  // by parameter name
    std::array<int64_t, 3> grid{};
    ir::Function fwd;  // lowered again: the interpreter runs the kernel as written, not after CSE
};

// Layout (shape, stride) of the tensor a trace ref names.
JsonRef layout_of(JsonRef trace, const std::string &key) {
    size_t colon = key.find(':');
    std::string kind = key.substr(0, colon);
    size_t index = static_cast<size_t>(std::stoi(key.substr(colon + 1)));
    return trace.at(kind == "input" ? "inputs" : kind == "output" ? "outputs" : "temps")[index];
}

bool same_layout(JsonRef a, JsonRef b) {
    return a.at("shape").dump() == b.at("shape").dump() && a.at("stride").dump() == b.at("stride").dump();
}

const emit::Variant &pick_variant(const LaunchRun &r) {
    // The variant the launcher would run with these scalars.
    for (const emit::Variant &v : r.derived->specialization.variants) {
        bool ok = true;
        for (const auto &[a, b] : v.guards)
            ok = ok && r.arg_desc.at(a).at("value").num() == r.arg_desc.at(b).at("value").num();
        if (ok) return v;
    }
    return r.derived->specialization.variants.back();
}

std::vector<frontend::ArgBinding> bindings_for(const Derived &d, const std::vector<std::string> &names) {
    std::vector<frontend::ArgBinding> out;
    for (const std::string &n : names)
        for (const auto &b : d.bindings)
            if (b.name == n) out.push_back(b);
    return out;
}

std::vector<std::string> constexpr_names(const ir::Function &f) {
    std::vector<std::string> out;
    for (const ir::Constexpr &c : f.constexprs) out.push_back(c.name);
    return out;
}

// As the emitted launcher: the sizing kernel first, then a tape of the largest need per program.
// `saved`: (launch, parameter) -> the contents launch k saw, where a launch overwrote them; the
// sizing kernel reads those, as the emitted launcher passes it the saved copies.
int64_t tape_stride_of(const ast::File &bwd_file, size_t k, const LaunchRun &r, const ad::TapeSizing &ts,
                       const interp::Memory &fmem, const std::map<std::pair<size_t, std::string>, int> &saved) {
    std::vector<frontend::ArgBinding> bind;
    std::map<std::string, interp::ArgValue> args = r.args;
    interp::Memory smem = fmem;
    const int64_t programs = r.grid[0] * r.grid[1] * r.grid[2];
    for (size_t i = 0; i < ts.fn.params.size(); ++i) {
        const ir::Param &p = ts.fn.params[i];
        if (ts.origins[i].kind != ad::ParamOrigin::TapeNeed) {
            auto b = bindings_for(*r.derived, {p.name});
            bind.insert(bind.end(), b.begin(), b.end());
            auto copy = saved.find({k, p.name});
            if (copy != saved.end()) args[p.name] = interp::ArgValue::pointer(copy->second);
            continue;
        }
        bind.push_back(tensor_binding(p.name, ir::DType::I64));
        args[p.name] = interp::ArgValue::pointer(
            smem.add(interp::Buffer{p.name, ir::DType::I64, std::vector<double>(programs, std::nan(""))}));
    }
    auto c = bindings_for(*r.derived, constexpr_names(ts.fn));
    bind.insert(bind.end(), c.begin(), c.end());
    ir::Function sizing = frontend::lower_kernel(bwd_file, ts.fn.name, bind);
    interp::run(sizing, args_for(sizing, args), r.grid, smem);
    int64_t stride = 1;
    for (double need : smem.at(args.at(ts.fn.params.back().name).buffer).data) {
        if (std::isnan(need))
            fail(TAD_ERR_INTERNAL, "tape sizing kernel '" + ts.fn.name + "' left a program's need unwritten");
        stride = std::max(stride, static_cast<int64_t>(need));
    }
    return stride;
}

// Outputs and temps start as the stub left them before their first launch (torch.zeros for an
// accumulator or a partly written output, a table the stub filled), as recorded in the trace. A
// buffer the trace has no contents for stays NaN, and its first launch must not read it.
void load_prior_contents(const Chain &chain, JsonRef trace, Tensors &t) {
    std::set<std::string> touched;
    for (const Derived &d : chain.launches) {
        passes::MemoryParams m = passes::memory_params(d.forward);
        for (const auto &[param, ref] : d.tensors) {
            if (ref.kind == emit::TensorRef::Input) continue;
            std::string key = (ref.kind == emit::TensorRef::Output ? "output:" : "temp:") + std::to_string(ref.index);
            if (!touched.insert(key).second) continue;
            JsonRef data = trace.at("data").get(key);
            if (!data.valid()) {
                if (m.loaded.count(param) || m.accumulated.count(param))
                    fail(TAD_ERR_UNSUPPORTED, "kernel '" + d.kernel + "' reads " + key +
                                                  " before writing it, and the trace has no record of its contents");
                continue;
            }
            std::vector<double> values = base64::decode_float64(data.str());
            if (values.size() != t.mem.at(t.ids.at(key)).data.size())
                fail(TAD_ERR_INVALID_ARGUMENT,
                     "trace record: data of " + key + " has " + std::to_string(values.size()) + " values");
            t.mem.at(t.ids.at(key)).data = std::move(values);
        }
    }
}

Json check_entry(const CpuVerifyInput &in, const ast::File &bwd_file, JsonRef trace, std::mt19937_64 &rng) {
    Chain chain = derive_chain(in.kf, trace, in.loops);
    JsonRef launches = trace.at("launches");
    const double nan = std::nan("");

    Tensors t;
    JsonRef inputs = trace.at("inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
        JsonRef d = inputs[i];
        if (d.at("kind").str() != "tensor") continue;
        std::string key = "input:" + std::to_string(d.at("index").integer());
        int id = add_tensor(t, key, d.at("name").str(), d, 0);
        std::vector<double> data = base64::decode_float64(trace.at("data").at(key).str());
        if (data.size() != t.mem.at(id).data.size())
            fail(TAD_ERR_INVALID_ARGUMENT,
                 "trace record: data of " + key + " has " + std::to_string(data.size()) + " values");
        t.mem.at(id).data = std::move(data);
    }
    for (size_t j = 0; j < trace.at("outputs").size(); ++j) {
        auto alias = chain.aliases.find(static_cast<int>(j));
        if (alias != chain.aliases.end())
            t.ids["output:" + std::to_string(j)] = t.ids.at("input:" + std::to_string(alias->second));
        else
            add_tensor(t, "output:" + std::to_string(j), "output " + std::to_string(j), trace.at("outputs")[j], nan);
    }
    for (size_t k = 0; k < trace.at("temps").size(); ++k)
        add_tensor(t, "temp:" + std::to_string(k), "temp " + std::to_string(k), trace.at("temps")[k], nan);
    load_prior_contents(chain, trace, t);

    std::vector<LaunchRun> runs(chain.launches.size());
    for (size_t k = 0; k < runs.size(); ++k) {
        LaunchRun &r = runs[k];
        r.derived = &chain.launches[k];
        JsonRef launch = launches[k];
        for (size_t i = 0; i < launch.at("args").size(); ++i)
            r.arg_desc[launch.at("args")[i].at("name").str()] = launch.at("args")[i];
        for (const frontend::ArgBinding &b : r.derived->bindings) {
            interp::ArgValue a{};
            if (b.kind == frontend::ArgBinding::Tensor)
                a = interp::ArgValue::pointer(t.ids.at(ref_key(r.arg_desc.at(b.name).at("ref"))));
            else if (b.kind == frontend::ArgBinding::Float)
                a = interp::ArgValue::real(b.fval);
            else
                a = interp::ArgValue::integer(b.ival);
            r.args[b.name] = a;
        }
        r.grid = grid_of(launch);
        r.fwd = frontend::lower_kernel(in.kf, r.derived->kernel, r.derived->bindings);
    }
    auto forward = [&](interp::Memory &mem) {
        for (const LaunchRun &r : runs) interp::run(r.fwd, args_for(r.fwd, r.args), r.grid, mem);
    };

    // L(x) = Σ_j <u_j, y_j(x)> for random cotangents u_j.
    size_t n_out = trace.at("outputs").size();
    std::vector<std::vector<double>> cot(n_out);
    for (size_t j = 0; j < n_out; ++j)
        cot[j] = normal(t.mem.at(t.ids.at("output:" + std::to_string(j))).data.size(), rng);
    auto loss = [&](interp::Memory mem) {
        forward(mem);
        double s = 0;
        for (size_t j = 0; j < n_out; ++j) s += dot(cot[j], mem.at(t.ids.at("output:" + std::to_string(j))).data);
        return s;
    };

    // The backwards, re-parsed from the emitted module, last launch first, on the forward's values.
    // One shadow buffer per tensor, as in the emitted launcher.
    // As the emitted module: before launch m, copies of the tensors it overwrites that the backward
    // of launch m, or of an earlier one, reads.
    interp::Memory fmem = t.mem;
    std::map<std::pair<size_t, std::string>, int> saved;  // (launch, parameter) -> its copy
    for (size_t m = 0; m < runs.size(); ++m) {
        for (size_t k = 0; k <= m; ++k)
            for (const auto &[param, when] : chain.launches[k].saved_before)
                if (when == m) saved[{k, param}] = fmem.add(interp::Buffer(fmem.at(runs[k].args.at(param).buffer)));
        interp::run(runs[m].fwd, args_for(runs[m].fwd, runs[m].args), runs[m].grid, fmem);
    }
    interp::Memory bmem = fmem;
    std::map<std::string, int> shadow;  // tensor key -> buffer
    for (size_t k = runs.size(); k-- > 0;) {
        const LaunchRun &r = runs[k];
        if (r.derived->specialization.variants.empty()) continue;
        const ad::Backward &bw = pick_variant(r).bwd;
        const int64_t programs = r.grid[0] * r.grid[1] * r.grid[2];
        const int64_t tape_stride = bw.tape ? tape_stride_of(bwd_file, k, r, *bw.tape, fmem, saved) : 1;
        std::vector<frontend::ArgBinding> bind;
        std::map<std::string, interp::ArgValue> args = r.args;  // bmem extends fmem: same buffer ids
        for (size_t i = 0; i < bw.fn.params.size(); ++i) {
            const ir::Param &p = bw.fn.params[i];
            const ad::ParamOrigin &o = bw.origins[i];
            if (o.kind == ad::ParamOrigin::TapeStride) {
                frontend::ArgBinding sb;
                sb.kind = frontend::ArgBinding::Int;
                sb.name = p.name;
                sb.ival = tape_stride;
                bind.push_back(sb);
                args[p.name] = interp::ArgValue::integer(tape_stride);
            } else if (o.kind == ad::ParamOrigin::Tape) {
                bind.push_back(tensor_binding(p.name, ir::DType::F32));
                // Poisoned: the backward must read only what its replay recorded.
                args[p.name] = interp::ArgValue::pointer(
                    bmem.add(interp::Buffer{p.name, ir::DType::F32, std::vector<double>(programs * tape_stride, nan)}));
            } else if (o.kind == ad::ParamOrigin::Primal) {
                auto b = bindings_for(*r.derived, {p.name});
                bind.insert(bind.end(), b.begin(), b.end());
                auto copy = saved.find({k, p.name});
                if (copy != saved.end()) args[p.name] = interp::ArgValue::pointer(copy->second);
            } else {
                bind.push_back(tensor_binding(p.name, bw.fn.type(p.value).elem));
                std::string key = ref_key(r.arg_desc.at(o.primal).at("ref"));
                if (!shadow.count(key)) {
                    interp::Buffer buf{p.name, bind.back().dtype,
                                       std::vector<double>(bmem.at(t.ids.at(key)).data.size(), 0.0)};
                    if (key.rfind("output:", 0) == 0) buf.data = cot.at(static_cast<size_t>(std::stoi(key.substr(7))));
                    for (const auto &[j, i] : chain.aliases)
                        if (key == "input:" + std::to_string(i)) buf.data = cot.at(static_cast<size_t>(j));
                    auto w = bw.writes.find(o.primal);
                    // Uninitialised (poisoned) exactly when the emitted launcher would use torch.empty.
                    if (w != bw.writes.end() && w->second.kind == passes::GradWrite::Store && w->second.covers &&
                        same_layout(layout_of(trace, key),
                                    layout_of(trace, ref_key(r.arg_desc.at(w->second.mirror).at("ref")))))
                        std::fill(buf.data.begin(), buf.data.end(), nan);
                    shadow[key] = bmem.add(std::move(buf));
                }
                args[p.name] = interp::ArgValue::pointer(shadow.at(key));
            }
        }
        auto c = bindings_for(*r.derived, constexpr_names(bw.fn));
        bind.insert(bind.end(), c.begin(), c.end());
        ir::Function bwd = frontend::lower_kernel(bwd_file, bw.fn.name, bind);
        interp::run(bwd, args_for(bwd, args), r.grid, bmem);
    }

    Json entry = Json::object();
    entry.set("method", "finite_differences");
    JsonRef grads = entry.set_array("grads");
    bool all_ok = true;
    for (const auto &[key, buf] : shadow) {
        if (key.rfind("input:", 0) != 0) continue;
        JsonRef desc = inputs[static_cast<size_t>(std::stoi(key.substr(6)))];
        const std::vector<double> &gvec = bmem.at(buf).data;
        JsonRef ge = grads.push_object();
        ge.set("name", desc.at("name").str());
        ge.set_copy("shape", desc.at("shape"));
        size_t unwritten = 0;
        for (double x : gvec) unwritten += std::isnan(x);
        double max_abs = 0, max_rel = 0;
        bool nonfinite = false;  // a NaN compares false with everything: never let it pass
        int xid = t.ids.at(key);
        for (int k = 0; k < 3 && unwritten == 0; ++k) {
            std::vector<double> v = normal(gvec.size(), rng);
            const double h = 1e-6;
            interp::Memory plus = t.mem, minus = t.mem;
            for (size_t e = 0; e < v.size(); ++e) {
                plus.at(xid).data[e] += h * v[e];
                minus.at(xid).data[e] -= h * v[e];
            }
            double fd = (loss(plus) - loss(minus)) / (2 * h);
            double an = dot(gvec, v);
            double err = std::fabs(fd - an);
            if (!std::isfinite(fd) || !std::isfinite(an)) nonfinite = true;
            max_abs = std::max(max_abs, err);
            max_rel = std::max(max_rel, err / std::max({std::fabs(fd), std::fabs(an), 1e-300}));
        }
        bool ok = unwritten == 0 && !nonfinite && (max_rel < 1e-5 || max_abs < 1e-9);
        ge.set("max_abs_err", unwritten || nonfinite ? std::nan("") : max_abs);
        ge.set("max_rel_err", unwritten || nonfinite ? std::nan("") : max_rel);
        ge.set_bool("ok", ok);
        if (unwritten)
            ge.set("message", std::to_string(unwritten) + " gradient elements were never written");
        else if (nonfinite)
            ge.set("message", "the gradient or the finite differences of the forward are not finite");
        all_ok = all_ok && ok;
    }
    entry.set("status", all_ok ? "pass" : "fail");
    if (!all_ok) {
        std::string msg;
        for (size_t i = 0; i < grads.size(); ++i) {
            JsonRef ge = grads[i];
            if (ge.at("ok").boolean()) continue;
            char buf[256];
            std::snprintf(buf, sizeof buf, "gradient of '%s' (shape %s) disagrees: max abs err %.3g, max rel err %.3g",
                          ge.at("name").str().c_str(), ge.at("shape").dump().c_str(), ge.num_or("max_abs_err", NAN),
                          ge.num_or("max_rel_err", NAN));
            msg += (msg.empty() ? "" : "; ") +
                   (ge.has("message") ? "gradient of '" + ge.at("name").str() + "': " + ge.at("message").str()
                                      : std::string(buf));
        }
        entry.set("message", msg);
    }
    std::map<std::string, int> grad_buffer;  // "input:<i>" -> its gradient in bmem
    for (const auto &[key, buf] : shadow)
        if (key.rfind("input:", 0) == 0) grad_buffer[key] = buf;
    std::vector<DotLaunch> dot_launches;
    for (const LaunchRun &r : runs) dot_launches.push_back({r.derived, &r.args, r.grid});
    add_dot_product(
        entry, dot_product_check(
                   {in.kf, bwd_file, trace, chain, dot_launches, fmem, saved, t.ids, cot, bmem, grad_buffer}, rng));
    return entry;
}

}  // namespace

void summarize_verify(Json &report) {
    JsonRef results = report.at("results");
    int64_t total = 0, passed = 0, failed = 0, skipped = 0;
    double max_rel = 0;
    bool any_err = false;
    for (size_t i = 0; i < results.size(); ++i) {
        JsonRef r = results[i];
        std::string s = r.str_or("status", "error");
        ++total;
        if (s == "pass")
            ++passed;
        else if (s == "skipped")
            ++skipped;
        else
            ++failed;
        JsonRef grads = r.get("grads");
        for (size_t k = 0; k < grads.size(); ++k) {
            JsonRef e = grads[k].get("max_rel_err");
            if (e.valid() && e.is_number()) {
                max_rel = std::max(max_rel, e.num());
                any_err = true;
            }
        }
    }
    report.set_bool("passed", failed == 0 && passed > 0);
    JsonRef s = report.set_object("summary");
    s.set("total", total);
    s.set("passed", passed);
    s.set("failed", failed);
    s.set("skipped", skipped);
    if (any_err)
        s.set("max_rel_err", max_rel);
    else
        s.set_null("max_rel_err");
}

Json cpu_verify(const CpuVerifyInput &in, JsonRef dims_list, Worker &worker, const ProgressFn &progress) {
    ast::File bwd_file = frontend::parse_source(in.backward_path, in.backward_source);
    std::mt19937_64 rng(in.seed ? in.seed : 0x7ad);
    Json report = Json::object();
    report.set("kind", "verify");
    report.set("mode", "cpu");
    report.set_null("device");
    JsonRef results = report.set_array("results");
    for (size_t i = 0; i < dims_list.size(); ++i) {
        Json dims = Json::copy(dims_list[i]);
        dims.set("dtype", "float32");
        std::string label;
        for (const std::string &k : dims.keys())
            if (k != "required")
                label += " " + k + "=" + (dims.at(k).is_string() ? dims.at(k).str() : dims.at(k).dump());
        if (progress && !progress(std::to_string(i + 1) + "/" + std::to_string(dims_list.size()) + label,
                                  double(i) / dims_list.size()))
            fail(TAD_ERR_CANCELLED, "verify: cancelled");
        Json args = Json::object();
        args.set("file", in.import_path);
        args.set("stub", in.kf.stub.name);
        args.set_copy("dims", dims);
        Json entry = Json::object();
        try {
            // Size first (no data), so that large SWEEP entries are skipped without shipping them.
            args.set_bool("with_data", false);
            Json shape_only = worker.request("trace", Json::copy(args));
            int64_t elements = 0;
            for (size_t k = 0; k < shape_only.at("inputs").size(); ++k) {
                JsonRef d = shape_only.at("inputs")[k];
                if (d.at("kind").str() != "tensor") continue;
                int64_t n = 1;
                for (size_t s = 0; s < d.at("shape").size(); ++s) n *= d.at("shape")[s].integer();
                elements += n;
            }
            if (elements > in.max_elements) {
                entry.set("status", "skipped");
                entry.set("message", std::to_string(elements) +
                                         " input elements exceed the CPU interpreter's limit of " +
                                         std::to_string(in.max_elements));
            } else {
                args.set_bool("with_data", true);
                entry = check_entry(in, bwd_file, worker.request("trace", std::move(args)), rng);
            }
        } catch (const WorkerError &e) {
            // A broken environment fails the whole verification; a failing user file fails its case.
            if (e.kind() == "import" || e.kind() == "no_gpu") throw;
            entry.set("status", "error");
            entry.set("message", e.what());
        } catch (const Error &e) {
            if (e.status() == TAD_ERR_CANCELLED || e.status() == TAD_ERR_TIMEOUT || e.status() == TAD_ERR_WORKER) throw;
            entry.set("status", "error");
            entry.set("message", e.what());
        }
        entry.set_copy("dims", dims);
        entry.set("dtype", "float64");
        results.push_copy(entry);
    }
    summarize_verify(report);
    return report;
}

}  // namespace tad
