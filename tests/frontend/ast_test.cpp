// The AST interface: accessors, construction, source slices and the dump format.
#include "frontend/ast.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "frontend/parser.h"

namespace ast = tad::ast;

namespace {

ast::NodePtr constant(ast::Value v) {
    ast::NodePtr n = ast::make("Constant", {1, 0, 1, 1});
    n->set("value", std::move(v));
    n->set("kind", ast::NoneValue{});
    return n;
}

std::string value_line(ast::Value v) {
    std::string d = ast::dump(*constant(std::move(v)), false);
    size_t begin = d.find("value: ") + 7;
    return d.substr(begin, d.find('\n', begin) - begin);
}

TEST(Ast, AccessorsReadFieldsByName) {
    ast::File f = tad::frontend::parse_source("t.py", "global a, b\nx = f(y)\n");
    const ast::NodePtr &glob = f.module->list("body")[0];
    EXPECT_TRUE(glob->is("Global"));
    EXPECT_EQ(glob->strings("names"), (ast::StringList{"a", "b"}));
    const ast::NodePtr &assign = f.module->list("body")[1];
    EXPECT_EQ(assign->list("targets")[0]->str("id"), "x");
    EXPECT_EQ(assign->node("type_comment"), nullptr);
    EXPECT_EQ(assign->node("value")->node("func")->str("id"), "f");
    EXPECT_EQ(assign->find("nonexistent"), nullptr);
    EXPECT_THROW(assign->list("value"), std::logic_error);
    EXPECT_THROW(assign->str("nonexistent"), std::logic_error);
    EXPECT_THROW(glob->list("names"), std::logic_error);
}

TEST(Ast, SetReplacesInPlaceOrAppends) {
    ast::NodePtr n = ast::make_noloc("Name");
    n->set("id", std::string("x"));
    n->set("ctx", ast::make_noloc("Load"));
    n->set("id", std::string("y"));
    ASSERT_EQ(n->fields.size(), 2u);
    EXPECT_EQ(n->fields[0].first, "id");
    EXPECT_EQ(n->str("id"), "y");
    EXPECT_FALSE(n->has_loc);
    EXPECT_TRUE(ast::make("Name", {1, 2, 3, 4})->has_loc);
}

TEST(Ast, SliceIsTheSourceTextOfALocation) {
    ast::File f = tad::frontend::parse_source("t.py", "x = 1\ny = [a,\n     b]  # c\r\n");
    EXPECT_EQ(f.source, "x = 1\ny = [a,\n     b]  # c\n");
    const ast::NodePtr &list = f.module->list("body")[1]->node("value");
    EXPECT_EQ(f.slice(list->loc), "[a,\n     b]");
    EXPECT_EQ(f.slice({1, 4, 1, 5}), "1");
    EXPECT_EQ(f.slice({9, 0, 9, 3}), "");
}

TEST(Ast, DumpFormat) {
    ast::File f = tad::frontend::parse_source("t.py", "del a[1:]\n");
    EXPECT_EQ(ast::dump(*f.module, true),
              "Module\n"
              "  body:\n"
              "    - Delete @1:0-1:9\n"
              "      targets:\n"
              "        - Subscript @1:4-1:9\n"
              "          value: Name @1:4-1:5\n"
              "            id: \"a\"\n"
              "            ctx: Load\n"
              "          slice: Slice @1:6-1:8\n"
              "            lower: Constant @1:6-1:7\n"
              "              value: 1\n"
              "              kind: None\n"
              "            upper: None\n"
              "            step: None\n"
              "          ctx: Del\n"
              "  type_ignores: []\n");
}

TEST(Ast, DumpScalarsLikePython) {
    EXPECT_EQ(value_line(ast::NoneValue{}), "None");
    EXPECT_EQ(value_line(ast::EllipsisValue{}), "...");
    EXPECT_EQ(value_line(true), "True");
    EXPECT_EQ(value_line(int64_t{-42}), "-42");
    EXPECT_EQ(value_line(ast::BigInt{"123456789012345678901234567890"}), "123456789012345678901234567890");
    EXPECT_EQ(value_line(std::string("a\"\\\n\t\x01\x7f\xC3\xA9\xF0\x9F\x98\x80")),
              "\"a\\\"\\\\\\n\\t\\u0001\\u007f\\u00e9\\ud83d\\ude00\"");
    EXPECT_EQ(value_line(std::string("\xED\xA0\x80")), "\"\\ud800\"");
    EXPECT_EQ(value_line(ast::Bytes{std::string("\x00\xff"
                                                "A",
                                                3)}),
              "b\"00ff41\"");
    EXPECT_EQ(value_line(ast::Imaginary{2.5}), "2.5j");
}

TEST(Ast, DumpFloatsAsPythonRepr) {
    const std::vector<std::pair<double, std::string>> cases = {{0.0, "0.0"},
                                                               {1.0, "1.0"},
                                                               {0.1, "0.1"},
                                                               {1.5, "1.5"},
                                                               {1e16, "1e+16"},
                                                               {1e15, "1000000000000000.0"},
                                                               {1e-4, "0.0001"},
                                                               {1e-5, "1e-05"},
                                                               {2.5e-320, "2.5e-320"},
                                                               {1.7976931348623157e308, "1.7976931348623157e+308"},
                                                               {123456789.123456789, "123456789.12345679"},
                                                               {-0.5, "-0.5"},
                                                               {1.0 / 0.0, "inf"}};
    for (const auto &[v, repr] : cases) EXPECT_EQ(value_line(v), repr) << repr;
}

TEST(Ast, DumpWithoutLocations) {
    ast::File f = tad::frontend::parse_source("t.py", "f(*a)\n");
    std::string d = ast::dump(*f.module, false);
    EXPECT_EQ(d.find('@'), std::string::npos);
    EXPECT_NE(d.find("- Starred\n"), std::string::npos);
}

}  // namespace
