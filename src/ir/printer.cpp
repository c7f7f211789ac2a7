#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "ir/ir.h"
#include "ir/text.h"
#include "support/identifier.h"

namespace tad::ir {

std::string text::number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

bool text::is_word(const std::string &s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.') return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
    return true;
}

std::string text::quoted(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return q + "\"";
}

std::string text::word_or_quoted(const std::string &s) { return is_word(s) ? s : quoted(s); }

std::string text::dim(const Dim &d) {
    const std::string value = std::to_string(d.value);
    if (d.expr == value) return value;
    return (is_identifier(d.expr) ? d.expr : quoted(d.expr)) + "=" + value;
}

std::string text::type(const Type &t) {
    std::string s = t.is_ptr ? std::string("ptr<") + dtype_name(t.elem) + ">" : dtype_name(t.elem);
    if (t.shape.empty()) return s;
    s += "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + dim(t.shape[i]);
    return s + "]";
}

ParamKind text::default_kind(const Type &t) {
    if (t.is_ptr) return ParamKind::Pointer;
    return dtype_is_float(t.elem) ? ParamKind::Float : ParamKind::Int;
}

const char *text::kind_name(ParamKind k) {
    switch (k) {
    case ParamKind::Pointer: return "pointer";
    case ParamKind::Int: return "int";
    case ParamKind::Float: return "float";
    }
    return "?";
}

bool text::leading_params(const Function &f) {
    size_t params = 0;
    for (const Op &op : f.ops) params += op.kind == OpKind::Param;
    if (params != f.params.size() || f.ops.size() < params) return false;
    for (size_t i = 0; i < params; ++i) {
        const Op &op = f.ops[i];
        const auto v = static_cast<ValueId>(i);
        if (op.kind != OpKind::Param || op.ival != static_cast<int64_t>(i) || op.result != v ||
            f.params[i].value != v || op.name != f.params[i].name || f.values[i].name != f.params[i].name)
            return false;
    }
    return true;
}

namespace {

void print_header(std::ostringstream &os, const Function &f, bool leading) {
    os << "func @" << text::word_or_quoted(f.name) << "(";
    const char *sep = "";
    for (const Param &p : f.params) {
        os << sep;
        if (!leading) os << "%" << p.value << " ";
        const Type &t = f.type(p.value);
        os << text::word_or_quoted(p.name) << ": " << text::type(t);
        if (p.kind != text::default_kind(t)) os << " kind=" << text::kind_name(p.kind);
        if (!p.final_of.empty()) os << " final_of=" << text::word_or_quoted(p.final_of);
        sep = ", ";
    }
    for (const Constexpr &c : f.constexprs) {
        os << sep << text::word_or_quoted(c.name) << ": constexpr = " << c.literal;
        sep = ", ";
    }
    os << ")";
    if (!f.specialized.empty()) {
        os << " specialized(";
        for (size_t i = 0; i < f.specialized.size(); ++i)
            os << (i ? ", " : "") << text::word_or_quoted(f.specialized[i]);
        os << ")";
    }
    os << " {\n";
}

// The label of operand k: the trailing operands are the mask and `other` when the op has them.
const char *operand_label(const Op &op, size_t k) {
    const size_t n = op.operands.size();
    if (op.has_other && k + 1 == n) return "other=";
    if (op.has_mask && k + 1 + (op.has_other ? 1 : 0) == n) return "mask=";
    return "";
}

void print_operands(std::ostringstream &os, const Op &op) {
    for (size_t k = 0; k < op.operands.size(); ++k)
        os << (k ? ", " : " ") << operand_label(op, k) << "%" << op.operands[k];
}

std::string optional_name(const std::string &prefix, const std::string &name) {
    return name.empty() ? "" : prefix + text::word_or_quoted(name);
}

std::string optional_parenthesized(const std::string &name) {
    return name.empty() ? "" : " (" + text::word_or_quoted(name) + ")";
}

void print_attrs(std::ostringstream &os, const Op &op) {
    switch (op_info(op.kind).attrs) {
    case OpAttrs::None: break;
    case OpAttrs::Param: os << " #" << op.ival << optional_parenthesized(op.name); break;
    case OpAttrs::Constant: os << " " << text::number(op.fval) << optional_parenthesized(op.name); break;
    case OpAttrs::Axis: os << " axis=" << op.axis; break;
    case OpAttrs::Range: os << " " << op.ival << ", " << op.ival2; break;
    case OpAttrs::Index: os << " #" << op.ival; break;
    case OpAttrs::AxisKeepDims: os << " axis=" << op.axis << (op.keep_dims ? " keep_dims" : ""); break;
    case OpAttrs::AxisReverse: os << " axis=" << op.axis << (op.ival ? " reverse" : ""); break;
    case OpAttrs::Precision: os << optional_name(" precision=", op.name); break;
    case OpAttrs::Access: os << optional_name(" sem=", op.name); break;
    case OpAttrs::Iterator:
        os << " (" << text::word_or_quoted(op.name) << ")" << (op.ival ? " pipelined" : "")
           << (op.ival2 ? " rerun" : "");
        break;
    }
}

void print_op(std::ostringstream &os, const Function &f, const Op &op) {
    if (op.result != kNoValue) os << "%" << op.result << " = ";
    os << op_name(op.kind);
    print_operands(os, op);
    print_attrs(os, op);
    if (op.result == kNoValue) return;
    os << " : " << text::type(f.type(op.result));
    const std::string &n = f.values[op.result].name;
    if (!n.empty()) os << "  // " << n;
}

}  // namespace

std::string print(const Function &f) {
    std::ostringstream os;
    const bool leading = text::leading_params(f);
    print_header(os, f, leading);
    int depth = 1;
    for (size_t i = leading ? f.params.size() : 0; i < f.ops.size(); ++i) {
        const Op &op = f.ops[i];
        if (op.kind == OpKind::ForEnd) --depth;
        os << std::string(2 * static_cast<size_t>(std::max(depth, 0)), ' ');
        if (op.kind == OpKind::ForBegin) ++depth;
        print_op(os, f, op);
        os << "\n";
    }
    os << "}\n";
    return os.str();
}

}  // namespace tad::ir
