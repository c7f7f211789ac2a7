#include "support/json.h"

#include <cjson/cJSON.h>

#include <cmath>

#include "support/error.h"

namespace tad {

namespace {
[[noreturn]] void type_error(const char *want, const cJSON *n) {
    std::string name = (n && n->string) ? std::string(" '") + n->string + "'" : "";
    fail(TAD_ERR_INVALID_ARGUMENT, std::string("JSON value") + name + " is not " + want);
}
cJSON *need(cJSON *n) {
    if (!n) fail(TAD_ERR_INTERNAL, "out of memory building JSON");
    return n;
}
}  // namespace

bool JsonRef::is_null() const { return node_ && cJSON_IsNull(node_); }
bool JsonRef::is_object() const { return node_ && cJSON_IsObject(node_); }
bool JsonRef::is_array() const { return node_ && cJSON_IsArray(node_); }
bool JsonRef::is_string() const { return node_ && cJSON_IsString(node_); }
bool JsonRef::is_number() const { return node_ && cJSON_IsNumber(node_); }
bool JsonRef::is_bool() const { return node_ && cJSON_IsBool(node_); }

JsonRef JsonRef::get(const std::string &key) const {
    if (!is_object()) return JsonRef();
    return JsonRef(cJSON_GetObjectItemCaseSensitive(node_, key.c_str()));
}

JsonRef JsonRef::at(const std::string &key) const {
    JsonRef r = get(key);
    if (!r.valid()) fail(TAD_ERR_INVALID_ARGUMENT, "JSON object has no member '" + key + "'");
    return r;
}

size_t JsonRef::size() const {
    return (is_array() || is_object()) ? static_cast<size_t>(cJSON_GetArraySize(node_)) : 0;
}

JsonRef JsonRef::operator[](size_t i) const {
    if (!is_array() && !is_object()) type_error("an array", node_);
    return JsonRef(cJSON_GetArrayItem(node_, static_cast<int>(i)));
}

std::vector<std::string> JsonRef::keys() const {
    std::vector<std::string> out;
    if (!is_object()) return out;
    for (cJSON *c = node_->child; c; c = c->next) out.emplace_back(c->string ? c->string : "");
    return out;
}

std::string JsonRef::key() const { return (node_ && node_->string) ? node_->string : ""; }

std::string JsonRef::str() const {
    if (!is_string()) type_error("a string", node_);
    return node_->valuestring;
}

double JsonRef::num() const {
    if (!is_number()) type_error("a number", node_);
    return node_->valuedouble;
}

int64_t JsonRef::integer() const {
    double v = num();
    if (v != std::floor(v)) type_error("an integer", node_);
    return static_cast<int64_t>(v);
}

bool JsonRef::boolean() const {
    if (!is_bool()) type_error("a boolean", node_);
    return cJSON_IsTrue(node_);
}

std::string JsonRef::str_or(const std::string &key, const std::string &dflt) const {
    JsonRef r = get(key);
    return (!r.valid() || r.is_null()) ? dflt : r.str();
}
double JsonRef::num_or(const std::string &key, double dflt) const {
    JsonRef r = get(key);
    return (!r.valid() || r.is_null()) ? dflt : r.num();
}
int64_t JsonRef::int_or(const std::string &key, int64_t dflt) const {
    JsonRef r = get(key);
    return (!r.valid() || r.is_null()) ? dflt : r.integer();
}
bool JsonRef::bool_or(const std::string &key, bool dflt) const {
    JsonRef r = get(key);
    return (!r.valid() || r.is_null()) ? dflt : r.boolean();
}

static JsonRef replace(cJSON *obj, const std::string &key, cJSON *item) {
    need(item);
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(item);
        type_error("an object", obj);
    }
    if (cJSON_GetObjectItemCaseSensitive(obj, key.c_str()))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key.c_str(), item);
    else
        cJSON_AddItemToObject(obj, key.c_str(), item);
    return JsonRef(item);
}

JsonRef JsonRef::set(const std::string &key, const std::string &v) const {
    return replace(node_, key, cJSON_CreateString(v.c_str()));
}
JsonRef JsonRef::set(const std::string &key, const char *v) const { return set(key, std::string(v)); }
JsonRef JsonRef::set(const std::string &key, double v) const {
    // JSON has no NaN/Inf: they are written as null so that readers see "no value".
    return replace(node_, key, std::isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}
JsonRef JsonRef::set(const std::string &key, int64_t v) const {
    return replace(node_, key, cJSON_CreateNumber(static_cast<double>(v)));
}
JsonRef JsonRef::set_bool(const std::string &key, bool v) const { return replace(node_, key, cJSON_CreateBool(v)); }
JsonRef JsonRef::set_null(const std::string &key) const { return replace(node_, key, cJSON_CreateNull()); }
JsonRef JsonRef::set_object(const std::string &key) const { return replace(node_, key, cJSON_CreateObject()); }
JsonRef JsonRef::set_array(const std::string &key) const { return replace(node_, key, cJSON_CreateArray()); }
JsonRef JsonRef::set_copy(const std::string &key, JsonRef v) const {
    return replace(node_, key, cJSON_Duplicate(v.raw(), 1));
}

static void append(cJSON *arr, cJSON *item) {
    need(item);
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(item);
        type_error("an array", arr);
    }
    cJSON_AddItemToArray(arr, item);
}

JsonRef JsonRef::push_object() const {
    cJSON *o = cJSON_CreateObject();
    append(node_, o);
    return JsonRef(o);
}
JsonRef JsonRef::push_array() const {
    cJSON *o = cJSON_CreateArray();
    append(node_, o);
    return JsonRef(o);
}
void JsonRef::push(const std::string &v) const { append(node_, cJSON_CreateString(v.c_str())); }
void JsonRef::push(double v) const { append(node_, std::isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull()); }
void JsonRef::push(int64_t v) const { append(node_, cJSON_CreateNumber(static_cast<double>(v))); }
void JsonRef::push_copy(JsonRef v) const { append(node_, cJSON_Duplicate(v.raw(), 1)); }
void JsonRef::remove(const std::string &key) const {
    if (is_object()) cJSON_DeleteItemFromObjectCaseSensitive(node_, key.c_str());
}

std::string JsonRef::dump(bool pretty) const {
    if (!node_) return "null";
    char *s = pretty ? cJSON_Print(node_) : cJSON_PrintUnformatted(node_);
    if (!s) fail(TAD_ERR_INTERNAL, "out of memory printing JSON");
    std::string out(s);
    cJSON_free(s);
    return out;
}

Json Json::object() { return Json(need(cJSON_CreateObject())); }
Json Json::array() { return Json(need(cJSON_CreateArray())); }
Json Json::copy(JsonRef v) { return Json(need(cJSON_Duplicate(v.raw(), 1))); }

Json Json::parse(const std::string &text, const std::string &what) {
    const char *end = nullptr;
    cJSON *n = cJSON_ParseWithLengthOpts(text.c_str(), text.size(), &end, 0);
    if (!n) {
        size_t at = end ? static_cast<size_t>(end - text.c_str()) : 0;
        fail(TAD_ERR_INVALID_ARGUMENT, what + ": invalid JSON near byte " + std::to_string(at));
    }
    Json parsed(n);
    // cJSON stops after the first value; what follows must be white space only.
    const size_t rest = text.find_first_not_of(" \t\r\n", static_cast<size_t>(end - text.c_str()));
    if (rest != std::string::npos)
        fail(TAD_ERR_INVALID_ARGUMENT, what + ": text after the JSON value at byte " + std::to_string(rest));
    return parsed;
}

Json::Json(Json &&o) noexcept : JsonRef(o.node_) { o.node_ = nullptr; }
Json &Json::operator=(Json &&o) noexcept {
    if (this != &o) {
        cJSON_Delete(node_);
        node_ = o.node_;
        o.node_ = nullptr;
    }
    return *this;
}
Json::~Json() { cJSON_Delete(node_); }

}  // namespace tad
