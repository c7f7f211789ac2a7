#include "driver/launch_nodes.h"

#include <algorithm>
#include <set>

#include "driver/pipeline.h"
#include "driver/residuals.h"
#include "emit/emit.h"
#include "flow/trace.h"
#include "frontend/residual_stores.h"
#include "passes/passes.h"
#include "support/error.h"

namespace tad::driver {

namespace {

bool is_tensor_arg(JsonRef a) {
    const std::string kind = a.str_or("kind", "");
    return kind == "tensor" || kind == "tensor_desc";
}

// A buffer tad added for a residual the kernel stores (driver/residuals.h): the node's temporary,
// not a view of the stub's.
bool residual_arg(JsonRef a) {
    return is_tensor_arg(a) && a.at("name").str().rfind(frontend::kResidualPrefix, 0) == 0 && a.at("ref").has("temp");
}

bool floating(const std::string &dtype) { return dtype.rfind("float", 0) == 0 || dtype.rfind("bfloat", 0) == 0; }

std::string launch_label(const frontend::KernelFile &kf, size_t k, JsonRef launch) {
    return kf.file.path + ": stub '" + kf.stub.name + "': launch " + std::to_string(k) + " of '" +
           launch.at("kernel").str() + "' ";
}

// The kernel parameters a launch stores to or adds to.
std::set<std::string> written_params(const frontend::KernelFile &kf, JsonRef launch) {
    passes::MemoryParams mem =
        passes::memory_params(frontend::lower_kernel(kf, launch.at("kernel").str(), flow::bindings_of(kf, launch)));
    std::set<std::string> out = mem.stored;
    out.insert(mem.accumulated.begin(), mem.accumulated.end());
    return out;
}

// A view one or more tensor parameters of a launch get: one input of the one-launch stub.
struct View {
    JsonRef arg;  // the first argument that gets it
    std::vector<std::string> params;
    bool requires_grad = false;
};

bool same_view(JsonRef a, JsonRef b) {
    return a.at("ref").dump() == b.at("ref").dump() && a.int_or("offset", 0) == b.int_or("offset", 0) &&
           a.at("view_shape").dump() == b.at("view_shape").dump() &&
           a.at("view_stride").dump() == b.at("view_stride").dump() && a.str_or("dtype", "") == b.str_or("dtype", "");
}

std::vector<View> views_of(const frontend::KernelFile &kf, JsonRef launch, size_t k,
                           const std::set<std::string> &written) {
    std::vector<View> out;
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        if (!is_tensor_arg(a) || residual_arg(a)) continue;
        const std::string name = a.at("name").str();
        if (!a.has("view_shape"))
            fail(TAD_ERR_INTERNAL, launch_label(kf, k, launch) + "argument '" + name +
                                       "': the trace has no view layout (it was not taken with autograd)");
        View *same = nullptr;
        for (View &v : out) {
            if (same_view(v.arg, a)) {
                same = &v;
                break;
            }
            bool writes = written.count(name) > 0;
            for (const std::string &p : v.params) writes = writes || written.count(p);
            if (v.arg.at("ref").dump() == a.at("ref").dump() && writes)
                fail(TAD_ERR_UNSUPPORTED, launch_label(kf, k, launch) + "gets two different views of one buffer, '" +
                                              v.params.front() + "' and '" + name +
                                              "', and writes one of them; as its own autograd node, a launch "
                                              "whose stub has torch code on grad-input values must get one view per "
                                              "buffer it writes (index within the kernel instead)");
        }
        if (!same) same = &out.emplace_back(View{a, {}, false});
        same->params.push_back(name);
        same->requires_grad =
            same->requires_grad || (a.bool_or("requires_grad", false) && floating(a.at("dtype").str()));
    }
    return out;
}

void set_layout(JsonRef entry, JsonRef arg) {
    entry.set("kind", "tensor");
    entry.set("dtype", arg.at("dtype").str());
    entry.set_copy("shape", arg.at("view_shape"));
    entry.set_copy("stride", arg.at("view_stride"));
}

// The one-launch stub of launch k: its name, params (one per view), grad inputs (the views that
// require grad in any trace), outputs (the views it writes).
struct OneLaunch {
    frontend::KernelFile file;
    std::vector<std::string> written;
    std::vector<Json> traces;
};

size_t view_of(const std::vector<View> &views, const std::string &param) {
    for (size_t i = 0; i < views.size(); ++i)
        if (std::find(views[i].params.begin(), views[i].params.end(), param) != views[i].params.end()) return i;
    return views.size();
}

}  // namespace

bool has_torch_code(JsonRef trace) {
    JsonRef outs = trace.at("outputs");
    for (size_t j = 0; j < outs.size(); ++j)
        if (outs[j].has("torch")) return true;
    JsonRef launches = trace.at("launches");
    for (size_t k = 0; k < launches.size(); ++k)
        for (size_t i = 0; i < launches[k].at("args").size(); ++i)
            if (launches[k].at("args")[i].has("torch")) return true;
    return false;
}

Json one_launch_trace(const frontend::KernelFile &kf, JsonRef trace, size_t k, const std::string &stub) {
    JsonRef launch = trace.at("launches")[k];
    const std::set<std::string> written = written_params(kf, launch);
    const std::vector<View> views = views_of(kf, launch, k, written);
    Json t = Json::object();
    t.set("stub", stub);
    t.set_bool("unsaved_inputs", true);  // the node module passes the views it writes as layouts only
    if (trace.has("dims")) t.set_copy("dims", trace.at("dims"));
    JsonRef inputs = t.set_array("inputs"), outputs = t.set_array("outputs");
    for (size_t i = 0; i < views.size(); ++i) {
        JsonRef in = inputs.push_object();
        in.set("name", views[i].params.front());
        in.set("index", static_cast<int64_t>(i));
        set_layout(in, views[i].arg);
        in.set_bool("requires_grad", views[i].requires_grad);
        bool writes = false;
        for (const std::string &p : views[i].params) writes = writes || written.count(p);
        if (!writes) continue;
        JsonRef out = outputs.push_object();
        out.set("index", static_cast<int64_t>(outputs.size() - 1));
        out.set("input", static_cast<int64_t>(i));
        set_layout(out, views[i].arg);
    }
    JsonRef temps = t.set_array("temps");
    JsonRef l = t.set_array("launches").push_object();
    for (const char *key : {"kernel", "grid", "options"})
        if (launch.has(key)) l.set_copy(key, launch.at(key));
    JsonRef args = l.set_array("args");
    for (size_t i = 0; i < launch.at("args").size(); ++i) {
        JsonRef a = launch.at("args")[i];
        args.push_copy(a);
        JsonRef copy = args[args.size() - 1];
        copy.remove("torch");
        if (!is_tensor_arg(a)) continue;
        copy.remove("ref");
        copy.remove("offset");
        copy.set("offset", static_cast<int64_t>(0));
        if (residual_arg(a)) {  // the node's temporaries, in parameter order (the launcher's too)
            const int64_t id = static_cast<int64_t>(temps.size());
            temps.push_copy(trace.at("temps")[static_cast<size_t>(a.at("ref").at("temp").integer())]);
            temps[temps.size() - 1].set("id", id);
            copy.set_object("ref").set("temp", id);
            continue;
        }
        copy.set_object("ref").set("input", static_cast<int64_t>(view_of(views, a.at("name").str())));
    }
    return t;
}

namespace {

// A launch of a traced call: trace and launch index.
struct Occurrence {
    JsonRef trace;
    size_t k;
};

// What decides a launch's node: its kernel, the views its tensor parameters get (each named by the
// first parameter that gets it) and which of them it writes. Launches alike in these, in any trace
// and at any position, share one node, so a stub that launches other sequences for other dims is
// served by the nodes of the launches it makes.
struct Signature {
    std::string kernel;
    std::vector<std::string> params, written;
    bool operator==(const Signature &o) const {
        return kernel == o.kernel && params == o.params && written == o.written;
    }
};

Signature signature_of(const frontend::KernelFile &kf, const Occurrence &o, std::vector<std::string> *requiring) {
    Json t = one_launch_trace(kf, o.trace, o.k, kf.stub.name);
    Signature s{o.trace.at("launches")[o.k].at("kernel").str(), {}, {}};
    for (size_t i = 0; i < t.at("inputs").size(); ++i) {
        s.params.push_back(t.at("inputs")[i].at("name").str());
        if (requiring && t.at("inputs")[i].bool_or("requires_grad", false)) requiring->push_back(s.params.back());
    }
    for (size_t j = 0; j < t.at("outputs").size(); ++j)
        s.written.push_back(s.params.at(static_cast<size_t>(t.at("outputs")[j].at("input").integer())));
    return s;
}

// The launches of one signature as a one-launch stub named `name`: the same views in each, grad
// inputs those that require grad in any.
OneLaunch one_launch(const frontend::KernelFile &kf, const std::vector<Occurrence> &launches, const std::string &name) {
    OneLaunch o{kf, {}, {}};
    frontend::StubInfo &stub = o.file.stub;
    stub.name = name;
    stub.launched = {launches.front().trace.at("launches")[launches.front().k].at("kernel").str()};
    stub.grad_inputs.clear();
    for (const Occurrence &l : launches) {
        std::vector<std::string> requiring;
        const Signature s = signature_of(kf, l, &requiring);
        stub.params = s.params;
        o.written = s.written;
        for (const std::string &p : requiring)
            if (std::find(stub.grad_inputs.begin(), stub.grad_inputs.end(), p) == stub.grad_inputs.end())
                stub.grad_inputs.push_back(p);
        o.traces.push_back(one_launch_trace(kf, l.trace, l.k, name));
    }
    std::vector<std::string> ordered;  // grad inputs in parameter order
    for (const std::string &p : stub.params)
        if (std::find(stub.grad_inputs.begin(), stub.grad_inputs.end(), p) != stub.grad_inputs.end())
            ordered.push_back(p);
    stub.grad_inputs = ordered;
    return o;
}

// `derived` gets the chains the node's backward was derived from.
emit::LaunchNode node_of(const frontend::KernelFile &kf, const std::vector<Occurrence> &launches, size_t g,
                         ad::LoopPolicy loops, std::string *explanation, std::vector<Chain> *derived) {
    const std::string tag = "_launch" + std::to_string(g);
    OneLaunch o = one_launch(kf, launches, kf.stub.name + tag);
    emit::LaunchNode n{o.file, o.file.stub.launched.front(), o.written, std::nullopt};
    if (o.file.stub.grad_inputs.empty()) return n;  // nothing it gets requires grad: no node
    std::vector<Chain> chains;
    for (const Json &t : o.traces) chains.push_back(derive_chain(o.file, t, loops, tag));
    *explanation += explain(chains);
    n.backward = plan::backward(merge(o.file, chains, o.traces.front()));
    derived->insert(derived->end(), chains.begin(), chains.end());
    return n;
}

// The launches of every trace grouped by signature, in order of first appearance.
std::vector<std::vector<Occurrence>> by_signature(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces) {
    std::vector<Signature> seen;
    std::vector<std::vector<Occurrence>> groups;
    for (JsonRef trace : traces)
        for (size_t k = 0; k < trace.at("launches").size(); ++k) {
            const Signature s = signature_of(kf, {trace, k}, nullptr);
            const size_t g = static_cast<size_t>(std::find(seen.begin(), seen.end(), s) - seen.begin());
            if (g == seen.size()) {
                seen.push_back(s);
                groups.emplace_back();
            }
            groups[g].push_back({trace, k});
        }
    return groups;
}

struct Nodes {
    std::vector<emit::LaunchNode> nodes;
    std::vector<Chain> chains;  // every node's
    std::string explanation;
};

// A node per launch signature among `traces`.
Nodes nodes_of(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces, ad::LoopPolicy loops) {
    Nodes n;
    const std::vector<std::vector<Occurrence>> groups = by_signature(kf, traces);
    for (size_t g = 0; g < groups.size(); ++g)
        n.nodes.push_back(node_of(kf, groups[g], g, loops, &n.explanation, &n.chains));
    return n;
}

}  // namespace

std::string emit_launch_node_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                    ad::LoopPolicy loops, std::string *explanation) {
    JsonRef first = traces.front();
    emit::NodeModule m;
    Nodes n = nodes_of(kf, traces, loops);
    // Where the forward stores too little, the nodes of the file with residual stores
    // (driver/residuals.h): their buffers are the nodes' temporaries, no views of the stub's.
    std::optional<Nodes> with;
    const Derive derive = [&](const frontend::KernelFile &f, const std::vector<JsonRef> &ts) {
        with = nodes_of(f, ts, loops);
        return with->chains;
    };
    std::string saved;
    std::optional<Residuals> r = save_residuals(kf, traces, n.chains, derive, &saved);
    if (r) n = std::move(*with);
    const frontend::KernelFile &file = r ? r->kf : kf;
    if (explanation) *explanation = n.explanation + (r ? r->report : saved);
    m.nodes = std::move(n.nodes);
    const bool any = std::any_of(m.nodes.begin(), m.nodes.end(), [](const emit::LaunchNode &x) { return x.backward; });
    if (!any)
        fail(TAD_ERR_INVALID_ARGUMENT, kf.file.path + ": no launch of stub '" + kf.stub.name +
                                           "' gets a tensor that requires grad, so none has a backward");
    m.num_outputs = first.at("outputs").size();
    for (JsonRef trace : traces) {
        JsonRef outs = trace.at("outputs");
        for (size_t j = 0; j < outs.size(); ++j)
            if (outs[j].has("input"))
                m.dirty.push_back(kf.stub.params.at(static_cast<size_t>(outs[j].at("input").integer())));
    }
    std::sort(m.dirty.begin(), m.dirty.end());
    m.dirty.erase(std::unique(m.dirty.begin(), m.dirty.end()), m.dirty.end());
    const std::string module = emit::emit_node_module(
        file, m,
        has_torch_code(first) ? "forward mode is not generated for a stub whose torch code computes from its grad "
                                "inputs (each launch is its own autograd node)"
                              : "forward mode is not generated for a stub that launches other kernels for other "
                                "dims (each launch is its own autograd node)");
    emit::check_module(file, module);  // never hand out a module that does not parse or reads unbound names
    return module;
}

}  // namespace tad::driver
