// Standard base64 (RFC 4648, "+/" alphabet, "=" padding). The worker sends float64 tensor data this
// way: the raw bytes of a contiguous array in the machine's byte order.
#pragma once

#include <string>
#include <vector>

namespace tad::base64 {

std::string encode(const std::string &bytes);

// Strict: length a multiple of 4, padding only at the end, no whitespace. A bad input is a
// tad::Error (TAD_ERR_INVALID_ARGUMENT) naming the offending byte offset.
std::string decode(const std::string &text);

// decode(), then the bytes read as native float64 values; their count must be whole.
std::vector<double> decode_float64(const std::string &text);

}  // namespace tad::base64
