#include "harness.h"

#include <algorithm>
#include <cmath>

#include "ad/forward.h"
#include "interp/interp.h"
#include "passes/passes.h"

namespace tad::testing {

namespace {

using ir::DType;
using ir::OpKind;
using ir::ValueId;

std::vector<double> uniform(size_t n, double lo, double hi, std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> in(lo, hi);
    std::vector<double> out(n);
    for (double &x : out) x = in(rng);
    return out;
}

ValueId pointer(ir::Builder &b, const std::string &name) {
    return b.param(name, ir::ParamKind::Pointer, ir::Type{DType::F32, true, {}});
}

// ptr[off] for a tile of offsets `off`.
ValueId at(ir::Builder &b, ValueId ptr, ValueId off) {
    return b.add_ptr(b.broadcast(ptr, b.func().type(off).shape), off);
}

ValueId zeros(ir::Builder &b, const std::vector<ir::Dim> &shape) {
    return b.broadcast(b.constant(0, DType::F32), shape);
}

// A backward's tape (ad::TapeSizing): `data` is the tape, or the sizing kernel's per-program needs
// while that runs; programs' tapes are `stride` elements apart.
struct Tape {
    int64_t stride = 0;
    std::vector<double> data;
};

// Runs `fn`, whose parameters are described by `origins`, on the buffers of the forward parameters
// (`primal`) and of their shadows (`shadow`), both updated in place, and on `tape`'s.
void launch(const Problem &p, const ir::Function &fn, const std::vector<ad::ParamOrigin> &origins, Buffers &primal,
            Buffers &shadow, Tape *tape = nullptr) {
    interp::Memory mem;
    std::map<std::pair<bool, std::string>, int> ids;  // (is shadow, forward parameter) -> buffer
    std::vector<interp::ArgValue> args;
    int tape_id = -1;
    for (size_t i = 0; i < fn.params.size(); ++i) {
        const ir::Param &param = fn.params[i];
        ad::ParamOrigin::Kind kind = origins[i].kind;
        if (kind == ad::ParamOrigin::TapeStride) {
            args.push_back(interp::ArgValue::integer(tape->stride));
            continue;
        }
        if (kind == ad::ParamOrigin::Tape || kind == ad::ParamOrigin::TapeNeed) {
            tape_id = mem.add({param.name, fn.type(param.value).elem, tape->data});
            args.push_back(interp::ArgValue::pointer(tape_id));
            continue;
        }
        if (param.kind != ir::ParamKind::Pointer) {
            args.push_back(interp::ArgValue::integer(p.ints.at(param.name)));
            continue;
        }
        bool is_shadow = origins[i].kind == ad::ParamOrigin::Shadow;
        auto key = std::make_pair(is_shadow, origins[i].primal);
        if (!ids.count(key))
            ids[key] = mem.add({param.name, fn.type(param.value).elem, (is_shadow ? shadow : primal).at(key.second)});
        args.push_back(interp::ArgValue::pointer(ids[key]));
    }
    interp::run(fn, args, p.grid, mem);
    for (const auto &[key, id] : ids) (key.first ? shadow : primal)[key.second] = mem.at(id).data;
    if (tape_id >= 0) tape->data = mem.at(tape_id).data;
}

Buffers only(const Buffers &all, const std::vector<std::string> &names) {
    Buffers out;
    for (const std::string &n : names) out[n] = all.at(n);
    return out;
}

Buffers zeros_like(const Problem &p, const std::vector<std::string> &names) {
    Buffers out;
    for (const std::string &n : names) out[n] = std::vector<double>(p.memory.at(n).size(), 0.0);
    return out;
}

}  // namespace

Buffers run_forward(const Problem &p, const Buffers &memory) {
    std::vector<ad::ParamOrigin> origins;
    for (const ir::Param &param : p.fwd.params) origins.push_back({ad::ParamOrigin::Primal, param.name});
    Buffers primal = memory, none;
    launch(p, p.fwd, origins, primal, none);
    return only(primal, p.spec.outputs);
}

Buffers run_jvp(const Problem &p, const Buffers &v) {
    ad::Forward t = ad::jvp(p.fwd, p.spec, p.fwd.name + "_jvp");
    Buffers primal = p.memory, shadow = zeros_like(p, p.spec.outputs);
    for (const auto &[name, data] : v) shadow[name] = data;
    launch(p, t.fn, t.origins, primal, shadow);
    return only(shadow, p.spec.outputs);
}

Buffers run_vjp(const Problem &p, const Buffers &u) {
    auto plan = passes::plan_gradient_writes(p.fwd, p.spec.wrt, p.spec.outputs);
    ad::Backward bwd = ad::reverse(p.fwd, p.spec, plan, p.fwd.name + "_bwd");
    Buffers primal = p.memory, shadow = zeros_like(p, p.spec.wrt);
    for (const auto &[name, data] : u) shadow[name] = data;
    Tape tape;
    if (bwd.tape) {  // as the launcher does: size, then give every program the largest need
        size_t programs = static_cast<size_t>(p.grid[0] * p.grid[1] * p.grid[2]);
        tape.data.assign(programs, 0.0);
        Buffers sizing_primal = p.memory, none;
        launch(p, bwd.tape->fn, bwd.tape->origins, sizing_primal, none, &tape);
        tape.stride = static_cast<int64_t>(*std::max_element(tape.data.begin(), tape.data.end()));
        tape.data.assign(programs * static_cast<size_t>(tape.stride), NAN);
    }
    launch(p, bwd.fn, bwd.origins, primal, shadow, &tape);
    return only(shadow, p.spec.wrt);
}

std::pair<Buffers, Buffers> perturbed(const Buffers &memory, const Buffers &v, double h) {
    Buffers plus = memory, minus = memory;
    for (const auto &[name, dir] : v)
        for (size_t i = 0; i < dir.size(); ++i) {
            plus[name][i] += h * dir[i];
            minus[name][i] -= h * dir[i];
        }
    return {plus, minus};
}

Buffers random_like(const Problem &p, const std::vector<std::string> &names, std::mt19937_64 &rng) {
    std::normal_distribution<double> normal;
    Buffers out = zeros_like(p, names);
    for (auto &[name, data] : out)
        for (double &x : data) x = normal(rng);
    return out;
}

Dot dot(const Buffers &a, const Buffers &b) {
    Dot d;
    for (const auto &[name, data] : a)
        for (size_t i = 0; i < data.size(); ++i) {
            double term = data[i] * b.at(name).at(i);
            d.value += term;
            d.magnitude += std::abs(term);
        }
    return d;
}

Problem rule_problem(const RuleCase &c, std::mt19937_64 &rng) {
    Problem p;
    p.fwd = passes::cse(rule_kernel(c));
    std::uniform_real_distribution<double> in(c.lo, c.hi);
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        std::string name = "X" + std::to_string(i);
        ir::Type t{ir::DType::F32, false, c.inputs[i]};
        std::vector<double> &data = p.memory[name] = std::vector<double>(static_cast<size_t>(t.numel()));
        for (double &x : data) x = in(rng);
        p.spec.wrt.push_back(name);
    }
    const ir::Op &store = p.fwd.ops.back();
    p.memory["Y"] = std::vector<double>(static_cast<size_t>(p.fwd.type(store.operands[1]).numel()), 0.0);
    p.spec.outputs = {"Y"};
    return p;
}

Problem layer_norm_problem(std::mt19937_64 &rng) {
    const int64_t rows = 3, stride = 7, n = 6;
    const std::vector<ir::Dim> lanes{{8, "BLOCK_N"}};
    ir::Function f;
    f.name = "layer_norm";
    f.source_path = "harness.cpp";
    f.constexprs = {{"BLOCK_N", "8"}};
    ir::Builder b(f);
    ValueId X = pointer(b, "X"), W = pointer(b, "W"), B = pointer(b, "B"), Y = pointer(b, "Y");
    ValueId Mean = pointer(b, "Mean"), Rstd = pointer(b, "Rstd");
    ValueId S = b.param("stride", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId N = b.param("N", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId row = b.program_id(0), cols = b.arange(0, 8, "BLOCK_N");
    ValueId mask = b.binary(OpKind::Lt, cols, b.broadcast(N, lanes));
    ValueId offs = b.binary(OpKind::Add, b.broadcast(b.binary(OpKind::Mul, row, S), lanes), cols);
    ValueId x = b.load(at(b, X, offs), mask, zeros(b, lanes));
    ValueId nf = b.cast(N, DType::F32);
    ValueId mean = b.binary(OpKind::Div, b.reduce(OpKind::ReduceSum, x, 0, false), nf);
    ValueId xc = b.where(mask, b.binary(OpKind::Sub, x, b.broadcast(mean, lanes)), zeros(b, lanes));
    ValueId var = b.binary(OpKind::Div, b.reduce(OpKind::ReduceSum, b.binary(OpKind::Mul, xc, xc), 0, false), nf);
    ValueId rstd = b.unary(OpKind::Rsqrt, b.binary(OpKind::Add, var, b.constant(1e-5, DType::F32)));
    b.store(b.add_ptr(Mean, row), mean, ir::kNoValue);
    b.store(b.add_ptr(Rstd, row), rstd, ir::kNoValue);
    ValueId w = b.load(at(b, W, cols), mask, ir::kNoValue), bias = b.load(at(b, B, cols), mask, ir::kNoValue);
    ValueId xhat = b.binary(OpKind::Mul, xc, b.broadcast(rstd, lanes));
    ValueId y = b.binary(OpKind::Add, b.binary(OpKind::Mul, xhat, w), bias);
    b.store(at(b, Y, offs), y, mask);
    for (auto [v, name] : {std::pair{x, "x"},
                           {mean, "mean"},
                           {xc, "xc"},
                           {var, "var"},
                           {rstd, "rstd"},
                           {w, "w"},
                           {bias, "b"},
                           {xhat, "xhat"},
                           {y, "y"}})
        f.values[v].name = name;

    Problem p;
    p.fwd = passes::cse(f);
    p.spec = {{"X", "W", "B"}, {"Y", "Mean"}};
    p.grid = {rows, 1, 1};
    p.ints = {{"stride", stride}, {"N", n}};
    p.memory = {{"X", uniform(rows * stride, -1, 1, rng)},
                {"W", uniform(n, 0.5, 1.5, rng)},
                {"B", uniform(n, -1, 1, rng)},
                {"Y", std::vector<double>(rows * stride, 0.0)},
                {"Mean", std::vector<double>(rows, 0.0)},
                {"Rstd", std::vector<double>(rows, 0.0)}};
    return p;
}

Problem masked_other_problem(std::mt19937_64 &rng) {
    const int64_t programs = 2, n = 5;
    const std::vector<ir::Dim> lanes{{8, "BLOCK"}};
    ir::Function f;
    f.name = "masked_other";
    f.source_path = "harness.cpp";
    f.constexprs = {{"BLOCK", "8"}};
    ir::Builder b(f);
    ValueId A = pointer(b, "A"), X = pointer(b, "X"), S = pointer(b, "S");
    ValueId N = b.param("N", ir::ParamKind::Int, ir::Type{DType::I32, false, {}});
    ValueId pid = b.program_id(0), cols = b.arange(0, 8, "BLOCK");
    ValueId a = b.load(at(b, A, cols), ir::kNoValue, ir::kNoValue);
    ValueId mask = b.binary(OpKind::Lt, cols, b.broadcast(N, lanes));
    ValueId row = b.binary(OpKind::Mul, pid, b.constant(8, DType::I32));
    ValueId offs = b.binary(OpKind::Add, b.broadcast(row, lanes), cols);
    ValueId x = b.load(at(b, X, offs), mask, b.binary(OpKind::Mul, a, a));
    ValueId s = b.reduce(OpKind::ReduceSum, b.binary(OpKind::Mul, b.unary(OpKind::Exp, x), a), 0, false);
    b.store(b.add_ptr(S, pid), s, ir::kNoValue);
    for (auto [v, name] : {std::pair{a, "a"}, {x, "x"}, {s, "s"}}) f.values[v].name = name;

    Problem p;
    p.fwd = passes::cse(f);
    p.spec = {{"A", "X"}, {"S"}};
    p.grid = {programs, 1, 1};
    p.ints = {{"N", n}};
    p.memory = {{"A", uniform(8, -1, 1, rng)},
                {"X", uniform(programs * 8, -1, 1, rng)},
                {"S", std::vector<double>(programs, 0.0)}};
    return p;
}

}  // namespace tad::testing
