#include "capi/pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ad/reverse.h"
#include "passes/passes.h"
#include "support/error.h"

namespace tad {

std::vector<frontend::ArgBinding> bindings_of(const frontend::KernelFile &kf, JsonRef launch) {
    std::vector<frontend::ArgBinding> out;
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        frontend::ArgBinding b;
        b.name = a.at("name").str();
        std::string kind = a.at("kind").str();
        if (kind == "tensor" || kind == "tensor_desc") {
            b.kind = frontend::ArgBinding::Tensor;
            if (!ir::dtype_from_torch(a.at("dtype").str(), &b.dtype))
                fail(TAD_ERR_UNSUPPORTED,
                     kf.file.path + ": kernel argument '" + b.name + "' has unsupported dtype " + a.at("dtype").str());
            if (a.int_or("offset", 0) != 0)
                fail(TAD_ERR_UNSUPPORTED,
                     kf.file.path + ": kernel argument '" + b.name +
                         "' points into the middle of a stub tensor; offset views are not supported yet");
            if (kind == "tensor_desc") {
                // A host-side TensorDescriptor: its base tensor, plus its shape, strides and block as scalars.
                auto ints = [&](const char *key) {
                    std::vector<int64_t> v;
                    for (size_t d = 0; d < a.at(key).size(); ++d) v.push_back(a.at(key)[d].integer());
                    return v;
                };
                b.desc_block = ints("block_shape");
                b.desc_padding = a.str_or("padding", "zero");
                out.push_back(b);
                for (const frontend::ArgBinding &s :
                     frontend::tensor_desc_scalars(b.name, ints("shape"), ints("strides"), b.desc_block))
                    out.push_back(s);
                continue;
            }
        } else if (kind == "int") {
            b.kind = frontend::ArgBinding::Int;
            b.ival = a.at("value").integer();
        } else if (kind == "float") {
            b.kind = frontend::ArgBinding::Float;
            b.fval = a.at("value").num();
        } else if (kind == "bool") {
            b.kind = frontend::ArgBinding::Bool;
            b.ival = a.at("value").boolean();
        } else if (kind == "none") {
            b.kind = frontend::ArgBinding::None;
        } else if (kind == "str") {
            b.kind = frontend::ArgBinding::Str;
            b.sval = a.at("value").str();
        } else {
            fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": unsupported construct 'kernel argument of kind " + kind +
                                          "': '" + b.name + "' must be a tensor, a number, a bool, a string or None");
        }
        out.push_back(b);
    }
    return out;
}

namespace {

// "ACTIVATION='gelu'" -> "_ACTIVATION_gelu": a readable, valid suffix for kernel names.
std::string suffix_of(const std::vector<std::pair<std::string, std::string>> &key) {
    std::string s;
    for (const auto &[name, value] : key) {
        s += "_" + name + "_";
        for (char c : value)
            if (std::isalnum(static_cast<unsigned char>(c)))
                s += c;
            else if (c != '\'')
                s += '_';
    }
    return s;
}

std::vector<std::pair<std::string, std::string>> key_of(const ir::Function &f) {
    std::vector<std::pair<std::string, std::string>> key;
    for (const std::string &name : f.specialized)
        for (const ir::Constexpr &c : f.constexprs)
            if (c.name == name) key.emplace_back(name, c.literal);
    return key;
}

}  // namespace

namespace {

emit::TensorRef tensor_ref(JsonRef ref) {
    if (ref.has("input")) return {emit::TensorRef::Input, static_cast<int>(ref.at("input").integer())};
    if (ref.has("output")) return {emit::TensorRef::Output, static_cast<int>(ref.at("output").integer())};
    return {emit::TensorRef::Temp, static_cast<int>(ref.at("temp").integer())};
}

std::string tensor_label(const frontend::KernelFile &kf, emit::TensorRef t) {
    switch (t.kind) {
    case emit::TensorRef::Input: return "stub input '" + kf.stub.params.at(static_cast<size_t>(t.index)) + "'";
    case emit::TensorRef::Output: return "output " + std::to_string(t.index);
    default: return "temporary buffer " + std::to_string(t.index);
    }
}

Derived lower_launch(const frontend::KernelFile &kf, JsonRef launch) {
    Derived d;
    d.kernel = launch.at("kernel").str();
    d.bindings = bindings_of(kf, launch);
    d.forward = passes::cse(frontend::lower_kernel(kf, d.kernel, d.bindings));
    d.specialization.key = key_of(d.forward);
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].str_or("kind", "") == "tensor" || args[i].str_or("kind", "") == "tensor_desc")
            d.tensors[args[i].at("name").str()] = tensor_ref(args[i].at("ref"));
    return d;
}

// Which launches gradients flow through: a tensor is active when it depends on a grad input, and
// useful when a returned output depends on it; a launch propagates from its active, useful reads to
// its active, useful writes. Dependence is per launch (any write depends on any read). Buffers may
// be written by several launches and updated in place: a tensor's one shadow then holds, at each
// point of the backward, the adjoint of its contents at the matching point of the forward (see
// GradSpec::overwritten), and a backward reading contents that a later launch overwrites gets a
// copy saved before that launch.
void plan_flow(const frontend::KernelFile &kf, JsonRef trace, Chain &c) {
    using emit::TensorRef;
    std::vector<passes::MemoryParams> mem;
    for (const Derived &d : c.launches) mem.push_back(passes::memory_params(d.forward));
    auto tensors = [&](size_t k, const std::set<std::string> &params) {
        std::set<TensorRef> out;
        for (const std::string &p : params)
            if (c.launches[k].tensors.count(p)) out.insert(c.launches[k].tensors.at(p));
        return out;
    };
    auto launch_label = [&](size_t k) {
        return kf.file.path + ": stub '" + kf.stub.name + "': launch " + std::to_string(k) + " of '" +
               c.launches[k].kernel + "' ";
    };
    std::set<TensorRef> written;
    for (size_t k = 0; k < c.launches.size(); ++k)
        for (const TensorRef &t : tensors(k, mem[k].stored)) written.insert(t);
    JsonRef outs = trace.at("outputs");
    std::set<TensorRef> returned;
    for (size_t j = 0; j < outs.size(); ++j) {
        if (outs[j].has("input") &&
            !written.count({TensorRef::Input, static_cast<int>(outs[j].at("input").integer())}) &&
            std::find(kf.stub.grad_inputs.begin(), kf.stub.grad_inputs.end(),
                      kf.stub.params.at(static_cast<size_t>(outs[j].at("input").integer()))) !=
                kf.stub.grad_inputs.end())
            fail(TAD_ERR_UNSUPPORTED,
                 kf.file.path + ": stub '" + kf.stub.name + "' returns its input '" +
                     kf.stub.params.at(static_cast<size_t>(outs[j].at("input").integer())) + "' unchanged (output " +
                     std::to_string(j) +
                     "), and its gradient through that output would be lost; return a copy, or leave it out");
        if (outs[j].has("input")) {
            c.aliases[static_cast<int>(j)] = static_cast<int>(outs[j].at("input").integer());
            returned.insert({TensorRef::Input, c.aliases[static_cast<int>(j)]});
        } else {
            returned.insert({TensorRef::Output, static_cast<int>(j)});
        }
    }
    std::set<TensorRef> useful = returned;
    for (size_t k = c.launches.size(); k-- > 0;) {
        bool flows = false;
        for (const TensorRef &t : tensors(k, mem[k].stored)) flows = flows || useful.count(t);
        if (flows)
            for (const TensorRef &t : tensors(k, mem[k].loaded)) useful.insert(t);
    }
    const auto &gi = kf.stub.grad_inputs;
    std::set<TensorRef> active, touched;
    for (size_t i = 0; i < kf.stub.params.size(); ++i)
        if (std::find(gi.begin(), gi.end(), kf.stub.params[i]) != gi.end())
            active.insert({TensorRef::Input, static_cast<int>(i)});
    std::map<TensorRef, int> contributions;
    for (size_t k = 0; k < c.launches.size(); ++k) {
        Derived &d = c.launches[k];
        std::set<TensorRef> reads = tensors(k, mem[k].loaded), writes = tensors(k, mem[k].stored),
                            overwrites = tensors(k, mem[k].overwritten);
        bool flows = false;
        for (const TensorRef &t : reads) flows = flows || active.count(t);
        // Within a launch, every load must see the contents from before the launch: a load after a
        // store or atomic add to the same tensor (through any parameter), or a load in a loop that a
        // later store of that loop may have written in an earlier iteration, is refused.
        std::set<TensorRef> written_here, zeroed_here;
        std::map<std::pair<TensorRef, ir::ValueId>, int> stores_at;
        for (const passes::Access &a : mem[k].accesses) {
            TensorRef t = d.tensors.at(a.param);
            if (a.kind == ir::OpKind::Store) {
                ++stores_at[{t, a.ptr}];
                if (a.loop >= 0 && !a.varies) zeroed_here.insert(t);  // the same elements, every iteration
            }
            bool reread = a.kind == ir::OpKind::Load && written_here.count(t);
            for (const passes::Access &b : mem[k].accesses)
                reread = reread || (a.kind == ir::OpKind::Load && a.loop >= 0 && b.loop == a.loop && b.op > a.op &&
                                    b.kind != ir::OpKind::Load && d.tensors.at(b.param) == t && b.ptr != a.ptr);
            if (a.kind != ir::OpKind::Load) written_here.insert(t);
            if (!reread || (!active.count(t) && !flows)) continue;
            const ir::Op &load = d.forward.ops[static_cast<size_t>(a.op)];
            fail(TAD_ERR_UNSUPPORTED,
                 launch_label(k) + "may read " + tensor_label(kf, t) + " back after writing it (" +
                     where(d.forward.source_path, load.loc.line, load.loc.col) +
                     "); a launch that updates a differentiated buffer must read each element before writing it, "
                     "through the same pointer");
        }
        for (const auto &[at, n] : stores_at)
            if (n > 1) zeroed_here.insert(at.first);  // stored twice at the same addresses
        for (const TensorRef &t : overwrites) {
            // Gradient reaches the new contents only if a later launch reads them or the stub returns them.
            bool read_later = returned.count(t) > 0;
            for (size_t m = k + 1; m < c.launches.size(); ++m)
                read_later = read_later || tensors(m, mem[m].loaded).count(t);
            if (active.count(t) && read_later && !flows)
                fail(TAD_ERR_UNSUPPORTED,
                     launch_label(k) + "overwrites " + tensor_label(kf, t) +
                         ", which carries gradient, with values that do not depend on the grad inputs");
        }
        const std::set<TensorRef> before = active;
        if (flows) active.insert(writes.begin(), writes.end());
        for (const auto &[param, t] : d.tensors) {
            if (!useful.count(t)) continue;
            if (mem[k].loaded.count(param) && before.count(t)) d.spec.wrt.push_back(param);
            if (mem[k].stored.count(param) && active.count(t)) d.spec.outputs.push_back(param);
        }
        if (d.spec.wrt.empty() || d.spec.outputs.empty()) d.spec = {};
        for (const std::string &p : d.spec.outputs) {
            TensorRef t = d.tensors.at(p);
            if (mem[k].overwritten.count(p) &&
                (t.kind == TensorRef::Input || touched.count(t) || reads.count(t) || zeroed_here.count(t))) {
                d.spec.overwritten.push_back(p);
                c.shared.insert(t);
            }
        }
        for (const std::string &p : d.spec.wrt) ++contributions[d.tensors.at(p)];
        touched.insert(reads.begin(), reads.end());
        touched.insert(writes.begin(), writes.end());
    }
    for (const auto &[t, n] : contributions)
        if (n > 1 || t.kind != TensorRef::Input) c.shared.insert(t);
    for (const TensorRef &t : written) {
        if (t.kind != TensorRef::Input || !active.count(t)) continue;
        if (!returned.count(t))
            fail(TAD_ERR_UNSUPPORTED,
                 kf.file.path + ": stub '" + kf.stub.name + "' updates " + tensor_label(kf, t) +
                     " in place but does not return it; return it, so that autograd sees the update");
        c.shared.insert(t);
    }
    // A backward reads a tensor's contents as its launch saw them: from a copy saved before the
    // first launch, this one or a later one, that writes it.
    for (size_t k = 0; k < c.launches.size(); ++k)
        for (const auto &[param, t] : c.launches[k].tensors)
            for (size_t m = k; m < c.launches.size(); ++m)
                if (tensors(m, mem[m].stored).count(t)) {
                    c.launches[k].saved_before[param] = m;
                    break;
                }
}

}  // namespace

Chain derive_chain(const frontend::KernelFile &kf, JsonRef trace, ad::LoopPolicy loops) {
    JsonRef launches = trace.at("launches");
    Chain c;
    std::map<std::string, int> times_launched;
    for (size_t k = 0; k < launches.size(); ++k) {
        c.launches.push_back(lower_launch(kf, launches[k]));
        ++times_launched[c.launches.back().kernel];
    }
    plan_flow(kf, trace, c);
    bool any = false;
    for (size_t k = 0; k < c.launches.size(); ++k) {
        Derived &d = c.launches[k];
        if (d.spec.wrt.empty()) continue;
        any = true;
        d.spec.loops = loops;
        auto plan = passes::plan_gradient_writes(d.forward, d.spec.wrt, d.spec.outputs);
        for (auto &[param, w] : plan)
            if (c.shared.count(d.tensors.at(param))) w = passes::GradWrite{};
        std::vector<std::pair<std::string, std::string>> guards;
        auto fallback = plan;
        for (auto &[param, w] : fallback)
            if (!w.guards.empty()) {
                guards.insert(guards.end(), w.guards.begin(), w.guards.end());
                w = passes::GradWrite{};
            }
        std::string base = d.kernel + "_bwd" + (times_launched[d.kernel] > 1 ? "_" + std::to_string(k) : "") +
                           suffix_of(d.specialization.key);
        d.specialization.variants.push_back({ad::reverse(d.forward, d.spec, plan, base), guards});
        if (!guards.empty())
            d.specialization.variants.push_back({ad::reverse(d.forward, d.spec, fallback, base + "_atomic"), {}});
    }
    if (!any)
        fail(TAD_ERR_INVALID_ARGUMENT,
             kf.file.path + ": no launch of stub '" + kf.stub.name +
                 "' reads one of its grad_inputs and writes a tensor it returns (or one a later launch reads)");
    return c;
}

namespace {
// The static-branch key of every launch, launch index first.
std::vector<std::pair<std::string, std::string>> traced_key(const frontend::KernelFile &kf, JsonRef trace) {
    std::vector<std::pair<std::string, std::string>> key;
    JsonRef launches = trace.at("launches");
    for (size_t k = 0; k < launches.size(); ++k)
        for (auto &[name, value] :
             key_of(frontend::lower_kernel(kf, launches[k].at("kernel").str(), bindings_of(kf, launches[k]))))
            key.emplace_back(std::to_string(k) + ":" + name, value);
    return key;
}
}  // namespace

bool has_specializations(const frontend::KernelFile &kf, JsonRef trace) { return !traced_key(kf, trace).empty(); }

bool new_specialization(const frontend::KernelFile &kf, JsonRef trace, const std::vector<JsonRef> &seen) {
    auto key = traced_key(kf, trace);
    for (JsonRef s : seen)
        if (traced_key(kf, s) == key) return false;
    return true;
}

std::string emit_backward_module(const frontend::KernelFile &kf, const std::vector<JsonRef> &traces,
                                 ad::LoopPolicy loops) {
    emit::ModuleInput in;
    in.kf = &kf;
    JsonRef first = traces.front();
    in.num_outputs = first.at("outputs").size();
    for (JsonRef t : traces) {
        Chain c = derive_chain(kf, t, loops);
        if (in.launches.empty()) {
            in.shared = c.shared;
            in.aliases = c.aliases;
            for (const Derived &d : c.launches) in.launches.push_back({d.kernel, d.tensors, {}, {}, d.saved_before});
        }
        bool same = c.launches.size() == in.launches.size() && c.shared == in.shared && c.aliases == in.aliases;
        for (size_t k = 0; same && k < c.launches.size(); ++k)
            same = c.launches[k].kernel == in.launches[k].kernel && c.launches[k].tensors == in.launches[k].tensors &&
                   c.launches[k].saved_before == in.launches[k].saved_before;
        if (!same)
            fail(TAD_ERR_UNSUPPORTED, kf.file.path + ": stub '" + kf.stub.name +
                                          "' launches different kernels, or passes them different buffers, for "
                                          "different dims; one backward cannot serve them");
        for (size_t k = 0; k < c.launches.size(); ++k) {
            emit::Specialization &sp = c.launches[k].specialization;
            if (sp.variants.empty()) continue;
            auto &list = in.launches[k].specializations;
            bool seen = false;
            for (const emit::Specialization &s : list) seen = seen || s.key == sp.key;
            if (seen) continue;
            // Forward mode, per specialization like the backward.
            emit::Tangent tangent = in.jvp_unsupported.empty() ? derive_jvp(c.launches[k]) : emit::Tangent{};
            if (in.jvp_unsupported.empty() && !tangent.jvp) in.jvp_unsupported = tangent.unsupported;
            in.launches[k].tangents.push_back(std::move(tangent));
            list.push_back(std::move(sp));
        }
    }
    // The launcher reaches temporary i through the first launch argument that points at it.
    JsonRef temps = first.at("temps");
    for (size_t i = 0; i < temps.size(); ++i) {
        bool found = false;
        for (size_t k = 0; k < in.launches.size() && !found; ++k)
            for (const auto &[param, t] : in.launches[k].tensors)
                if (!found && t.kind == emit::TensorRef::Temp && t.index == static_cast<int>(i)) {
                    in.temps.emplace_back(k, param);
                    found = true;
                }
    }
    return emit::emit_module(in);
}

}  // namespace tad
