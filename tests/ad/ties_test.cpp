// Tie rules, at the exact kinks: softplus written as max(z, 0) + log(1 + exp(-|z|)) is smooth, so
// its gradient at z = 0 must be 1/2 (found on the GPU with float16 inputs, where z = 0 is common).
#include <gtest/gtest.h>

#include <cmath>

#include "ad/forward.h"
#include "ad/reverse.h"
#include "interp/interp.h"
#include "passes/passes.h"

using namespace tad;

namespace {

ir::Function softplus_kernel() {
    ir::Function f;
    f.name = "softplus";
    ir::Builder b(f);
    std::vector<ir::Dim> shape{{4, "4"}};
    ir::ValueId X = b.param("X", ir::ParamKind::Pointer, ir::Type{ir::DType::F32, true, {}});
    ir::ValueId Y = b.param("Y", ir::ParamKind::Pointer, ir::Type{ir::DType::F32, true, {}});
    ir::ValueId offs = b.arange(0, 4, "4");
    ir::ValueId z = b.load(b.add_ptr(b.broadcast(X, shape), offs), ir::kNoValue, ir::kNoValue);
    auto c = [&](double v) { return b.broadcast(b.constant(v, ir::DType::F32), shape); };
    ir::ValueId relu = b.binary(ir::OpKind::Maximum, z, c(0));
    ir::ValueId tail = b.unary(
        ir::OpKind::Log, b.binary(ir::OpKind::Add, c(1),
                                  b.unary(ir::OpKind::Exp, b.unary(ir::OpKind::Neg, b.unary(ir::OpKind::Abs, z)))));
    b.store(b.add_ptr(b.broadcast(Y, shape), offs), b.binary(ir::OpKind::Add, relu, tail), ir::kNoValue);
    return passes::cse(f);
}

const std::vector<double> kZ = {0.0, 0.0, 1.5, -2.0};  // two exact kinks

}  // namespace

TEST(Ties, ReverseModeGradientOfSoftplusAtItsKinkIsOneHalf) {
    ir::Function f = softplus_kernel();
    ad::GradSpec spec{{"X"}, {"Y"}};
    ad::Backward bwd = ad::reverse(f, spec, passes::plan_gradient_writes(f, spec.wrt, spec.outputs), "bwd");
    interp::Memory m;
    std::map<std::string, int> buf = {{"X", m.add({"x", ir::DType::F32, kZ})},
                                      {"DX", m.add({"dx", ir::DType::F32, std::vector<double>(4, 0.0)})},
                                      {"DY", m.add({"dy", ir::DType::F32, std::vector<double>(4, 1.0)})}};
    std::vector<interp::ArgValue> args;
    for (const ir::Param &p : bwd.fn.params) args.push_back(interp::ArgValue::pointer(buf.at(p.name)));
    interp::run(bwd.fn, args, {1, 1, 1}, m);
    for (size_t i = 0; i < kZ.size(); ++i)
        EXPECT_NEAR(m.at(buf.at("DX")).data[i], 1.0 / (1.0 + std::exp(-kZ[i])), 1e-12) << "z = " << kZ[i];
}

TEST(Ties, ForwardModeAgreesAtTheKink) {
    ir::Function f = softplus_kernel();
    ad::Forward jvp = ad::jvp(f, ad::GradSpec{{"X"}, {"Y"}}, "jvp");
    interp::Memory m;
    std::map<std::string, int> buf = {{"X", m.add({"x", ir::DType::F32, kZ})},
                                      {"DX", m.add({"dx", ir::DType::F32, std::vector<double>(4, 1.0)})},
                                      {"Y", m.add({"y", ir::DType::F32, std::vector<double>(4, NAN)})},
                                      {"DY", m.add({"dy", ir::DType::F32, std::vector<double>(4, NAN)})}};
    std::vector<interp::ArgValue> args;
    for (const ir::Param &p : jvp.fn.params) args.push_back(interp::ArgValue::pointer(buf.at(p.name)));
    interp::run(jvp.fn, args, {1, 1, 1}, m);
    for (size_t i = 0; i < kZ.size(); ++i)
        EXPECT_NEAR(m.at(buf.at("DY")).data[i], 1.0 / (1.0 + std::exp(-kZ[i])), 1e-12) << "z = " << kZ[i];
}
