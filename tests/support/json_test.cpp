#include <gtest/gtest.h>

#include "support/error.h"
#include "support/json.h"

using tad::Json;

TEST(Json, BuildDumpParseRoundTrip) {
    Json j = Json::object();
    j.set("name", "x");
    j.set("n", int64_t{3});
    auto arr = j.set_array("shape");
    arr.push(int64_t{4});
    arr.push(int64_t{64});
    Json back = Json::parse(j.dump(), "test");
    EXPECT_EQ(back.at("name").str(), "x");
    EXPECT_EQ(back.at("n").integer(), 3);
    ASSERT_EQ(back.at("shape").size(), 2u);
    EXPECT_EQ(back.at("shape")[1].integer(), 64);
}

TEST(Json, MissingMemberAndWrongTypeAreErrors) {
    Json j = Json::parse(R"({"a": "s"})", "test");
    EXPECT_THROW(j.at("b"), tad::Error);
    EXPECT_THROW(j.at("a").num(), tad::Error);
    EXPECT_EQ(j.int_or("b", 7), 7);
}

TEST(Json, InvalidTextNamesWhatWasParsed) {
    try {
        Json::parse("{\"a\": ", "worker reply");
        FAIL();
    } catch (const tad::Error &e) {
        EXPECT_NE(std::string(e.what()).find("worker reply: invalid JSON"), std::string::npos);
    }
}

// A value followed by anything but white space is refused: `{"M": 4} x` is not a dims object.
TEST(Json, TrailingTextIsRefused) {
    EXPECT_EQ(Json::parse(" {\"M\": 4} \n\t", "dims").at("M").integer(), 4);
    for (const char *text : {"{\"M\": 4} x", "{\"M\": 4}{}", "[1] ]", "1 2"}) {
        try {
            Json::parse(text, "dims");
            ADD_FAILURE() << text;
        } catch (const tad::Error &e) {
            EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
            EXPECT_EQ(std::string(e.what()).rfind("dims: text after the JSON value at byte ", 0), 0u) << e.what();
        }
    }
    try {
        Json::parse("{\"M\": 4}  garbage", "launch record");
        FAIL();
    } catch (const tad::Error &e) {
        EXPECT_STREQ(e.what(), "launch record: text after the JSON value at byte 10");
    }
}
