#include <cctype>
#include <sstream>

#include "ir/ir.h"

namespace tad::ir {

const char *dtype_name(DType t) {
    switch (t) {
    case DType::I1: return "i1";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    }
    return "?";
}

const char *dtype_triton(DType t) {
    switch (t) {
    case DType::I1: return "tl.int1";
    case DType::I32: return "tl.int32";
    case DType::I64: return "tl.int64";
    case DType::F16: return "tl.float16";
    case DType::BF16: return "tl.bfloat16";
    case DType::F32: return "tl.float32";
    case DType::F64: return "tl.float64";
    }
    return "?";
}

const char *dtype_torch(DType t) {
    switch (t) {
    case DType::I1: return "bool";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    }
    return "?";
}

bool dtype_is_float(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64; }

int dtype_rank(DType t) {
    switch (t) {
    case DType::I1: return 0;
    case DType::I32: return 1;
    case DType::I64: return 2;
    case DType::F16: return 1;
    case DType::BF16: return 1;
    case DType::F32: return 2;
    case DType::F64: return 3;
    }
    return 0;
}

bool dtype_from_torch(const std::string &name, DType *out) {
    static const std::pair<const char *, DType> table[] = {
        {"bool", DType::I1},       {"int32", DType::I32},   {"int64", DType::I64},   {"float16", DType::F16},
        {"bfloat16", DType::BF16}, {"float32", DType::F32}, {"float64", DType::F64}, {"int16", DType::I32},
        {"int8", DType::I32},      {"uint8", DType::I32},
    };
    for (const auto &e : table)
        if (name == e.first) {
            *out = e.second;
            return true;
        }
    return false;
}

int64_t Type::numel() const {
    int64_t n = 1;
    for (const Dim &d : shape) n *= d.value;
    return n;
}

Type Type::with_elem(DType e) const {
    Type t = *this;
    t.elem = e;
    t.is_ptr = false;
    return t;
}

Type Type::with_shape(std::vector<Dim> s) const {
    Type t = *this;
    t.shape = std::move(s);
    return t;
}

bool Type::same_shape(const Type &o) const {
    if (shape.size() != o.shape.size()) return false;
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i].value != o.shape[i].value) return false;
    return true;
}

bool Type::operator==(const Type &o) const { return elem == o.elem && is_ptr == o.is_ptr && same_shape(o); }

std::string Type::str() const {
    std::string s = is_ptr ? std::string("ptr<") + dtype_name(elem) + ">" : dtype_name(elem);
    if (shape.empty()) return s;
    s += "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ",";
        s += shape[i].expr;
    }
    return s + "]";
}

std::set<std::string> spelled_names(const std::string &e) {
    std::set<std::string> out;
    for (size_t i = 0; i < e.size();) {
        if (!(std::isalpha(static_cast<unsigned char>(e[i])) || e[i] == '_')) {
            bool number = std::isdigit(static_cast<unsigned char>(e[i]));
            for (++i; number && i < e.size() && (std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '.'); ++i) {}
            continue;
        }
        size_t j = i;
        while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_')) ++j;
        out.insert(e.substr(i, j - i));
        i = j;
    }
    return out;
}

bool broadcast_shapes(const std::vector<Dim> &a, const std::vector<Dim> &b, std::vector<Dim> *out) {
    size_t n = std::max(a.size(), b.size());
    std::vector<Dim> r(n);
    for (size_t i = 0; i < n; ++i) {
        const Dim *da = i < n - a.size() ? nullptr : &a[i - (n - a.size())];
        const Dim *db = i < n - b.size() ? nullptr : &b[i - (n - b.size())];
        if (!da)
            r[i] = *db;
        else if (!db)
            r[i] = *da;
        else if (da->value == db->value)
            r[i] = da->expr.size() <= db->expr.size() ? *da : *db;
        else if (da->value == 1)
            r[i] = *db;
        else if (db->value == 1)
            r[i] = *da;
        else
            return false;
    }
    *out = std::move(r);
    return true;
}

int Function::param_index(const std::string &n) const {
    for (size_t i = 0; i < params.size(); ++i)
        if (params[i].name == n) return static_cast<int>(i);
    return -1;
}

}  // namespace tad::ir
