// A small owning wrapper over cJSON (Debian's libcjson): reports, launch records and the worker
// protocol are all JSON. Json owns its cJSON tree; JsonRef views a node inside a tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct cJSON;

namespace tad {

class JsonRef {
public:
    explicit JsonRef(cJSON *node = nullptr) : node_(node) {}
    bool valid() const { return node_ != nullptr; }
    bool is_null() const;
    bool is_object() const;
    bool is_array() const;
    bool is_string() const;
    bool is_number() const;
    bool is_bool() const;

    // Member access; an invalid ref when absent (get) or a tad::Error naming `key` (at).
    JsonRef get(const std::string &key) const;
    JsonRef at(const std::string &key) const;
    bool has(const std::string &key) const { return get(key).valid(); }
    size_t size() const;  // array or object length
    JsonRef operator[](size_t i) const;  // array element
    std::vector<std::string> keys() const;
    std::string key() const;  // this node's name inside its parent object

    // Value access; a tad::Error if the node has another type.
    std::string str() const;
    double num() const;
    int64_t integer() const;
    bool boolean() const;
    // Defaults when the member is absent or null.
    std::string str_or(const std::string &key, const std::string &dflt) const;
    double num_or(const std::string &key, double dflt) const;
    int64_t int_or(const std::string &key, int64_t dflt) const;
    bool bool_or(const std::string &key, bool dflt) const;

    // Mutation (the ref must point into a tree this process owns).
    JsonRef set(const std::string &key, const std::string &v) const;
    JsonRef set(const std::string &key, const char *v) const;
    JsonRef set(const std::string &key, double v) const;
    JsonRef set(const std::string &key, int64_t v) const;
    JsonRef set(const std::string &key, int v) const { return set(key, static_cast<int64_t>(v)); }
    JsonRef set_bool(const std::string &key, bool v) const;
    JsonRef set_null(const std::string &key) const;
    JsonRef set_object(const std::string &key) const;  // returns the new member
    JsonRef set_array(const std::string &key) const;
    JsonRef set_copy(const std::string &key, JsonRef v) const;  // deep copy of v
    JsonRef push_object() const;
    JsonRef push_array() const;
    void push(const std::string &v) const;
    void push(double v) const;
    void push(int64_t v) const;
    void push_copy(JsonRef v) const;
    void remove(const std::string &key) const;

    std::string dump(bool pretty = false) const;
    cJSON *raw() const { return node_; }

protected:
    cJSON *node_;
};

class Json : public JsonRef {
public:
    Json() : JsonRef(nullptr) {}
    static Json object();
    static Json array();
    // tad::Error naming `what` on bad text, and on anything but white space after the value.
    static Json parse(const std::string &text, const std::string &what);
    static Json copy(JsonRef v);
    Json(Json &&o) noexcept;
    Json &operator=(Json &&o) noexcept;
    Json(const Json &) = delete;
    Json &operator=(const Json &) = delete;
    ~Json();

private:
    explicit Json(cJSON *owned) : JsonRef(owned) {}
};

}  // namespace tad
