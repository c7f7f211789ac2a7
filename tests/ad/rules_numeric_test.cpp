// Each rule's backward, run on the interpreter in float64, against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ad/reverse.h"
#include "interp/interp.h"
#include "rule_cases.h"

using namespace tad;

namespace {

int64_t numel(const std::vector<ir::Dim> &shape) {
    int64_t n = 1;
    for (const auto &d : shape) n *= d.value;
    return n;
}

class RuleNumeric : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleNumeric, MatchesCentralDifferences) {
    const auto &c = tad::testing::rule_cases()[GetParam()];
    ir::Function f = passes::cse(tad::testing::rule_kernel(c));
    ad::GradSpec spec;
    for (size_t i = 0; i < c.inputs.size(); ++i) spec.wrt.push_back("X" + std::to_string(i));
    spec.outputs = {"Y"};
    ad::Backward bwd = ad::reverse(f, spec, passes::plan_gradient_writes(f, spec.wrt, spec.outputs), "bwd");

    std::mt19937_64 rng(GetParam() + 1);
    std::uniform_real_distribution<double> in(c.lo, c.hi);
    std::normal_distribution<double> normal;
    interp::Memory mem;
    std::vector<int> xs;
    for (const auto &shape : c.inputs) {
        interp::Buffer b{"x", ir::DType::F32, std::vector<double>(static_cast<size_t>(numel(shape)))};
        for (double &v : b.data) v = in(rng);
        xs.push_back(mem.add(b));
    }
    const ir::Type &yt = f.type(f.ops.back().operands[1]);
    int y = mem.add({"y", ir::DType::F32, std::vector<double>(static_cast<size_t>(yt.numel()), NAN)});
    std::vector<double> u(static_cast<size_t>(yt.numel()));
    for (double &v : u) v = normal(rng);

    auto loss = [&](interp::Memory m) {
        std::vector<interp::ArgValue> args;
        for (int x : xs) args.push_back(interp::ArgValue::pointer(x));
        args.push_back(interp::ArgValue::pointer(y));
        interp::run(f, args, {1, 1, 1}, m);
        double s = 0;
        for (size_t i = 0; i < u.size(); ++i) s += u[i] * m.at(y).data[i];
        return s;
    };

    // Backward: arguments follow the backward's own parameter order.
    interp::Memory bm = mem;
    std::map<std::string, int> buffers;
    for (size_t i = 0; i < xs.size(); ++i) {
        buffers["X" + std::to_string(i)] = xs[i];
        buffers["DX" + std::to_string(i)] = bm.add({"dx", ir::DType::F32, std::vector<double>(mem.at(xs[i]).data.size(), 0.0)});
    }
    buffers["DY"] = bm.add({"dy", ir::DType::F32, u});
    std::vector<interp::ArgValue> bargs;
    for (const ir::Param &p : bwd.fn.params) bargs.push_back(interp::ArgValue::pointer(buffers.at(p.name)));
    interp::run(bwd.fn, bargs, {1, 1, 1}, bm);

    const double h = 1e-6;
    for (size_t i = 0; i < xs.size(); ++i) {
        const std::vector<double> &g = bm.at(buffers.at("DX" + std::to_string(i))).data;
        for (size_t e = 0; e < g.size(); ++e) {
            interp::Memory plus = mem, minus = mem;
            plus.at(xs[i]).data[e] += h;
            minus.at(xs[i]).data[e] -= h;
            double fd = (loss(plus) - loss(minus)) / (2 * h);
            EXPECT_NEAR(g[e], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << c.name << ": d/dX" << i << "[" << e << "]";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleNumeric, ::testing::Range<size_t>(0, tad::testing::rule_cases().size()),
                         [](const auto &info) { return tad::testing::rule_cases()[info.param].name; });

}  // namespace
