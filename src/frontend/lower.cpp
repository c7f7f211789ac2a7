// Lowering entry points: the Lowerer run on one kernel, and the binding of its parameters.
#include "frontend/lower.h"

#include <cmath>
#include <cstdio>

#include "frontend/lower_internal.h"
#include "support/py_literal.h"

namespace tad::frontend::detail {

ir::Function Lowerer::run(const std::string &kernel, const std::vector<ArgBinding> &args) {
    auto it = jit_.find(kernel);
    if (it == jit_.end()) fail(TAD_ERR_NO_KERNEL, file_.path + ": no @triton.jit function named '" + kernel + "'");
    const ast::Node &def = *it->second;
    fn_.name = kernel;
    fn_.source_path = file_.path;
    b_.loc = loc_of(def);
    Env env;
    bind_params(def, args, env);
    lower_body(def.list("body"), env, kernel);
    finish_specializations();
    std::string problem = ir::verify(fn_);
    if (!problem.empty())
        fail(TAD_ERR_INTERNAL, file_.path + ": lowering '" + kernel + "' produced invalid IR: " + problem);
    return std::move(fn_);
}

bool Lowerer::is_constexpr_annotation(const ast::NodePtr &a) {
    if (!a) return false;
    if (a->is("Name")) return a->str("id") == "constexpr";
    if (a->is("Attribute")) return a->str("attr") == "constexpr";
    if (a->is("Constant")) {
        const ast::Value *v = a->find("value");
        return v && std::holds_alternative<std::string>(*v) &&
               std::get<std::string>(*v).find("constexpr") != std::string::npos;
    }
    return false;
}

void Lowerer::bind_params(const ast::Node &def, const std::vector<ArgBinding> &args, Env &env) {
    ast::NodePtr a = def.node("args");
    if (a->node("vararg") || a->node("kwarg")) unsupported(def, "*args/**kwargs in a @triton.jit signature", "");
    const ast::NodeList &params = a->list("args");
    const ast::NodeList &defaults = a->list("defaults");
    size_t first_default = params.size() - defaults.size();
    for (size_t i = 0; i < params.size(); ++i) {
        const ast::Node &p = *params[i];
        const std::string &name = p.str("arg");
        const ArgBinding *bound = nullptr;
        for (const auto &ab : args)
            if (ab.name == name) bound = &ab;
        bool cexpr = is_constexpr_annotation(p.node("annotation"));
        b_.loc = loc_of(p);
        if (!bound) {
            if (i < first_default)
                fail(TAD_ERR_INVALID_ARGUMENT,
                     at(p) + ": kernel parameter '" + name + "' has no value in the launch record");
            bind_default(name, *defaults[i - first_default], cexpr, env);
        } else if (cexpr || bound->kind == ArgBinding::None || bound->kind == ArgBinding::Bool ||
                   bound->kind == ArgBinding::Str || bound->kind == ArgBinding::DType) {
            env[name] = compile_time_param(p, *bound, cexpr);
        } else {
            bind_run_time_param(p, *bound, args, params, env);
        }
    }
}

// An unbound parameter takes its default, a compile-time value that comes from the parameter; a
// constexpr's number keeps the parameter's name as spelling.
void Lowerer::bind_default(const std::string &name, const ast::Node &value, bool cexpr, Env &env) {
    CV d = eval(value, env);
    d.deps = {name};
    d.symbolic = cexpr && (d.kind == CV::Int || d.kind == CV::Float);
    if (d.symbolic) d.s = name;
    if (d.kind == CV::Int && !d.symbolic) d.s = std::to_string(d.i);
    env[name] = d;
    compile_time_params_[name] = literal_of(d);
    if (cexpr) add_constexpr(name, d);
}

CV Lowerer::compile_time_param(const ast::Node &p, const ArgBinding &bound, bool cexpr) {
    const std::string &name = bound.name;
    CV c = bound.kind == ArgBinding::Int     ? CV::integer(bound.ival, name)
           : bound.kind == ArgBinding::Float ? CV::real(bound.fval)
           : bound.kind == ArgBinding::Bool  ? CV::boolean(bound.ival != 0)
           : bound.kind == ArgBinding::Str   ? CV::named(CV::Str, bound.sval)
           : bound.kind == ArgBinding::DType ? CV::dtype(bound.dtype)
                                             : CV{};
    if (bound.kind == ArgBinding::Tensor) unsupported(p, "tensor bound to tl.constexpr parameter '" + name + "'", "");
    // Numbers are constexprs, spelled by name; None, bools and strings are compile-time either way.
    c.deps = {name};
    c.symbolic = c.kind == CV::Int || c.kind == CV::Float;
    if (c.kind == CV::Float) c.s = name;
    compile_time_params_[name] = literal_of(c);
    if (cexpr) add_constexpr(name, c);
    return c;
}

void Lowerer::bind_run_time_param(const ast::Node &p, const ArgBinding &bound, const std::vector<ArgBinding> &args,
                                  const ast::NodeList &params, Env &env) {
    const std::string &name = bound.name;
    switch (bound.kind) {
    case ArgBinding::Tensor:
        env[name] = bound.desc_block.empty() || !host_descriptors_
                        ? CV::value(b_.param(name, ir::ParamKind::Pointer, Type{bound.dtype, true, {}}))
                        : host_tensor_desc(p, bound, args, params);
        break;
    case ArgBinding::Int: {
        bool wide = bound.ival > INT32_MAX || bound.ival < INT32_MIN;
        env[name] = CV::value(b_.param(name, ir::ParamKind::Int, Type{wide ? DType::I64 : DType::I32, false, {}}));
        break;
    }
    case ArgBinding::Float:
        env[name] = CV::value(b_.param(name, ir::ParamKind::Float, Type{DType::F32, false, {}}));
        break;
    default: break;
    }
}

// A constexpr of the kernel's signature (a host descriptor's block dims are ones too).
void Lowerer::add_constexpr(const std::string &name, const CV &c) {
    std::string literal = literal_of(c);
    compile_time_params_[name] = literal;
    if (!literal.empty()) fn_.constexprs.push_back({name, literal});
}

std::string Lowerer::literal_of(const CV &c) {
    switch (c.kind) {
    case CV::Int: return std::to_string(c.i);
    case CV::Bool: return c.i ? "True" : "False";
    case CV::Float: return python_float(c.f);
    case CV::Str: return py_literal(c.s);
    case CV::None: return "None";
    case CV::DTypeV:  // the launch's tl.dtype compares equal to it
        for (const auto &[name, dt] : dtype_names())
            if (dt == c.dt && name.rfind("fp", 0) != 0 && name != "bf16") return "tl." + name;
        return "";
    default: return "";
    }
}

std::string Lowerer::python_float(double v) {
    if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
    if (std::isnan(v)) return "float('nan')";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
}

}  // namespace tad::frontend::detail

namespace tad::frontend {

std::string tensor_desc_field(const std::string &param, const std::string &field, size_t d) {
    return param + "_" + field + std::to_string(d);
}

std::vector<ArgBinding> tensor_desc_scalars(const std::string &param, const std::vector<int64_t> &shape,
                                            const std::vector<int64_t> &strides, const std::vector<int64_t> &block) {
    std::vector<ArgBinding> out;
    for (const auto &[field, values] :
         {std::make_pair("shape", &shape), std::make_pair("stride", &strides), std::make_pair("block", &block)})
        for (size_t d = 0; d < values->size(); ++d) {
            ArgBinding b;
            b.kind = ArgBinding::Int;
            b.name = tensor_desc_field(param, field, d);
            b.ival = (*values)[d];
            out.push_back(b);
        }
    return out;
}

ir::Function lower_kernel(const KernelFile &kf, const std::string &kernel, const std::vector<ArgBinding> &args) {
    return detail::Lowerer(kf.file, kf.jit_functions, true).run(kernel, args);
}

ir::Function lower_kernel(const ast::File &file, const std::string &kernel, const std::vector<ArgBinding> &args,
                          bool host_descriptors) {
    const std::map<std::string, ast::NodePtr> jit = jit_functions_of(file);
    return detail::Lowerer(file, jit, host_descriptors).run(kernel, args);
}

}  // namespace tad::frontend
