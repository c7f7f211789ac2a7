#include "fixture.h"

#include <fstream>

#include "support/fs.h"

namespace tad::aot::testing {

namespace {

int width(const CubinParam &p) {
    if (p.type[0] == '*') return 8;
    if (p.type == "u1" || p.type == "i1" || p.type == "i8" || p.type == "u8") return 1;
    if (p.type == "fp16" || p.type == "bf16" || p.type == "i16") return 2;
    if (p.type == "i32" || p.type == "u32" || p.type == "fp32") return 4;
    return 8;
}

ir::Param kernel_param(const std::string &name, ir::ParamKind kind) {
    ir::Param p;
    p.name = name;
    p.kind = kind;
    return p;
}

plan::Alloc alloc(plan::TensorRef t, plan::Init init) {
    plan::Alloc a;
    a.tensor = t;
    a.init = init;
    return a;
}

// X's gradient written by stores that reach every element where X is laid out as (1, BLOCK),
// (BLOCK, the programs) (rows of BLOCK, one a program), Y's the incoming gradient of output 0.
std::vector<plan::Alloc> covered_and_incoming() {
    plan::Alloc dx = alloc(kX, plan::Init::Covered);
    passes::Coverage c;
    c.digits = {{passes::Poly::constant(1), passes::Poly::symbol("BLOCK")},
                {passes::Poly::symbol("BLOCK"), passes::Poly::symbol("num_programs(0)")}};
    dx.cover = c;
    dx.launch = 0;
    plan::Alloc dy = alloc(kY, plan::Init::Incoming);
    dy.index = 0;
    return {dx, dy};
}

Manifest header(const std::vector<ForwardParam> &params) {
    Manifest m;
    m.tad_version = "0.2.0";
    m.triton_version = "3.6.0";
    m.device = "Fake GPU";
    m.capability = 90;
    m.stub = "f";
    m.kernel = "fwd";
    m.params = params;
    m.plan.launched = {"fwd"};
    return m;
}

ForwardParam tensor_param(const std::string &name, plan::TensorRef t) { return {name, "tensor", t, 2}; }
ForwardParam value_param(const std::string &name, const std::string &kind) { return {name, kind, {}, 0}; }

}  // namespace

std::string fresh_dir(const std::string &name) {
    const std::string dir = std::string(TAD_BINARY_DIR) + "/tests/aot_exports/" + name;
    fs::remove_tree(dir);
    fs::make_dirs(dir);
    return dir;
}

CubinParam param(const std::string &name, const std::string &type, bool divisible) {
    return CubinParam{name, type, divisible, ""};
}

CubinParam constant(const std::string &name, const std::string &value) {
    return CubinParam{name, "constexpr", false, value};
}

Cubin cubin(const std::string &dir, const std::string &file, const std::string &function,
            const std::vector<CubinParam> &params, int static_shared) {
    Cubin c;
    c.file = file;
    c.function = function;
    c.params = params;
    std::string widths;
    for (const CubinParam &p : params)
        if (p.type != "constexpr") {
            c.abi.push_back(width(p));
            widths += std::to_string(width(p)) + ",";
        }
    c.abi.insert(c.abi.end(), {8, 8});
    widths += "8,8";
    std::ofstream(fs::join(dir, file)) << "fake-cubin " << function << " " << static_shared << " " << widths << "\n";
    return c;
}

plan::Arg tensor_arg(plan::TensorRef t, const std::string &name) {
    plan::Arg a;
    a.kind = plan::Arg::Tensor;
    a.tensor = t;
    a.name = name;
    return a;
}

plan::Arg shadow_arg(plan::TensorRef t) { return kind_arg(plan::Arg::Shadow, t); }

plan::Arg scalar_arg(const std::string &name) {
    plan::Arg a;
    a.kind = plan::Arg::Scalar;
    a.name = name;
    return a;
}

plan::Arg kind_arg(plan::Arg::Kind k, plan::TensorRef t) {
    plan::Arg a;
    a.kind = k;
    a.tensor = t;
    return a;
}

Manifest elementwise(const std::string &) {
    Manifest m = header({tensor_param("X", kX), tensor_param("Y", kY), value_param("N", "int"),
                         value_param("eps", "float"), value_param("BLOCK", "int")});
    plan::Plan &p = m.plan;
    p.num_inputs = 1;
    p.num_outputs = 1;
    p.grad_inputs = {0};
    plan::Kernel k;
    k.fn.name = "fwd_bwd";
    k.forward = "fwd";
    for (const char *name : {"X", "DX", "DY"}) k.fn.params.push_back(kernel_param(name, ir::ParamKind::Pointer));
    k.fn.params.push_back(kernel_param("N", ir::ParamKind::Int));
    k.fn.params.push_back(kernel_param("eps", ir::ParamKind::Float));
    k.fn.constexprs.push_back({"BLOCK", "16"});
    p.kernels.push_back(k);
    p.prologue.push_back(alloc(kX, plan::Init::Absent));
    plan::Branch b;
    b.allocs = covered_and_incoming();
    plan::Run run;
    run.kernel = 0;
    run.args = {tensor_arg(kX, "X"), shadow_arg(kX), shadow_arg(kY), scalar_arg("N"), scalar_arg("eps")};
    b.runs.push_back(run);
    p.steps.push_back(plan::Step{0, "fwd", {plan::Case{{}, {b}}}});
    p.results.push_back(plan::Result{true, kX});
    m.kernels["fwd_bwd"] = KernelInfo{"fwd_bwd", {"BLOCK"}, false, {}};
    return m;
}

Manifest stashed(const std::string &dir, const std::string &dtype) {
    Manifest m =
        header({tensor_param("X", kX), tensor_param("Y", kY), value_param("N", "int"), value_param("BLOCK", "int")});
    plan::Plan &p = m.plan;
    p.num_inputs = 1;
    p.num_outputs = 1;
    p.grad_inputs = {0};
    plan::Kernel rest, dx;
    rest.fn.name = "fwd_bwd";
    dx.fn.name = "fwd_bwd_DX";
    rest.forward = dx.forward = "fwd";
    for (const char *name : {"X", "DY", "S"}) rest.fn.params.push_back(kernel_param(name, ir::ParamKind::Pointer));
    for (const char *name : {"S", "DX"}) dx.fn.params.push_back(kernel_param(name, ir::ParamKind::Pointer));
    for (plan::Kernel *k : {&rest, &dx}) {
        k->fn.params.push_back(kernel_param("N", ir::ParamKind::Int));
        k->fn.constexprs.push_back({"BLOCK", "16"});
    }
    p.kernels = {rest, dx};
    plan::Branch b;
    b.allocs = covered_and_incoming();
    b.stashes = {plan::StashBuffer{"S", {"BLOCK"}, kX}};
    plan::Arg s;
    s.kind = plan::Arg::Stash;
    s.name = "S";
    plan::Run r0, r1;
    r0.kernel = 0;
    r0.args = {tensor_arg(kX, "X"), shadow_arg(kY), s, scalar_arg("N")};
    r1.kernel = 1;
    r1.args = {s, shadow_arg(kX), scalar_arg("N")};
    b.runs = {r0, r1};
    p.steps.push_back(plan::Step{0, "fwd", {plan::Case{{}, {b}}}});
    p.results = {plan::Result{true, kX}};
    const std::string t = dtype == "float16" ? "*fp16" : "*fp32";
    m.kernels["fwd_bwd"] = KernelInfo{"fwd_bwd",
                                      {"BLOCK"},
                                      false,
                                      {cubin(dir, "a.cubin", "fwd_bwd",
                                             {param("X", t, true), param("DY", t, true), param("S", t, true),
                                              param("N", "i32"), constant("BLOCK", "8")})}};
    m.kernels["fwd_bwd_DX"] =
        KernelInfo{"fwd_bwd_DX",
                   {"BLOCK"},
                   false,
                   {cubin(dir, "b.cubin", "fwd_bwd_DX",
                          {param("S", t, true), param("DX", t, true), param("N", "i32"), constant("BLOCK", "8")})}};
    return m;
}

Manifest regridded(const std::string &dir, const std::string &dtype, int axes) {
    Manifest m = header({tensor_param("X", kX), tensor_param("W", kW), tensor_param("Y", kY), value_param("N", "int"),
                         value_param("BLOCK", "int")});
    m.params[1].ndim = 1;
    plan::Plan &p = m.plan;
    p.num_inputs = 2;
    p.num_outputs = 1;
    p.grad_inputs = {0, 1};
    plan::Kernel k;
    k.fn.name = "fwd_bwd";
    k.forward = "fwd";
    for (const char *name : {"X", "DX", "DY", "W", "DW"})
        k.fn.params.push_back(kernel_param(name, ir::ParamKind::Pointer));
    const std::vector<std::string> gs =
        axes == 1 ? std::vector<std::string>{"G"} : std::vector<std::string>{"G0", "G1"};
    k.fn.params.push_back(kernel_param("N", ir::ParamKind::Int));
    for (const std::string &g : gs) k.fn.params.push_back(kernel_param(g.c_str(), ir::ParamKind::Int));
    k.fn.params.push_back(kernel_param("DW_slab", ir::ParamKind::Int));
    k.fn.constexprs.push_back({"BLOCK", "16"});
    k.regrid =
        plan::Regrid{axes == 1 ? std::vector<int>{0} : std::vector<int>{0, 1}, gs, {{"DW", "DW_slab"}}, {}, {"DW"}};
    p.kernels.push_back(k);
    plan::Branch b;
    b.allocs = covered_and_incoming();
    b.allocs.push_back(alloc(kW, plan::Init::Partials));
    plan::Run run;
    run.kernel = 0;
    run.regrid_axes = k.regrid->axes;
    run.partials = {kW};
    run.args = {
        tensor_arg(kX, "X"), shadow_arg(kX), shadow_arg(kY), tensor_arg(kW, "W"), kind_arg(plan::Arg::Partial, kW),
        scalar_arg("N")};
    for (int a = 0; a < axes; ++a) {
        run.args.push_back(kind_arg(plan::Arg::GridSize));
        run.args.back().axis = a;
    }
    run.args.push_back(kind_arg(plan::Arg::PartialStride, kW));
    b.runs.push_back(run);
    p.steps.push_back(plan::Step{0, "fwd", {plan::Case{{}, {b}}}});
    p.results = {plan::Result{true, kX}, plan::Result{true, kW}};
    // Triton's specialization at N = 7, G = 10: W's partial rows (float32) in the workspace.
    const std::string t = dtype == "float16" ? "*fp16" : "*fp32";
    std::vector<CubinParam> params = {param("X", t, true), param("DX", t, true),       param("DY", t, true),
                                      param("W", t, true), param("DW", "*fp32", true), param("N", "i32")};
    for (const std::string &g : gs) params.push_back(param(g, "i32"));
    params.push_back(param("DW_slab", "i32"));
    params.push_back(constant("BLOCK", "8"));
    m.kernels["fwd_bwd"] = KernelInfo{"fwd_bwd", {"BLOCK"}, false, {cubin(dir, "a.cubin", "fwd_bwd", params)}};
    m.kernels[kRowSum] = KernelInfo{kRowSum,
                                    {},
                                    false,
                                    {cubin(dir, "r.cubin", "tad_row_sum",
                                           {param("Partial", "*fp32"), param("Out", "*fp32"), param("rows", "i32"),
                                            param("n", "i32"), constant("ADD", "False"), constant("BLOCK", "1024")})}};
    if (dtype == "float16")
        m.kernels[kCast] = KernelInfo{
            kCast,
            {},
            false,
            {cubin(dir, "c.cubin", "tad_cast",
                   {param("Src", "*fp32"), param("Dst", "*fp16"), param("n", "i32"), constant("BLOCK", "1024")})}};
    return m;
}

TensorArg tensor(const std::vector<float> &storage, int64_t rows, int64_t cols, uint64_t grad,
                 const std::string &dtype) {
    TensorArg t;
    t.data = address(storage.data());
    t.grad = grad;
    t.dtype = dtype;
    t.shape = rows > 0 ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{cols};
    t.strides = rows > 0 ? std::vector<int64_t>{cols, 1} : std::vector<int64_t>{1};
    return t;
}

}  // namespace tad::aot::testing
