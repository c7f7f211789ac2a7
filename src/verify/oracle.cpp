#include "verify/oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>

#include "interp/interp.h"
#include "passes/passes.h"
#include "support/base64.h"
#include "support/error.h"
#include "verify/run_plan.h"

namespace tad::verify {

namespace {

using plan::TensorRef;

const double kNaN = std::nan("");
// The poison of a gradient buffer the launcher leaves uninitialised: a NaN with a payload of its own
// (not interp::undefined_lane's tag), so that a gradient computed as NaN (0 * inf) is not reported
// as never written.
constexpr uint64_t kUnwrittenBits = 0x7ff8000000000000ULL | (0x2dULL << 44) | 0xbadULL;

double unwritten_poison() {
    double x;
    std::memcpy(&x, &kUnwrittenBits, sizeof x);
    return x;
}

bool never_written(double x) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits == kUnwrittenBits;
}
// The dot-product test's sides run in float64 with no finite differences: they agree up to rounding.
constexpr double kDotRtol = 1e-9;

// "input:i" / "output:j" / "temp:k": how a trace record names a tensor (and the order checks visit them).
std::string key_of(TensorRef t) {
    static const char *const kinds[] = {"input:", "output:", "temp:"};
    return kinds[t.kind] + std::to_string(t.index);
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

int64_t storage_size(JsonRef shape, JsonRef stride) {
    int64_t n = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i].integer() == 0) return 0;
        n += (shape[i].integer() - 1) * stride[i].integer();
    }
    return n;
}

// The trace's description (dtype, shape, stride) of a tensor.
JsonRef layout_of(JsonRef trace, TensorRef t) {
    static const char *const lists[] = {"inputs", "outputs", "temps"};
    return trace.at(lists[t.kind])[static_cast<size_t>(t.index)];
}

std::vector<int64_t> ints(JsonRef list) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < list.size(); ++i) out.push_back(list[i].integer());
    return out;
}

// Whether plain stores with coverage `c` reach every element of a tensor with this layout on this
// launch: the emitted launcher then leaves the buffer uninitialised.
bool covered(const passes::Coverage &c, const Recorded &launch, JsonRef layout) {
    return plan::covers(
        c, [&](const std::string &n, int64_t *v) { return symbol_value(launch, n, v); }, ints(layout.at("shape")),
        ints(layout.at("stride")));
}

// The call's tensors on the interpreter, by key.
struct Tensors {
    interp::Memory mem;
    std::map<std::string, int> ids;
    size_t size(TensorRef t) const { return mem.buffers.at(static_cast<size_t>(ids.at(key_of(t)))).data.size(); }
};

int add_tensor(Tensors &t, const std::string &key, const std::string &name, JsonRef desc, double fill) {
    ir::DType dt = ir::DType::F32;
    ir::dtype_from_torch(desc.at("dtype").str(), &dt);
    interp::Buffer b{name, dt,
                     std::vector<double>(static_cast<size_t>(storage_size(desc.at("shape"), desc.at("stride"))), fill)};
    return t.ids[key] = t.mem.add(std::move(b));
}

std::vector<double> decode(JsonRef data, const std::string &key, size_t size) {
    std::vector<double> values = base64::decode_float64(data.str());
    if (values.size() != size)
        fail(TAD_ERR_INVALID_ARGUMENT,
             "trace record: data of " + key + " has " + std::to_string(values.size()) + " values");
    return values;
}

// Inputs hold the trace's data; outputs (or the inputs they are) and temporaries start undefined.
Tensors make_tensors(JsonRef trace, const std::map<int, int> &aliases) {
    Tensors t;
    JsonRef inputs = trace.at("inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
        JsonRef d = inputs[i];
        if (d.at("kind").str() != "tensor") continue;
        std::string key = "input:" + std::to_string(d.at("index").integer());
        int id = add_tensor(t, key, d.at("name").str(), d, 0);
        t.mem.at(id).data = decode(trace.at("data").at(key), key, t.mem.at(id).data.size());
    }
    for (size_t j = 0; j < trace.at("outputs").size(); ++j) {
        auto alias = aliases.find(static_cast<int>(j));
        if (trace.at("outputs")[j].at("kind").str() != "tensor") continue;  // `return y, None`: no values
        if (alias != aliases.end())
            t.ids["output:" + std::to_string(j)] = t.ids.at("input:" + std::to_string(alias->second));
        else
            add_tensor(t, "output:" + std::to_string(j), "output " + std::to_string(j), trace.at("outputs")[j], kNaN);
    }
    for (size_t k = 0; k < trace.at("temps").size(); ++k)
        add_tensor(t, "temp:" + std::to_string(k), "temp " + std::to_string(k), trace.at("temps")[k], kNaN);
    return t;
}

// Outputs and temps start as the stub left them before their first launch (torch.zeros for an
// accumulator or a partly written output, a table the stub filled), as recorded in the trace. A
// buffer the trace has no contents for stays NaN, and its first launch must not read it.
void load_prior_contents(const std::vector<TracedLaunch> &launches, const std::vector<ir::Function> &kernels,
                         JsonRef trace, Tensors &t) {
    std::set<std::string> touched;
    for (size_t k = 0; k < launches.size(); ++k) {
        passes::MemoryParams m = passes::memory_params(kernels[k]);
        for (const auto &[param, ref] : launches[k].tensors) {
            if (ref.kind == TensorRef::Input) continue;
            std::string key = key_of(ref);
            if (!touched.insert(key).second) continue;
            JsonRef data = trace.at("data").get(key);
            if (!data.valid()) {
                if (m.loaded.count(param) || m.accumulated.count(param))
                    fail(TAD_ERR_UNSUPPORTED, "kernel '" + launches[k].kernel + "' reads " + key +
                                                  " before writing it, and the trace has no record of its contents");
                continue;
            }
            t.mem.at(t.ids.at(key)).data = decode(data, key, t.size(ref));
        }
    }
}

std::array<int64_t, 3> grid_of(JsonRef launch) {
    std::array<int64_t, 3> g{1, 1, 1};
    JsonRef grid = launch.at("grid");
    for (size_t i = 0; i < grid.size() && i < 3; ++i) g[i] = grid[i].integer();
    return g;
}

// Each launch's arguments bound to the call's buffers.
std::vector<Recorded> recorded(const OracleInput &in, const std::vector<ir::Function> &kernels, const Tensors &t) {
    std::vector<Recorded> out;
    for (size_t k = 0; k < in.launches.size(); ++k) {
        const TracedLaunch &l = in.launches[k];
        Recorded r{l.bindings, {}, grid_of(in.trace.at("launches")[k]), kernels[k].constexprs};
        for (const frontend::ArgBinding &b : l.bindings) {
            interp::ArgValue a{};
            if (b.kind == frontend::ArgBinding::Tensor)
                a = interp::ArgValue::pointer(t.ids.at(key_of(l.tensors.at(b.name))));
            else if (b.kind == frontend::ArgBinding::Float)
                a = interp::ArgValue::real(b.fval);
            else
                a = interp::ArgValue::integer(b.ival);
            r.args[b.name] = a;
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<plan::Snapshot> all_snapshots(const OracleInput &in) {
    std::vector<plan::Snapshot> s = in.backward.snapshots;
    if (in.tangent) s.insert(s.end(), in.tangent->snapshots.begin(), in.tangent->snapshots.end());
    return s;
}

// What the oracle needs across its checks of one call.
struct Run {
    const OracleInput &in;
    Tensors t;  // before the forward
    std::vector<ir::Function> kernels;  // the forward launches, as written
    std::vector<Recorded> launches;
    std::vector<std::vector<double>> cot;  // u, per output (its storage)
    interp::Memory fmem;  // after the forward
    SavedCopies saved;
    interp::Memory bmem;  // after the backward
    std::map<std::string, int> grads;  // "input:i" -> its gradient in bmem

    bool grad_input(const std::string &key) const {
        if (key.rfind("input:", 0) != 0) return false;
        const int i = std::stoi(key.substr(6));
        return std::count(in.backward.grad_inputs.begin(), in.backward.grad_inputs.end(), i) > 0;
    }

    // L(x) = Σ_j <u_j, y_j(x)> on the forward from `mem`.
    double loss(interp::Memory mem) const {
        for (size_t k = 0; k < launches.size(); ++k) {
            std::vector<interp::ArgValue> args;
            for (const ir::Param &p : kernels[k].params) args.push_back(launches[k].args.at(p.name));
            interp::run(kernels[k], args, launches[k].grid, mem);
        }
        double s = 0;
        for (size_t j = 0; j < cot.size(); ++j)
            if (!cot[j].empty()) s += dot(cot[j], mem.at(t.ids.at("output:" + std::to_string(j))).data);
        return s;
    }
};

// The backward plan on the forward's values: one shadow per tensor, as the emitted launcher makes it.
void run_backward(Run &r) {
    r.bmem = r.fmem;
    const OracleInput &in = r.in;
    PlanRunner runner(in.module, r.launches, r.saved, r.bmem, [&](const plan::Alloc &a) {
        if (a.init == plan::Init::Absent) return -1;
        std::vector<double> data(r.t.size(a.tensor), 0.0);
        if (a.init == plan::Init::Cotangent || a.init == plan::Init::Incoming)
            data = r.cot.at(static_cast<size_t>(a.index));
        // A Covered shadow is poisoned by the runner where the launcher leaves it uninitialised.
        return r.bmem.add(interp::Buffer{"d" + key_of(a.tensor), ir::DType::F32, std::move(data)});
    });
    runner.poison_covered(
        [&](const passes::Coverage &c, const Recorded &launch, const TensorRef &t) {
            const bool launched = std::all_of(launch.grid.begin(), launch.grid.end(), [](int64_t n) { return n > 0; });
            return launched && covered(c, launch, layout_of(in.trace, t));  // an empty grid writes no row
        },
        unwritten_poison());
    runner.run(in.backward);
    for (const auto &[t, id] : runner.shadows())
        if (t.kind == TensorRef::Input) r.grads[key_of(t)] = id;
}

// Where an output holds a lane computed from a masked-off load without `other` (its file:line:col,
// with the output), or "": that load's undefined lanes reach what the stub returns.
std::string undefined_output(const Run &r) {
    for (size_t j = 0; j < r.cot.size(); ++j) {
        if (r.cot[j].empty()) continue;
        for (double x : r.fmem.buffers.at(static_cast<size_t>(r.t.ids.at("output:" + std::to_string(j)))).data) {
            ir::SrcLoc loc;
            if (interp::undefined_origin(x, &loc))
                return where(r.in.kf.file.path, loc.line, loc.col) + ": the masked-off lanes of this tl.load, which " +
                       "has no other=, reach output " + std::to_string(j) +
                       " (Triton leaves them undefined, e.g. in a reduction); give the load other= (e.g. other=0.0)";
        }
    }
    return "";
}

// Central differences: the first step, then smaller ones where it disagrees (check_gradient).
constexpr double kSteps[] = {1e-6, 1e-7, 1e-8};
constexpr double kFdRtol = 1e-5, kFdAtol = 1e-9;

bool agrees(double err, double fd, double an) {
    return err < kFdAtol || err / std::max({std::fabs(fd), std::fabs(an), 1e-300}) < kFdRtol;
}

// (loss(x + h v) - loss(x - h v)) / 2h for input buffer `xid`.
double central_difference(Run &r, int xid, const std::vector<double> &v, double h) {
    interp::Memory plus = r.t.mem, minus = r.t.mem;
    for (size_t e = 0; e < v.size(); ++e) {
        plus.at(xid).data[e] += h * v[e];
        minus.at(xid).data[e] -= h * v[e];
    }
    return (r.loss(plus) - r.loss(minus)) / (2 * h);
}

// One gradient against central differences of the loss along three random directions.
Json check_gradient(Run &r, const std::string &key, int buffer, std::mt19937_64 &rng) {
    JsonRef desc = r.in.trace.at("inputs")[static_cast<size_t>(std::stoi(key.substr(6)))];
    const std::vector<double> &g = r.bmem.at(buffer).data;
    Json ge = Json::object();
    ge.set("name", desc.at("name").str());
    ge.set_copy("shape", desc.at("shape"));
    size_t unwritten = 0;
    for (double x : g) unwritten += never_written(x);
    double max_abs = 0, max_rel = 0;
    bool nonfinite = false;  // a NaN compares false with everything: never let it pass
    const int xid = r.t.ids.at(key);
    for (int k = 0; k < 3 && unwritten == 0; ++k) {
        const std::vector<double> v = normal(g.size(), rng);
        const double an = dot(g, v);
        // A step that crosses a kink (relu's 0 at some element of a large input) measures the
        // kink, not the derivative: a smaller step stops crossing it, where a wrong gradient
        // stays wrong at every step. The direction's best agreement counts.
        double err = INFINITY, fd = 0;
        for (double h : kSteps) {
            const double f = central_difference(r, xid, v, h);
            if (!std::isfinite(f) || !std::isfinite(an)) nonfinite = true;
            if (std::fabs(f - an) < err) err = std::fabs(f - an), fd = f;
            if (agrees(err, fd, an)) break;
        }
        max_abs = std::max(max_abs, err);
        max_rel = std::max(max_rel, err / std::max({std::fabs(fd), std::fabs(an), 1e-300}));
    }
    bool ok = unwritten == 0 && !nonfinite && (max_rel < kFdRtol || max_abs < kFdAtol);
    ge.set("max_abs_err", unwritten || nonfinite ? kNaN : max_abs);
    ge.set("max_rel_err", unwritten || nonfinite ? kNaN : max_rel);
    ge.set_bool("ok", ok);
    if (unwritten)
        ge.set("message", std::to_string(unwritten) + " gradient elements were never written");
    else if (nonfinite && !undefined_output(r).empty())
        ge.set("message", undefined_output(r));
    else if (nonfinite)
        ge.set("message", "the gradient or the finite differences of the forward are not finite");
    return ge;
}

std::string failure_message(JsonRef grads) {
    std::string msg;
    for (size_t i = 0; i < grads.size(); ++i) {
        JsonRef ge = grads[i];
        if (ge.at("ok").boolean()) continue;
        char buf[256];
        std::snprintf(buf, sizeof buf, "gradient of '%s' (shape %s) disagrees: max abs err %.3g, max rel err %.3g",
                      ge.at("name").str().c_str(), ge.at("shape").dump().c_str(), ge.num_or("max_abs_err", NAN),
                      ge.num_or("max_rel_err", NAN));
        msg += (msg.empty() ? "" : "; ") + (ge.has("message")
                                                ? "gradient of '" + ge.at("name").str() + "': " + ge.at("message").str()
                                                : std::string(buf));
    }
    return msg;
}

Json finite_differences(Run &r, std::mt19937_64 &rng) {
    Json entry = Json::object();
    entry.set("method", "finite_differences");
    JsonRef grads = entry.set_array("grads");
    bool all_ok = true;
    for (const auto &[key, id] : r.grads) {
        Json ge = check_gradient(r, key, id, rng);
        all_ok = all_ok && ge.at("ok").boolean();
        grads.push_copy(ge);
    }
    entry.set("status", all_ok ? "pass" : "fail");
    if (!all_ok) entry.set("message", failure_message(grads));
    return entry;
}

bool defines(const ast::File &file, const std::string &name) {
    for (const auto &s : file.module->list("body"))
        if (s->is("FunctionDef") && s->str("name") == name) return true;
    return false;
}

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

// <J v, u> from the tangent plan against <v, Jᵀ u> from the backward's gradients. v is drawn for
// GRAD_INPUTS only: a stub input that is not one (an `out=` buffer) starts at a zero tangent.
Json dot_product(Run &r, std::mt19937_64 &rng) {
    Json out = Json::object();
    std::string why = r.in.tangent ? "" : r.in.tangent_unsupported;
    if (r.in.tangent)
        for (const plan::Kernel &k : r.in.tangent->kernels)
            if (why.empty() && !defines(r.in.module, k.fn.name))
                why = "the emitted module has no tangent kernel '" + k.fn.name + "'";
    if (!why.empty()) {
        out.set("skipped", why);
        return out;
    }
    std::normal_distribution<double> normal(0.0, 1.0);
    std::map<std::string, std::vector<double>> v;  // "input:<i>" -> v_i
    auto v_of = [&](const std::string &key, size_t n) -> const std::vector<double> & {
        std::vector<double> &vi = v[key];
        if (vi.empty())
            for (size_t e = 0; e < n; ++e) vi.push_back(normal(rng));
        return vi;
    };
    interp::Memory mem = r.fmem;
    PlanRunner runner(r.in.module, r.launches, r.saved, mem, [&](const plan::Alloc &a) {
        std::vector<double> data(r.t.size(a.tensor), 0.0);
        if (a.init == plan::Init::Tangent && a.index >= 0) data = v_of(key_of(a.tensor), data.size());
        return mem.add(interp::Buffer{"t" + key_of(a.tensor), ir::DType::F32, std::move(data)});
    });
    runner.run(*r.in.tangent);
    Sum a, b;
    for (size_t j = 0; j < r.in.tangent->results.size(); ++j) {
        const plan::Result &res = r.in.tangent->results[j];
        if (!res.present) continue;
        const std::vector<double> &u = r.cot.at(j), &tj = mem.at(runner.shadows().at(res.tensor)).data;
        for (size_t e = 0; e < u.size(); ++e) a.add(u[e], tj[e]);
    }
    // A gradient input the tangent kernels do not read still gets a v: its Jᵀu must then be zero.
    for (const auto &[key, id] : r.grads) {
        if (!r.grad_input(key)) continue;
        const std::vector<double> &g = r.bmem.buffers.at(static_cast<size_t>(id)).data;
        const std::vector<double> &vi = v_of(key, g.size());
        for (size_t e = 0; e < g.size(); ++e) b.add(vi[e], g[e]);
    }
    double scale =
        std::max({std::fabs(a.value), std::fabs(b.value), std::sqrt(a.squares), std::sqrt(b.squares), 1e-300});
    double rel = std::fabs(a.value - b.value) / scale;
    out.set("jvp", a.value);
    out.set("vjp", b.value);
    out.set("rel_err", rel);
    out.set("rtol", kDotRtol);
    out.set_bool("ok", rel <= kDotRtol);
    return out;
}

// Puts the dot-product check into the entry; a failed check fails the entry, with a message.
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

}  // namespace

Json check_call(const OracleInput &in, std::mt19937_64 &rng) {
    Run r{in, make_tensors(in.trace, in.backward.aliases), {}, {}, {}, {}, {}, {}, {}};
    for (const TracedLaunch &l : in.launches) r.kernels.push_back(frontend::lower_kernel(in.kf, l.kernel, l.bindings));
    load_prior_contents(in.launches, r.kernels, in.trace, r.t);
    r.launches = recorded(in, r.kernels, r.t);
    for (size_t j = 0; j < in.trace.at("outputs").size(); ++j)
        r.cot.push_back(r.t.ids.count("output:" + std::to_string(j))
                            ? normal(r.t.size({TensorRef::Output, static_cast<int>(j)}), rng)
                            : std::vector<double>{});
    r.fmem = r.t.mem;
    r.saved = run_forward(r.kernels, r.launches, all_snapshots(in), r.fmem);
    run_backward(r);
    Json entry = finite_differences(r, rng);
    add_dot_product(entry, dot_product(r, rng));
    return entry;
}

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

}  // namespace tad::verify
