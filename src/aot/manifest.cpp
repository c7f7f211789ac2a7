#include "aot/manifest.h"

#include "plan/json.h"
#include "support/error.h"
#include "support/fs.h"

namespace tad::aot {

namespace {

std::string tensor_name(const plan::TensorRef &t) {
    static const char *const kinds[] = {"input", "output", "temp"};
    return std::string(kinds[t.kind]) + " " + std::to_string(t.index);
}

plan::TensorRef tensor_ref(const std::string &s) {
    for (int k = 0; k < 3; ++k) {
        plan::TensorRef t;
        t.kind = static_cast<plan::TensorRef::Kind>(k);
        const std::string prefix = tensor_name(t).substr(0, tensor_name(t).size() - 1);
        if (s.compare(0, prefix.size(), prefix) == 0 && s.size() > prefix.size() &&
            s.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
            t.index = std::stoi(s.substr(prefix.size()));
            return t;
        }
    }
    fail(TAD_ERR_INVALID_ARGUMENT, "bad tensor '" + s + "'");
}

void put_cubin(JsonRef o, const Cubin &c) {
    o.set("file", c.file);
    o.set("function", c.function);
    o.set("num_warps", c.num_warps);
    o.set("num_stages", c.num_stages);
    o.set("num_ctas", c.num_ctas);
    JsonRef cluster = o.set_array("cluster_dims");
    for (int d : c.cluster_dims) cluster.push(static_cast<int64_t>(d));
    o.set("shared", c.shared);
    o.set("global_scratch_size", c.global_scratch_size);
    o.set("global_scratch_align", c.global_scratch_align);
    o.set("profile_scratch_size", c.profile_scratch_size);
    o.set("profile_scratch_align", c.profile_scratch_align);
    o.set_bool("cooperative", c.cooperative);
    o.set_bool("pdl", c.pdl);
    JsonRef params = o.set_array("params");
    for (const CubinParam &p : c.params) {
        JsonRef q = params.push_object();
        q.set("name", p.name);
        q.set("type", p.type);
        if (p.type == "constexpr")
            q.set("value", p.value);
        else
            q.set_bool("divisible", p.divisible);
    }
    JsonRef abi = o.set_array("abi");
    for (int b : c.abi) abi.push(static_cast<int64_t>(b));
}

Cubin cubin(JsonRef j) {
    Cubin c;
    c.file = j.at("file").str();
    c.function = j.at("function").str();
    c.num_warps = static_cast<int>(j.at("num_warps").integer());
    c.num_stages = static_cast<int>(j.at("num_stages").integer());
    c.num_ctas = static_cast<int>(j.at("num_ctas").integer());
    for (size_t i = 0; i < 3; ++i) c.cluster_dims[i] = static_cast<int>(j.at("cluster_dims")[i].integer());
    c.shared = static_cast<int>(j.at("shared").integer());
    c.global_scratch_size = j.at("global_scratch_size").integer();
    c.global_scratch_align = j.at("global_scratch_align").integer();
    c.profile_scratch_size = j.at("profile_scratch_size").integer();
    c.profile_scratch_align = j.at("profile_scratch_align").integer();
    c.cooperative = j.at("cooperative").boolean();
    c.pdl = j.at("pdl").boolean();
    for (size_t i = 0; i < j.at("params").size(); ++i) {
        JsonRef q = j.at("params")[i];
        CubinParam p;
        p.name = q.at("name").str();
        p.type = q.at("type").str();
        if (p.type == "constexpr")
            p.value = q.at("value").str();
        else
            p.divisible = q.at("divisible").boolean();
        c.params.push_back(p);
    }
    for (size_t i = 0; i < j.at("abi").size(); ++i) c.abi.push_back(static_cast<int>(j.at("abi")[i].integer()));
    return c;
}

// Bytes Triton 3.6's launcher passes for an argument of signature type `type` (driver.py's
// ty_to_cpp, floats packed to their own width: fp32 as a 4-byte float); 0 for an unknown type.
int type_bytes(const std::string &type) {
    if (type.empty()) return 0;
    if (type[0] == '*') return 8;
    static const std::pair<const char *, int> sizes[] = {
        {"i1", 1},  {"u1", 1},  {"i8", 1},   {"u8", 1},  {"i16", 2}, {"u16", 2}, {"fp16", 2}, {"bf16", 2},
        {"i32", 4}, {"u32", 4}, {"fp32", 4}, {"f32", 4}, {"i64", 8}, {"u64", 8}, {"fp64", 8}};
    for (const auto &[name, bytes] : sizes)
        if (type == name) return bytes;
    return 0;
}

// The entry's parameters must be the non-constexpr ones, at Triton's widths, then two pointers.
void check_abi(const std::string &kernel, const Cubin &c) {
    std::vector<int> want;
    for (const CubinParam &p : c.params) {
        if (p.type == "constexpr") continue;
        const int bytes = type_bytes(p.type);
        if (!bytes)
            fail(TAD_ERR_INVALID_ARGUMENT, kernel + ": parameter " + p.name + " has unknown type '" + p.type + "'");
        want.push_back(bytes);
    }
    want.insert(want.end(), {8, 8});
    if (want != c.abi)
        fail(TAD_ERR_INVALID_ARGUMENT, kernel + ": cubin " + c.file + " takes " + std::to_string(c.abi.size()) +
                                           " parameters of other sizes than its signature's non-constexpr parameters "
                                           "and the two scratch pointers (" +
                                           std::to_string(want.size()) + ")");
}

KernelInfo kernel_info(JsonRef j) {
    KernelInfo k;
    k.name = j.at("name").str();
    for (size_t i = 0; i < j.at("largest_tile").size(); ++i) k.largest_tile.push_back(j.at("largest_tile")[i].str());
    k.loop_stages = j.at("loop_stages").boolean();
    for (size_t i = 0; i < j.at("cubins").size(); ++i) k.cubins.push_back(cubin_from_json(k.name, j.at("cubins")[i]));
    return k;
}

Manifest parse(JsonRef j) {
    const std::string format = j.at("format").str();
    if (format != "tad-kernels") fail(TAD_ERR_INVALID_ARGUMENT, "format is '" + format + "', not 'tad-kernels'");
    const int64_t version = j.at("version").integer();
    if (version != kManifestVersion)
        fail(TAD_ERR_INVALID_ARGUMENT, "version " + std::to_string(version) + " (this libtad reads version " +
                                           std::to_string(kManifestVersion) + ")");
    Manifest m;
    m.tad_version = j.at("tad").str();
    m.triton_version = j.at("triton").str();
    m.device = j.at("device").str();
    m.capability = static_cast<int>(j.at("capability").integer());
    JsonRef fwd = j.at("forward");
    m.stub = fwd.at("stub").str();
    m.kernel = fwd.at("kernel").str();
    for (size_t i = 0; i < fwd.at("params").size(); ++i) {
        JsonRef q = fwd.at("params")[i];
        ForwardParam p;
        p.name = q.at("name").str();
        p.kind = q.at("kind").str();
        if (p.kind == "tensor") {
            p.tensor = tensor_ref(q.at("tensor").str());
            p.ndim = static_cast<int>(q.at("ndim").integer());
        }
        m.params.push_back(p);
    }
    m.plan = plan::from_json(j.at("plan"));
    for (size_t i = 0; i < j.at("kernels").size(); ++i) {
        KernelInfo k = kernel_info(j.at("kernels")[i]);
        m.kernels[k.name] = std::move(k);
    }
    return m;
}

std::string arg_kind(const plan::Arg &a) {
    switch (a.kind) {
    case plan::Arg::Tape: return "tape";
    case plan::Arg::TapeStride: return "tape stride";
    case plan::Arg::TapeNeed: return "tape need";
    default: return "";
    }
}

std::string init_kind(plan::Init i) {
    switch (i) {
    case plan::Init::Cotangent: return "a cotangent copy of an output's gradient";
    case plan::Init::Tangent:
    case plan::Init::ZeroTangent: return "a tangent";
    default: return "";
    }
}

std::string unsupported_alloc(const plan::Step &s, const plan::Alloc &a) {
    const std::string what = init_kind(a.init);
    if (what.empty()) return "";
    return "launch " + std::to_string(s.launch) + " (" + s.kernel + "): the shadow of " + tensor_name(a.tensor) +
           " starts as " + what;
}

std::string unsupported_branch(const plan::Plan &p, const plan::Step &s, const plan::Branch &b) {
    const std::string where = "launch " + std::to_string(s.launch) + " (" + s.kernel + "): ";
    if (b.sizing)
        return where + "a tape sized by kernel " + p.kernels.at(static_cast<size_t>(b.sizing->kernel)).fn.name;
    for (const plan::Alloc &a : b.allocs)
        if (std::string why = unsupported_alloc(s, a); !why.empty()) return why;
    for (const plan::Run &r : b.runs) {
        const plan::Kernel &k = p.kernels.at(static_cast<size_t>(r.kernel));
        for (size_t i = 0; i < r.args.size(); ++i)
            if (std::string kind = arg_kind(r.args[i]); !kind.empty())
                return where + "argument " + k.fn.params.at(i).name + " of " + k.fn.name + " is the " + kind;
    }
    return "";
}

}  // namespace

Cubin cubin_from_json(const std::string &kernel, JsonRef j) {
    Cubin c = cubin(j);
    check_abi(kernel, c);
    return c;
}

bool Cubin::operator==(const Cubin &o) const {
    return file == o.file && function == o.function && num_warps == o.num_warps && num_stages == o.num_stages &&
           num_ctas == o.num_ctas && cluster_dims == o.cluster_dims && shared == o.shared &&
           global_scratch_size == o.global_scratch_size && global_scratch_align == o.global_scratch_align &&
           profile_scratch_size == o.profile_scratch_size && profile_scratch_align == o.profile_scratch_align &&
           cooperative == o.cooperative && pdl == o.pdl && params == o.params && abi == o.abi;
}

std::string unsupported(const plan::Plan &p) {
    const std::string later = " (tad_launch_backward does not handle it yet; docs/aot.md)";
    if (p.mode != plan::Mode::Backward) return "a forward-mode plan" + later;
    if (p.steps.size() != 1)
        return "the stub launches " + std::to_string(p.steps.size()) +
               " kernels; tad_launch_backward runs the backward of a stub that launches one" + later;
    if (!p.aliases.empty())
        return "output " + std::to_string(p.aliases.begin()->first) + " is input " +
               std::to_string(p.aliases.begin()->second) + ", updated in place and returned" + later;
    const plan::Step &s = p.steps[0];
    for (const plan::Alloc &a : p.prologue)
        if (std::string why = unsupported_alloc(s, a); !why.empty()) return why + later;
    for (const plan::Case &c : s.cases)
        for (const plan::Branch &b : c.branches)
            if (std::string why = unsupported_branch(p, s, b); !why.empty()) return why + later;
    return "";
}

Json manifest_json(const Manifest &m) {
    Json o = Json::object();
    o.set("format", "tad-kernels");
    o.set("version", kManifestVersion);
    o.set("tad", m.tad_version);
    o.set("triton", m.triton_version);
    o.set("device", m.device);
    o.set("capability", m.capability);
    JsonRef fwd = o.set_object("forward");
    fwd.set("stub", m.stub);
    fwd.set("kernel", m.kernel);
    JsonRef params = fwd.set_array("params");
    for (const ForwardParam &p : m.params) {
        JsonRef q = params.push_object();
        q.set("name", p.name);
        q.set("kind", p.kind);
        if (p.kind != "tensor") continue;
        q.set("tensor", tensor_name(p.tensor));
        q.set("ndim", p.ndim);
    }
    o.set_copy("plan", plan::to_json(m.plan));
    JsonRef kernels = o.set_array("kernels");
    for (const auto &[name, k] : m.kernels) {
        JsonRef q = kernels.push_object();
        q.set("name", k.name);
        JsonRef tile = q.set_array("largest_tile");
        for (const std::string &d : k.largest_tile) tile.push(d);
        q.set_bool("loop_stages", k.loop_stages);
        JsonRef cubins = q.set_array("cubins");
        for (const Cubin &c : k.cubins) put_cubin(cubins.push_object(), c);
    }
    return o;
}

void write_manifest(const std::string &dir, const Manifest &m) {
    fs::write_file_atomic(fs::join(dir, kManifestFile), manifest_json(m).dump(true) + "\n");
}

Manifest read_manifest(const std::string &dir) {
    const std::string path = fs::join(dir, kManifestFile);
    const std::string text = fs::read_file(path);
    Manifest m;
    try {
        m = parse(Json::parse(text, "JSON"));
    } catch (const Error &e) {
        fail(TAD_ERR_INVALID_ARGUMENT, path + ": " + e.what());
    }
    if (std::string why = unsupported(m.plan); !why.empty()) fail(TAD_ERR_UNSUPPORTED, path + ": " + why);
    for (const plan::Kernel &k : m.plan.kernels)
        if (!m.kernels.count(k.fn.name))
            fail(TAD_ERR_INVALID_ARGUMENT, path + ": kernel " + k.fn.name + " of the plan has no entry in \"kernels\"");
    return m;
}

}  // namespace tad::aot
