#include "json_util.h"

#include "errors.h"
#include "tad.h"

namespace tad_cli {

JsonPtr parse_json(const std::string &text) { return JsonPtr(cJSON_ParseWithOpts(text.c_str(), nullptr, 1)); }

JsonPtr parse_report(const std::string &text) {
    JsonPtr j = parse_json(text);
    if (!cJSON_IsObject(j.get()))
        throw Failure{TAD_ERR_INTERNAL, "the library returned a report that is not a JSON object"};
    return j;
}

std::string compact(const cJSON *node) {
    char *s = cJSON_PrintUnformatted(node);
    if (!s) throw Failure{TAD_ERR_INTERNAL, "out of memory printing JSON"};
    std::string out = s;
    cJSON_free(s);
    return out;
}

std::string text_of(const cJSON *obj, const char *key, const std::string &dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

std::optional<double> number_of(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v)) return std::nullopt;
    return v->valuedouble;
}

}  // namespace tad_cli
