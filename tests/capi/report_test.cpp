// tad_report_passed / tad_report_number on reports shaped as docs/reports.md describes.
#include <gtest/gtest.h>

#include "tad.h"

namespace {

const char kVerify[] = R"({
  "kind": "verify", "mode": "cpu", "passed": false, "device": null,
  "results": [
    {"dims": {"M": 4, "N": 64}, "dtype": "float64", "status": "fail", "message": null,
     "method": "finite_differences",
     "grads": [{"name": "x", "shape": [4, 64], "max_abs_err": 1e-9, "max_rel_err": 2.5e-3,
                "ok": false},
               {"name": "w", "shape": [64], "max_abs_err": 0, "max_rel_err": 0, "ok": true}],
     "outputs": [{"index": 0, "max_abs_err": 0, "max_rel_err": 0}]}
  ],
  "summary": {"total": 1, "passed": 0, "failed": 1, "skipped": 0, "max_rel_err": 2.5e-3}
})";

const char kBench[] = R"({
  "kind": "bench", "device": "NVIDIA H100 80GB HBM3",
  "results": [{"dims": {"0": 7}, "dtype": "float16", "status": "ok", "fwd_ms": 0.5, "bwd_ms": 1.25,
               "ref_bwd_ms": null, "compiled_ref_bwd_ms": null, "bwd_gbps": null, "message": null}],
  "summary": {"median_bwd_speedup_vs_ref": null}
})";

double number(const char *report, const char *key) {
    double v = -1;
    EXPECT_EQ(tad_report_number(report, key, &v), TAD_OK) << key << ": " << tad_error_last();
    return v;
}

}  // namespace

TEST(Report, Passed) {
    int passed = 7;
    ASSERT_EQ(tad_report_passed(kVerify, &passed), TAD_OK);
    EXPECT_EQ(passed, 0);
    ASSERT_EQ(tad_report_passed(R"({"passed": true})", &passed), TAD_OK);
    EXPECT_EQ(passed, 1);
}

TEST(Report, PassedMissingOrNotBoolean) {
    int passed = 7;
    EXPECT_EQ(tad_report_passed(kBench, &passed), TAD_ERR_NOT_FOUND);
    EXPECT_STREQ(tad_error_last(), "key 'passed' not in report");
    EXPECT_EQ(tad_report_passed(R"({"passed": 1})", &passed), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_passed: key 'passed' is not a boolean");
    EXPECT_EQ(passed, 7);  // untouched on failure
}

TEST(Report, NumberByDottedPathWithArrayIndices) {
    EXPECT_EQ(number(kVerify, "summary.max_rel_err"), 2.5e-3);
    EXPECT_EQ(number(kVerify, "summary.total"), 1);
    EXPECT_EQ(number(kVerify, "results.0.grads.0.max_rel_err"), 2.5e-3);
    EXPECT_EQ(number(kVerify, "results.0.grads.1.shape.0"), 64);
    EXPECT_EQ(number(kBench, "results.0.bwd_ms"), 1.25);
    EXPECT_EQ(number(kBench, "results.0.dims.0"), 7);  // digits name a member of an object
}

TEST(Report, NumberMissingKeyIsNotFound) {
    double v = 42;
    for (const char *key : {"summary.nope", "results.1.bwd_ms", "results.x", "results.-1.bwd_ms",
                            "results.0.bwd_ms.deeper", "results.99999999999999999999"}) {
        EXPECT_EQ(tad_report_number(kBench, key, &v), TAD_ERR_NOT_FOUND) << key;
        EXPECT_EQ(std::string(tad_error_last()), std::string("key '") + key + "' not in report");
    }
    // null is a value that could not be measured: the caller handles it like a missing one.
    EXPECT_EQ(tad_report_number(kBench, "results.0.ref_bwd_ms", &v), TAD_ERR_NOT_FOUND);
    EXPECT_STREQ(tad_error_last(), "key 'results.0.ref_bwd_ms' not in report");
    EXPECT_EQ(v, 42);
}

TEST(Report, NumberOfAnotherTypeIsInvalid) {
    double v = 0;
    EXPECT_EQ(tad_report_number(kBench, "device", &v), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_number: key 'device' is not a number");
    EXPECT_EQ(tad_report_number(kVerify, "passed", &v), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(tad_report_number(kVerify, "summary", &v), TAD_ERR_INVALID_ARGUMENT);
}

TEST(Report, MalformedKeys) {
    double v = 0;
    for (const char *key : {"", ".summary", "summary.", "summary..total"}) {
        EXPECT_EQ(tad_report_number(kVerify, key, &v), TAD_ERR_INVALID_ARGUMENT) << key;
        EXPECT_EQ(std::string(tad_error_last()), std::string("tad_report_number: malformed key '") + key + "'");
    }
}

TEST(Report, TextThatIsNotJson) {
    double v = 0;
    int passed = 0;
    EXPECT_EQ(tad_report_number("{\"a\": ", "a", &v), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(tad_error_last()).rfind("report: invalid JSON", 0), 0u) << tad_error_last();
    EXPECT_EQ(tad_report_passed("", &passed), TAD_ERR_INVALID_ARGUMENT);
}

TEST(Report, NullArguments) {
    double v = 0;
    int passed = 0;
    EXPECT_EQ(tad_report_passed(nullptr, &passed), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_passed: report_json is NULL");
    EXPECT_EQ(tad_report_passed(kVerify, nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_passed: passed is NULL");
    EXPECT_EQ(tad_report_number(nullptr, "a", &v), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_number: report_json is NULL");
    EXPECT_EQ(tad_report_number(kVerify, nullptr, &v), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_number: key is NULL");
    EXPECT_EQ(tad_report_number(kVerify, "summary.total", nullptr), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(tad_error_last(), "tad_report_number: value is NULL");
}
