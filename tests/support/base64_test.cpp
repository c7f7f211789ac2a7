#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/base64.h"
#include "support/error.h"

namespace b64 = tad::base64;

namespace {
// The status and text of the tad::Error that decode(text) throws.
std::pair<int, std::string> decode_error(const std::string &text) {
    try {
        b64::decode(text);
    } catch (const tad::Error &e) {
        return {e.status(), e.what()};
    }
    return {TAD_OK, "no error"};
}
}  // namespace

TEST(Base64, Rfc4648Vectors) {
    const std::vector<std::pair<std::string, std::string>> cases = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"}};
    for (const auto &[plain, coded] : cases) {
        EXPECT_EQ(b64::encode(plain), coded) << plain;
        EXPECT_EQ(b64::decode(coded), plain) << coded;
    }
}

TEST(Base64, RoundTripsEveryByteValueAtEveryTailLength) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (size_t len = 250; len <= 256; ++len) {
        std::string bytes = all.substr(0, len);
        EXPECT_EQ(b64::decode(b64::encode(bytes)), bytes) << len;
    }
}

TEST(Base64, RejectsMalformedInputWithOffset) {
    EXPECT_EQ(decode_error("Zm9"), std::make_pair(int(TAD_ERR_INVALID_ARGUMENT),
                                                  std::string("invalid base64: length 3 is not a multiple of 4")));
    EXPECT_EQ(decode_error("Zm9v!A==").second, "invalid base64: unexpected character at byte 4");
    EXPECT_EQ(decode_error("Zg=A").second, "invalid base64: unexpected character at byte 2");
    EXPECT_EQ(decode_error("Zg==Zm9v").second, "invalid base64: unexpected character at byte 2");
    EXPECT_EQ(decode_error("====").second, "invalid base64: unexpected character at byte 0");
    EXPECT_EQ(decode_error("Zm9v\nZm9v").second, "invalid base64: length 9 is not a multiple of 4");
}

TEST(Base64, DecodesFloat64AsPythonEncodesThem) {
    // base64.b64encode(struct.pack('<3d', 1.0, -2.5, 1e300)) in Python, on a little-endian host.
    std::vector<double> v = b64::decode_float64("AAAAAAAA8D8AAAAAAAAEwJx1AIg85Dd+");
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0], 1.0);
    EXPECT_EQ(v[1], -2.5);
    EXPECT_EQ(v[2], 1e300);
    EXPECT_TRUE(b64::decode_float64("").empty());
}

TEST(Base64, Float64NeedsWholeValues) {
    try {
        b64::decode_float64("AAAAAA==");
        FAIL() << "4 bytes accepted as float64 data";
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
        EXPECT_STREQ(e.what(), "invalid base64: 4 bytes are not a whole number of float64 values");
    }
}
