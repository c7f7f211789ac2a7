// Completeness of the op table (src/ir/ops.def): every op it lists is handled by every consumer:
// printed and parsed back, spelled by the emitter, run by the interpreter, lowered from its
// triton.language name, and given a derivative rule. A new row of the table shows up here without
// any change to this file.
#include <gtest/gtest.h>

#include <set>

#include "../common/error_of.h"
#include "../lower/lower_source.h"
#include "ad/rules.h"
#include "emit/emit.h"
#include "equal.h"
#include "ir/ir.h"
#include "specimens.h"

using namespace tad;
using tad::testing::all_specimens;
using tad::testing::Specimen;

namespace {

bool uses(const ir::Function &f, ir::OpKind k) {
    for (const ir::Op &op : f.ops)
        if (op.kind == k) return true;
    return false;
}

// The specimens that use op k.
std::vector<const Specimen *> specimens_of(const std::vector<Specimen> &all, ir::OpKind k) {
    std::vector<const Specimen *> out;
    for (const Specimen &s : all)
        if (uses(s.f, k)) out.push_back(&s);
    return out;
}

// What the emitted kernel must contain where the table spells the op (any text for CUSTOM).
std::vector<std::string> spelled_as(const ir::Spelling &s) {
    switch (s.form) {
    case ir::Spelling::Call:
    case ir::Spelling::Reduce: return {std::string(s.text) + "("};
    case ir::Spelling::Infix: return {std::string(" ") + s.text + " ", std::string(" ") + s.int_text + " "};
    case ir::Spelling::Prefix: return {s.text};
    case ir::Spelling::Custom: break;
    }
    return {""};
}

bool contains_any(const std::string &text, const std::vector<std::string> &parts) {
    for (const std::string &p : parts)
        if (text.find(p) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(OpTable, RowsFollowOpKindWithUniqueWordNames) {
    std::set<std::string> names;
    const std::vector<ir::OpInfo> &table = ir::op_table();
    ASSERT_EQ(table.size(), static_cast<size_t>(ir::OpKind::LoopResult) + 1);
    for (size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(static_cast<size_t>(table[i].kind), i) << table[i].name;
        EXPECT_TRUE(names.insert(table[i].name).second) << "printed name used twice: " << table[i].name;
        EXPECT_EQ(std::string(ir::op_name(table[i].kind)), table[i].name);
        const bool elementwise = table[i].cls == ir::OpClass::Unary || table[i].cls == ir::OpClass::Binary ||
                                 table[i].cls == ir::OpClass::Compare || table[i].cls == ir::OpClass::Logical;
        EXPECT_EQ(elementwise, table[i].float_lane || table[i].int_lane) << table[i].name << ": lanes iff elementwise";
        EXPECT_TRUE(table[i].cls == ir::OpClass::Unary || !*table[i].tl_name) << table[i].name;
    }
}

TEST(OpTable, EveryOpHasASpecimenThatRoundTrips) {
    const std::vector<Specimen> all = all_specimens();
    for (const ir::OpInfo &op : ir::op_table())
        EXPECT_FALSE(specimens_of(all, op.kind).empty())
            << "no specimen uses op " << op.name << " (add one to tests/ir/specimens.cpp)";
    for (const Specimen &s : all) {
        ASSERT_EQ(ir::verify(s.f), "") << s.name;
        const std::string text = ir::print(s.f);
        ir::Function back = ir::parse(text);
        EXPECT_EQ(tad::testing::function_differs(s.f, back), "") << s.name << "\n" << text;
        EXPECT_EQ(ir::print(back), text) << s.name;
    }
}

TEST(OpTable, EmitterSpellsEveryOp) {
    const std::vector<Specimen> all = all_specimens();
    for (const ir::OpInfo &op : ir::op_table())
        for (const Specimen *s : specimens_of(all, op.kind)) {
            std::string py;
            EXPECT_NO_THROW(py = emit::emit_kernel(s->f, "")) << op.name << " in " << s->name;
            EXPECT_TRUE(contains_any(py, spelled_as(op.spelling))) << op.name << " in " << s->name << ":\n" << py;
        }
}

TEST(OpTable, InterpreterRunsEverySpecimen) {
    for (const Specimen &s : all_specimens()) {
        auto [status, message] = tad::testing::error_of([&] { tad::testing::run_specimen(s.f); });
        EXPECT_EQ(status, TAD_OK) << s.name << ": " << message;
    }
}

// Where the table has no lane, the interpreter refuses the op rather than computing something.
TEST(OpTable, InterpreterRefusesOpsWithoutALane) {
    for (const ir::OpInfo &op : ir::op_table()) {
        if (!op.float_lane && !op.int_lane) continue;
        for (ir::DType t : {ir::DType::F32, ir::DType::I32}) {
            const bool defined = t == ir::DType::F32 ? op.float_lane : op.int_lane;
            auto [status, message] = tad::testing::error_of(
                [&] { tad::testing::run_specimen(tad::testing::elementwise_specimen(op.kind, t)); });
            if (defined) {
                EXPECT_EQ(status, TAD_OK) << op.name << " on " << ir::dtype_name(t) << ": " << message;
            } else {
                const std::string want =
                    std::string("interp: no ") + op.name + " on " + ir::dtype_name(t) + " operands";
                EXPECT_NE(message.find(want), std::string::npos) << op.name << ": " << message;
            }
        }
    }
}

TEST(OpTable, EveryOpHasARule) {
    for (const ir::OpInfo &op : ir::op_table()) {
        const ad::Rule *r = ad::rule_for(op.kind);
        ASSERT_NE(r, nullptr) << "no rule for " << op.name << " in src/ad/rules.cpp";
        EXPECT_EQ(r->kind, op.kind);
    }
}

namespace {

// The calls that must lower to op: tl.<tl name> and libdevice.<tl name>, and the emitter's spelling
// of an elementwise op spelled as a call (so that emitted code reads back as the same op).
std::vector<std::string> calls_lowering_to(const ir::OpInfo &op) {
    std::vector<std::string> calls;
    if (*op.tl_name) calls = {std::string("tl.") + op.tl_name, std::string("libdevice.") + op.tl_name};
    const bool elementwise = op.cls == ir::OpClass::Unary || op.cls == ir::OpClass::Binary;
    if (op.spelling.form == ir::Spelling::Call && elementwise) calls.push_back(op.spelling.text);
    return calls;
}

// A kernel that stores fn(x) (or fn(x, x)), lowered.
ir::Function lower_call(const std::string &fn, bool unary) {
    using K = frontend::ArgBinding::Kind;
    const std::string body =
        "@triton.jit\ndef k(X, Y, B: tl.constexpr):\n    offs = tl.arange(0, B)\n"
        "    x = tl.load(X + offs)\n    tl.store(Y + offs, " +
        fn + (unary ? "(x))\n" : "(x, x))\n");
    return test::lower_body(body, {test::arg(K::Tensor, "X"), test::arg(K::Tensor, "Y"), test::arg(K::Int, "B", 4)});
}

}  // namespace

TEST(OpTable, FrontendLowersTheTableNamesAndSpellings) {
    for (const ir::OpInfo &op : ir::op_table())
        for (const std::string &fn : calls_lowering_to(op)) {
            ir::Function f;
            ASSERT_NO_THROW(f = lower_call(fn, op.cls == ir::OpClass::Unary)) << fn;
            EXPECT_TRUE(uses(f, op.kind)) << fn << " does not lower to " << op.name << ":\n" << ir::print(f);
        }
}
