#include "flow/flow.h"

#include <algorithm>

#include "passes/rewrites.h"
#include "support/error.h"

namespace tad::flow {

namespace {

bool contains(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// The tensors behind a set of a launch's pointer parameters.
std::set<TensorRef> tensors(const Launch &l, const std::set<std::string> &params) {
    std::set<TensorRef> out;
    for (const std::string &p : params)
        if (l.tensors.count(p)) out.insert(l.tensors.at(p));
    return out;
}

std::string tensor_label(const Call &c, TensorRef t) {
    switch (t.kind) {
    case TensorRef::Input: return "stub input '" + c.params.at(static_cast<size_t>(t.index)) + "'";
    case TensorRef::Output: return "output " + std::to_string(t.index);
    default: return "temporary buffer " + std::to_string(t.index);
    }
}

std::string launch_label(const Call &c, const std::vector<Launch> &ls, size_t k) {
    return c.path + ": stub '" + c.stub + "': launch " + std::to_string(k) + " of '" + ls[k].kernel + "' ";
}

std::set<TensorRef> written_tensors(const std::vector<Launch> &ls) {
    std::set<TensorRef> written;
    for (const Launch &l : ls)
        for (const TensorRef &t : tensors(l, l.mem.stored)) written.insert(t);
    return written;
}

// Tensors a returned output depends on, through later launches.
std::set<TensorRef> useful_tensors(const std::vector<Launch> &ls, const std::set<TensorRef> &returned) {
    std::set<TensorRef> useful = returned;
    for (size_t k = ls.size(); k-- > 0;) {
        bool flows = false;
        for (const TensorRef &t : tensors(ls[k], ls[k].mem.stored)) flows = flows || useful.count(t);
        if (flows)
            for (const TensorRef &t : tensors(ls[k], ls[k].mem.loaded)) useful.insert(t);
    }
    return useful;
}

// Within a launch, every load must see the contents from before the launch: a load after a store or
// atomic add to the same tensor (through any parameter), or a load in a loop that a later store of
// that loop may have written in an earlier iteration (through another pointer, or through the same
// one where that store may write an element twice: passes/rewrites.h), is refused where gradient
// could flow.
void check_rereads(const Call &c, const std::vector<Launch> &ls, size_t k, const std::set<TensorRef> &active,
                   bool flows) {
    const Launch &l = ls[k];
    std::set<int> twice;  // stores in loops that may write an element twice
    for (const passes::Access &b : l.mem.accesses)
        if (b.kind == ir::OpKind::Store && b.loop >= 0 && !passes::store_once_per_program(*l.forward, b.op))
            twice.insert(b.op);
    std::set<TensorRef> written_here;
    for (const passes::Access &a : l.mem.accesses) {
        TensorRef t = l.tensors.at(a.param);
        bool reread = a.kind == ir::OpKind::Load && written_here.count(t);
        for (const passes::Access &b : l.mem.accesses)
            reread = reread || (a.kind == ir::OpKind::Load && a.loop >= 0 && b.loop == a.loop && b.op > a.op &&
                                b.kind != ir::OpKind::Load && l.tensors.at(b.param) == t &&
                                (b.ptr != a.ptr || twice.count(b.op)));
        if (a.kind != ir::OpKind::Load) written_here.insert(t);
        if (!reread || (!active.count(t) && !flows)) continue;
        const ir::Op &load = l.forward->ops[static_cast<size_t>(a.op)];
        fail(TAD_ERR_UNSUPPORTED, launch_label(c, ls, k) + "may read " + tensor_label(c, t) +
                                      " back after writing it (" +
                                      where(l.forward->source_path, load.loc.line, load.loc.col) +
                                      "); a launch that updates a differentiated buffer must read each element before "
                                      "writing it, through the same pointer, and not in a later iteration of a loop "
                                      "(carry such a value in a variable)");
    }
}

// Gradient reaches contents a launch writes only if a later launch reads them or the stub returns them.
void check_overwrites(const Call &c, const std::vector<Launch> &ls, size_t k, const std::set<TensorRef> &active,
                      const std::set<TensorRef> &returned, bool flows) {
    for (const TensorRef &t : tensors(ls[k], ls[k].mem.overwritten)) {
        bool read_later = returned.count(t) > 0;
        for (size_t m = k + 1; m < ls.size(); ++m) read_later = read_later || tensors(ls[m], ls[m].mem.loaded).count(t);
        if (active.count(t) && read_later && !flows)
            fail(TAD_ERR_UNSUPPORTED,
                 launch_label(c, ls, k) + "overwrites " + tensor_label(c, t) +
                     ", which carries gradient, with values that do not depend on the grad inputs");
    }
}

// Tensors a launch may write an element of more than once within a program (passes/rewrites.h;
// where it writes each once under run-time conditions, the backward checks those instead, so the
// decision does not depend on the trace). A parameter no proof covers may be written once on tile
// coordinates (a persistent kernel): `mapped_once` gets it, unless the launch has a buffer written
// twice, which keeps it off its tiles (remapped_forwards). Two stored parameters of one tensor are
// rewrites.
std::set<TensorRef> rewritten_tensors(const Launch &l, std::vector<std::string> *mapped_once) {
    std::set<TensorRef> out;
    std::vector<std::string> mapped;
    for (const passes::Rewrite &r : passes::rewrites(*l.forward)) {
        if (!r.unless.empty()) continue;
        std::vector<std::vector<passes::Inequality>> unless;
        if (passes::once_on_tiles(*l.forward, r.param, &unless) >= 0)
            mapped.push_back(r.param);
        else
            out.insert(l.tensors.at(r.param));
    }
    std::map<TensorRef, int> stored;
    for (const std::string &p : l.mem.overwritten)
        if (++stored[l.tensors.at(p)] > 1) out.insert(l.tensors.at(p));
    for (const std::string &p : mapped)
        if (out.empty())
            mapped_once->push_back(p);
        else
            out.insert(l.tensors.at(p));
    return out;
}

}  // namespace

std::set<TensorRef> returned_tensors(const Call &c, const std::vector<Launch> &ls, Flow &f) {
    std::set<TensorRef> written = written_tensors(ls), returned;
    for (size_t j = 0; j < c.output_inputs.size(); ++j) {
        const int input = c.output_inputs[j];
        if (input < 0) {
            returned.insert({TensorRef::Output, static_cast<int>(j)});
            continue;
        }
        const std::string &name = c.params.at(static_cast<size_t>(input));
        if (!written.count({TensorRef::Input, input}) && contains(c.grad_inputs, name))
            fail(TAD_ERR_UNSUPPORTED,
                 c.path + ": stub '" + c.stub + "' returns its input '" + name + "' unchanged (output " +
                     std::to_string(j) +
                     "), and its gradient through that output would be lost; return a copy, or leave it out");
        f.aliases[static_cast<int>(j)] = input;
        returned.insert({TensorRef::Input, input});
    }
    return returned;
}

void gradient_flow(const Call &c, const std::vector<Launch> &ls, const std::set<TensorRef> &returned, Flow &f) {
    const std::set<TensorRef> useful = useful_tensors(ls, returned);
    std::set<TensorRef> &active = f.active;
    for (size_t i = 0; i < c.params.size(); ++i)
        if (contains(c.grad_inputs, c.params[i])) active.insert({TensorRef::Input, static_cast<int>(i)});
    f.specs.assign(ls.size(), {});
    for (size_t k = 0; k < ls.size(); ++k) {
        const Launch &l = ls[k];
        bool flows = false;
        for (const TensorRef &t : tensors(l, l.mem.loaded)) flows = flows || active.count(t);
        check_rereads(c, ls, k, active, flows);
        check_overwrites(c, ls, k, active, returned, flows);
        const std::set<TensorRef> before = active;
        if (flows)
            for (const TensorRef &t : tensors(l, l.mem.stored)) active.insert(t);
        ad::GradSpec &spec = f.specs[k];
        for (const auto &[param, t] : l.tensors) {
            if (!useful.count(t)) continue;
            if (l.mem.loaded.count(param) && before.count(t)) spec.wrt.push_back(param);
            if (l.mem.stored.count(param) && active.count(t)) spec.outputs.push_back(param);
        }
        if (spec.wrt.empty() || spec.outputs.empty()) spec = {};
    }
    // A grad input updated in place carries gradient only if autograd sees the update. Other inputs
    // updated and not returned (batch norm's running statistics) are side effects: no gradient
    // flows through them unless a later launch reads them, and the stub's run still stores them.
    for (const TensorRef &t : written_tensors(ls))
        if (t.kind == TensorRef::Input && active.count(t) && !returned.count(t) &&
            contains(c.grad_inputs, c.params[static_cast<size_t>(t.index)]))
            fail(TAD_ERR_UNSUPPORTED,
                 c.path + ": stub '" + c.stub + "' updates " + tensor_label(c, t) +
                     " in place but does not return it; return it, so that autograd sees the update");
}

void shared_shadows(const std::vector<Launch> &ls, Flow &f) {
    std::set<TensorRef> touched;  // read or written by an earlier launch
    std::map<TensorRef, int> contributions;
    for (size_t k = 0; k < ls.size(); ++k) {
        const Launch &l = ls[k];
        ad::GradSpec &spec = f.specs[k];
        const int repeated = passes::store_with_repeated_lanes(*l.forward, spec.outputs);
        if (repeated >= 0) {
            const ir::Op &op = l.forward->ops[static_cast<size_t>(repeated)];
            fail(TAD_ERR_UNSUPPORTED, where(l.forward->source_path, op.loc.line, op.loc.col) +
                                          ": unsupported construct 'store': lanes of its tile write one element (its "
                                          "address does not move along a dim of the tile); store a scalar instead");
        }
        std::vector<std::string> mapped_once;
        const std::set<TensorRef> reads = tensors(l, l.mem.loaded), rewritten = rewritten_tensors(l, &mapped_once);
        // The reverse of a store that overwrites contents which also carry gradient zeroes the shadow;
        // so does that of a store the launch itself may overwrite later.
        for (const std::string &p : spec.outputs) {
            TensorRef t = l.tensors.at(p);
            if (!l.mem.overwritten.count(p)) continue;
            const bool earlier = t.kind == TensorRef::Input || touched.count(t) || reads.count(t);
            if (earlier) spec.overwritten.push_back(p);
            if (rewritten.count(t)) spec.rewritten.push_back(p);
            if (contains(mapped_once, p)) spec.mapped_once.push_back(p);
            if (earlier || rewritten.count(t)) f.shared.insert(t);
        }
        for (const std::string &p : spec.wrt) ++contributions[l.tensors.at(p)];
        touched.insert(reads.begin(), reads.end());
        for (const TensorRef &t : tensors(l, l.mem.stored)) touched.insert(t);
    }
    for (const auto &[t, n] : contributions)
        if (n > 1 || t.kind != TensorRef::Input) f.shared.insert(t);
    // An input updated in place with contents that carry gradient: its shadow holds the cotangent of
    // its final contents first.
    for (const TensorRef &t : written_tensors(ls))
        if (t.kind == TensorRef::Input && f.active.count(t)) f.shared.insert(t);
    first_writers(ls, f);
}

void first_writers(const std::vector<Launch> &ls, Flow &f) {
    const std::set<TensorRef> written = written_tensors(ls);
    for (const TensorRef &t : f.shared) {
        if (t.kind == TensorRef::Output || (t.kind == TensorRef::Input && written.count(t))) continue;
        int last = -1, params = 0;  // the last launch contributing to t's shadow, through how many parameters
        for (size_t k = 0; k < ls.size(); ++k)
            for (const std::string &p : f.specs[k].wrt)
                if (ls[k].tensors.at(p) == t) {
                    params = last == static_cast<int>(k) ? params + 1 : 1;
                    last = static_cast<int>(k);
                }
        if (last < 0 || params > 1) continue;  // two parameters' gradients add into one buffer
        bool written_later = false;
        for (size_t k = static_cast<size_t>(last); k < ls.size(); ++k)
            written_later = written_later || tensors(ls[k], ls[k].mem.stored).count(t) > 0;
        if (!written_later) f.first_writer[t] = static_cast<size_t>(last);
    }
}

void saved_copies(const std::vector<Launch> &ls, Flow &f) {
    f.saved_before.assign(ls.size(), {});
    for (size_t k = 0; k < ls.size(); ++k)
        for (const auto &[param, t] : ls[k].tensors)
            for (size_t m = k; m < ls.size(); ++m)
                if (tensors(ls[m], ls[m].mem.stored).count(t)) {
                    f.saved_before[k][param] = m;
                    break;
                }
    kept_buffers(ls, f);
}

namespace {

// Whether the stub returns input `i`, updated in place, and the module saves it for the backward
// after the forward (autograd then refuses a backward after a later in-place change).
bool returned_in_place(const Flow &f, int i) {
    return f.saves_in_place &&
           std::any_of(f.aliases.begin(), f.aliases.end(), [&](const auto &a) { return a.second == i; });
}

}  // namespace

void kept_buffers(const std::vector<Launch> &ls, Flow &f) {
    for (size_t k = 0; k < ls.size() && k < f.specs.size(); ++k)
        for (const auto &[param, t] : ls[k].tensors) {
            bool kept = ls[k].mem.stored.count(param) &&
                        (t.kind == TensorRef::Temp || (t.kind == TensorRef::Output && !f.aliases.count(t.index)) ||
                         (t.kind == TensorRef::Input && returned_in_place(f, t.index)));
            for (const auto &[other, u] : ls[k].tensors) kept = kept && (other == param || u != t);
            for (size_t m = k + 1; m < ls.size() && kept; ++m) kept = !tensors(ls[m], ls[m].mem.stored).count(t);
            if (kept) f.specs[k].kept.push_back(param);
        }
}

void check_torch_code(const Call &c, const std::vector<Launch> &ls) {
    const std::string why =
        "; tad differentiates the stub's kernel launches, not its torch code, so that gradient would be lost";
    for (const auto &[j, op] : c.torch_outputs)
        fail(TAD_ERR_UNSUPPORTED, c.path + ": stub '" + c.stub + "' computes output " + std::to_string(j) +
                                      " with torch code (" + op + ") from values that depend on its grad inputs" + why +
                                      ": compute it in a kernel, or return what the kernel wrote and finish "
                                      "outside the stub");
    for (size_t k = 0; k < c.torch_args.size() && k < ls.size(); ++k)
        for (const auto &[param, op] : c.torch_args[k])
            fail(TAD_ERR_UNSUPPORTED, launch_label(c, ls, k) + "reads '" + param + "', which torch code (" + op +
                                          ") computed from the grad inputs" + why +
                                          ": pass the tensors themselves (views of them are fine), or compute it "
                                          "in a kernel");
}

Flow analyze(const Call &call, const std::vector<Launch> &launches) {
    check_torch_code(call, launches);
    Flow f;
    f.saves_in_place = call.saves_in_place;
    std::set<TensorRef> returned = returned_tensors(call, launches, f);
    gradient_flow(call, launches, returned, f);
    shared_shadows(launches, f);
    saved_copies(launches, f);
    return f;
}

}  // namespace tad::flow
