// Reading the library's JSON (reports, snapshot lists) with cJSON: the CLI sees only tad.h, so it
// parses the documented schemas (docs/reports.md) itself.
#pragma once

#include <cjson/cJSON.h>

#include <memory>
#include <optional>
#include <string>

namespace tad_cli {

struct JsonDelete {
    void operator()(cJSON *j) const { cJSON_Delete(j); }
};
using JsonPtr = std::unique_ptr<cJSON, JsonDelete>;

// nullptr when the text is not one JSON value (white space around it allowed, nothing else).
JsonPtr parse_json(const std::string &text);
// A report from the library; a Failure (TAD_ERR_INTERNAL) when it is not a JSON object.
JsonPtr parse_report(const std::string &text);
std::string compact(const cJSON *node);  // the node as one-line JSON

// Members of an object; the default / nullopt when absent or of another type (null included).
std::string text_of(const cJSON *obj, const char *key, const std::string &dflt = "");
std::optional<double> number_of(const cJSON *obj, const char *key);

}  // namespace tad_cli
