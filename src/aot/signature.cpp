#include "aot/signature.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "passes/pipeline_loops.h"
#include "support/error.h"

namespace tad::aot {

namespace {

bool int32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

// "N: i32, not a multiple of 16", "X: *fp16, 16-byte aligned", "G: the constant 1", "BLOCK = 1024".
std::string describe(const CubinParam &p) {
    if (p.type == "constexpr") return p.name + (p.value == "1" ? " = 1 (a constant to Triton)" : " = " + p.value);
    std::string s = p.name + ": " + p.type;
    if (p.type[0] == '*') return s + (p.divisible ? ", 16-byte aligned" : ", not 16-byte aligned");
    if (p.type[0] == 'i' || p.type[0] == 'u')
        return p.type == "u1" ? s : s + (p.divisible ? ", a multiple of 16" : ", not a multiple of 16");
    return s;
}

// A Python literal for a number of the launch against one of the export: floats by value.
bool same_literal(const CubinParam &call, const CubinParam &exported) {
    if (call.value == exported.value) return true;
    char *end_a = nullptr, *end_b = nullptr;
    const double a = std::strtod(call.value.c_str(), &end_a), b = std::strtod(exported.value.c_str(), &end_b);
    return !call.value.empty() && !exported.value.empty() && *end_a == '\0' && *end_b == '\0' && a == b;
}

bool same(const CubinParam &call, const CubinParam &exported) {
    if (call.type != exported.type) return false;
    if (call.type == "constexpr") return same_literal(call, exported);
    return call.type == "u1" || call.type[0] == 'f' || call.divisible == exported.divisible;
}

// The first difference between the call and cubin `c` ("" when there is none), and how many
// parameters differ.
std::string difference(const Cubin &c, const std::vector<CubinParam> &call, int *count) {
    std::string first;
    *count = 0;
    auto note = [&](const std::string &what) {
        if (first.empty()) first = what;
        ++*count;
    };
    for (const CubinParam &e : c.params) {
        auto it = std::find_if(call.begin(), call.end(), [&](const CubinParam &p) { return p.name == e.name; });
        if (it == call.end())
            note("the launch has no argument " + e.name);
        else if (!same(*it, e))
            note(describe(*it) + " (exported: " + describe(e) + ")");
    }
    for (const CubinParam &p : call)
        if (std::none_of(c.params.begin(), c.params.end(), [&](const CubinParam &e) { return e.name == p.name; }))
            note("the export has no argument " + p.name);
    return first;
}

std::vector<CubinParam> specialized(const std::vector<CallArg> &args) {
    std::vector<CubinParam> out;
    for (const CallArg &a : args) out.push_back(specialize(a));
    return out;
}

[[noreturn]] void no_cubin(const KernelInfo &k, const std::string &why) {
    fail(TAD_ERR_INVALID_ARGUMENT, "no exported cubin of " + k.name + " matches this launch: " + why +
                                       "; export with dims that give the launch's specialization (docs/aot.md)");
}

void set_stages(std::vector<CallArg> &args, int stages) {
    for (CallArg &a : args)
        if (a.name == passes::kLoopStages) {
            a = CallArg::constexpr_int(passes::kLoopStages, stages);
            return;
        }
    args.push_back(CallArg::constexpr_int(passes::kLoopStages, stages));
}

void put(Packed &out, const void *value, size_t bytes) {
    const size_t at = (out.bytes.size() + 7) / 8 * 8;
    out.bytes.resize(at + 8, 0);
    std::memcpy(out.bytes.data() + at, value, bytes);
    out.offsets.push_back(at);
}

void put_pointer(Packed &out, Ptr p) {
    put(out, &p.value, 8);
    if (p.base != Ptr::Address) out.patches.emplace_back(out.offsets.back(), p);
}

void put_scalar(Packed &out, const CubinParam &p, const CallArg &a) {
    if (p.type == "i32" || p.type == "u32") {
        const int32_t v = static_cast<int32_t>(a.i);
        return put(out, &v, 4);
    }
    if (p.type == "i64" || p.type == "u64") return put(out, &a.i, 8);
    if (p.type == "u1" || p.type == "i1") {
        const uint8_t v = a.i ? 1 : 0;
        return put(out, &v, 1);
    }
    if (p.type == "fp32") {  // a Python float, rounded to float as Triton's pack_fp32 does
        const float v = static_cast<float>(a.f);
        return put(out, &v, 4);
    }
    fail(TAD_ERR_INTERNAL, "pack: argument " + p.name + " of type " + p.type);
}

}  // namespace

CallArg CallArg::pointer(std::string name, Ptr p, const DType &d) {
    CallArg a;
    a.kind = Pointer;
    a.name = std::move(name);
    a.ptr = p;
    a.dtype = &d;
    return a;
}

CallArg CallArg::integer(std::string name, int64_t v) {
    CallArg a;
    a.kind = Int;
    a.name = std::move(name);
    a.i = v;
    return a;
}

CallArg CallArg::constexpr_int(std::string name, int64_t v) {
    CallArg a = integer(std::move(name), v);
    a.kind = Constexpr;
    return a;
}

CubinParam specialize(const CallArg &a) {
    CubinParam p;
    p.name = a.name;
    switch (a.kind) {
    case CallArg::Pointer:
        p.type = std::string("*") + a.dtype->triton;
        p.divisible = a.specialize && a.ptr.value % 16 == 0;
        break;
    case CallArg::Int:
        if (a.i == 1 && a.specialize) {
            p.type = "constexpr";
            p.value = "1";
            break;
        }
        p.type = int32(a.i) ? "i32" : "i64";
        p.divisible = a.specialize && (a.i & 15) == 0;
        break;
    case CallArg::Float: p.type = "fp32"; break;
    case CallArg::Bool: p.type = "u1"; break;
    case CallArg::Constexpr:
        p.type = "constexpr";
        p.value = a.literal.empty() ? std::to_string(a.i) : a.literal;
        break;
    }
    return p;
}

Pick pick(const KernelInfo &k, std::vector<CallArg> args, int num_warps, int num_stages) {
    if (k.cubins.empty())
        no_cubin(k, "the export's launches never ran it (a branch of the plan its dims did not take)");
    std::vector<const Cubin *> warps;
    for (const Cubin &c : k.cubins)
        if (c.num_warps == num_warps) warps.push_back(&c);
    if (warps.empty())
        no_cubin(
            k, "num_warps " + std::to_string(num_warps) + " (exported: " + std::to_string(k.cubins[0].num_warps) + ")");
    std::string nearest;
    int fewest = std::numeric_limits<int>::max();
    for (int stages = num_stages; stages >= 1; --stages) {
        if (k.loop_stages) set_stages(args, stages);
        const std::vector<CubinParam> call = specialized(args);
        for (const Cubin *c : warps) {
            if (c->num_stages != stages) continue;
            int count = 0;
            std::string why = difference(*c, call, &count);
            if (why.empty()) return {c, args};
            if (count < fewest) {
                fewest = count;
                nearest = why;
            }
        }
    }
    if (nearest.empty())
        no_cubin(k, "num_stages " + std::to_string(num_stages) + " (exported: " + std::to_string(warps[0]->num_stages) +
                        ")");
    no_cubin(k, nearest);
}

Packed pack(const Cubin &c, const std::vector<CallArg> &args, Ptr global_scratch, Ptr profile_scratch) {
    Packed out;
    for (const CubinParam &p : c.params) {
        if (p.type == "constexpr") continue;
        auto a = std::find_if(args.begin(), args.end(), [&](const CallArg &x) { return x.name == p.name; });
        if (a == args.end()) fail(TAD_ERR_INTERNAL, "pack: no argument " + p.name);
        if (a->kind == CallArg::Pointer)
            put_pointer(out, a->ptr);
        else
            put_scalar(out, p, *a);
    }
    put_pointer(out, global_scratch);
    put_pointer(out, profile_scratch);
    return out;
}

}  // namespace tad::aot
