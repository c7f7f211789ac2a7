#include "frontend/ast.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace tad::ast {

const Value *Node::find(const std::string &name) const {
    for (const auto &field : fields)
        if (field.first == name) return &field.second;
    return nullptr;
}

namespace {
const Value &field_of(const Node &node, const std::string &name) {
    const Value *v = node.find(name);
    if (!v) throw std::logic_error(node.kind + " has no field '" + name + "'");
    return *v;
}

[[noreturn]] void wrong_type(const Node &node, const std::string &name, const char *want) {
    throw std::logic_error(node.kind + "." + name + " is not " + want);
}
}  // namespace

NodePtr Node::node(const std::string &name) const {
    const Value &v = field_of(*this, name);
    if (std::holds_alternative<NoneValue>(v)) return nullptr;
    if (const NodePtr *n = std::get_if<NodePtr>(&v)) return *n;
    wrong_type(*this, name, "a node");
}

const NodeList &Node::list(const std::string &name) const {
    const Value &v = field_of(*this, name);
    if (const NodeList *l = std::get_if<NodeList>(&v)) return *l;
    wrong_type(*this, name, "a list");
}

const std::string &Node::str(const std::string &name) const {
    const Value &v = field_of(*this, name);
    if (const std::string *s = std::get_if<std::string>(&v)) return *s;
    wrong_type(*this, name, "a string");
}

const StringList &Node::strings(const std::string &name) const {
    const Value &v = field_of(*this, name);
    if (const StringList *l = std::get_if<StringList>(&v)) return *l;
    wrong_type(*this, name, "a list of strings");
}

void Node::set(const std::string &name, Value v) {
    for (auto &field : fields) {
        if (field.first == name) {
            field.second = std::move(v);
            return;
        }
    }
    fields.emplace_back(name, std::move(v));
}

namespace {

// Destroys nodes without recursion, so that releasing a deep tree cannot exhaust the stack: the
// children of a dying node are queued and released one at a time by the outermost deleter.
thread_local std::vector<NodePtr> *t_orphans = nullptr;

void take_children(Node &n, std::vector<NodePtr> &out) {
    for (auto &field : n.fields) {
        if (NodePtr *child = std::get_if<NodePtr>(&field.second)) {
            if (*child) out.push_back(std::move(*child));
        } else if (NodeList *list = std::get_if<NodeList>(&field.second)) {
            for (NodePtr &item : *list)
                if (item) out.push_back(std::move(item));
        }
    }
}

struct Deleter {
    void operator()(Node *n) const {
        if (t_orphans) {
            take_children(*n, *t_orphans);
            delete n;
            return;
        }
        std::vector<NodePtr> orphans;
        t_orphans = &orphans;
        take_children(*n, orphans);
        delete n;
        while (!orphans.empty()) {
            NodePtr next = std::move(orphans.back());
            orphans.pop_back();
            next.reset();
        }
        t_orphans = nullptr;
    }
};

}  // namespace

std::string dotted(const Node *n) {
    if (!n) return "";
    if (n->is("Name")) return n->str("id");
    if (n->is("Attribute")) {
        std::string base = dotted(n->node("value").get());
        return base.empty() ? "" : base + "." + n->str("attr");
    }
    return "";
}

NodePtr make(std::string kind, Loc loc) {
    NodePtr n(new Node, Deleter{});
    n->kind = std::move(kind);
    n->has_loc = true;
    n->loc = loc;
    return n;
}

NodePtr make_noloc(std::string kind) {
    NodePtr n(new Node, Deleter{});
    n->kind = std::move(kind);
    return n;
}

namespace {
// Byte offset of (line, col) in `source`, clamped to its end.
size_t offset_of(const std::string &source, int line, int col) {
    size_t pos = 0;
    for (int l = 1; l < line && pos < source.size(); ++l) {
        size_t nl = source.find('\n', pos);
        if (nl == std::string::npos) return source.size();
        pos = nl + 1;
    }
    return std::min(source.size(), pos + static_cast<size_t>(std::max(col, 0)));
}
}  // namespace

std::string File::slice(const Loc &loc) const {
    size_t begin = offset_of(source, loc.line, loc.col);
    size_t end = offset_of(source, loc.end_line, loc.end_col);
    return end > begin ? source.substr(begin, end - begin) : std::string();
}

namespace {

// Next code point of UTF-8 text at `i` (surrogates allowed, as tad encodes Python's lone
// surrogates that way); a byte that starts no valid sequence stands for itself.
uint32_t next_code_point(const std::string &s, size_t &i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char b = byte(i);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
        ++i;
        return b;
    }
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1f) : len == 3 ? (b & 0x0f) : (b & 0x07);
    for (int k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) {
            ++i;
            return b;
        }
        cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    i += len;
    return cp;
}

// JSON with every character outside printable ASCII escaped: Python's json.dumps(s).
std::string quote(const std::string &s) {
    std::string out = "\"";
    char buf[16];
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = next_code_point(s, i);
        switch (cp) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
        }
        if (cp >= 0x20 && cp < 0x7f) {
            out += static_cast<char>(cp);
        } else if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
            out += buf;
        } else {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            out += buf;
        }
    }
    return out + "\"";
}

// Python's repr(float): the shortest digits that round-trip, positional notation for decimal
// exponents in [-4, 16), scientific otherwise.
std::string float_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    size_t e = sci.find('e');
    std::string digits;
    for (size_t i = 0; i < e; ++i)
        if (sci[i] != '.') digits += sci[i];
    int decpt = std::stoi(sci.substr(e + 1)) + 1;
    int n = static_cast<int>(digits.size());
    if (decpt <= -4 || decpt > 16) {
        std::string out = sign + digits.substr(0, 1);
        if (n > 1) out += "." + digits.substr(1);
        int exp = decpt - 1;
        std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        return out + buf;
    }
    if (decpt <= 0) return sign + "0." + std::string(-decpt, '0') + digits;
    if (decpt >= n) return sign + digits + std::string(decpt - n, '0') + ".0";
    return sign + digits.substr(0, decpt) + "." + digits.substr(decpt);
}

std::string hex(const std::string &data) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : data) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string header(const Node &node, bool with_locations) {
    std::string out = node.kind;
    if (with_locations && node.has_loc) {
        const Loc &l = node.loc;
        out += " @" + std::to_string(l.line) + ":" + std::to_string(l.col) + "-" + std::to_string(l.end_line) + ":" +
               std::to_string(l.end_col);
    }
    return out;
}

struct Dumper {
    bool with_locations;
    std::string out;

    void line(int indent, const std::string &text) {
        out.append(static_cast<size_t>(indent), ' ');
        out += text;
        out += '\n';
    }

    void node(const std::string &prefix, const Node &n, int indent) {
        line(indent, prefix + header(n, with_locations));
        for (const auto &[name, value] : n.fields) put(name + ": ", value, indent + 2);
    }

    // `prefix` is "name: " for a field and "- " for a list item.
    void put(const std::string &prefix, const Value &value, int indent) {
        std::visit([&](const auto &v) { put_value(prefix, v, indent); }, value);
    }

    template <typename List> void put_list(const std::string &prefix, const List &list, int indent) {
        if (list.empty()) return line(indent, prefix + "[]");
        line(indent, prefix.substr(0, prefix.size() - 1));
        for (const auto &item : list) put_value("- ", item, indent + 2);
    }

    void put_value(const std::string &prefix, const NodePtr &n, int indent) {
        if (n) return node(prefix, *n, indent);
        line(indent, prefix + "None");
    }
    void put_value(const std::string &p, const NodeList &l, int indent) { put_list(p, l, indent); }
    void put_value(const std::string &p, const StringList &l, int indent) { put_list(p, l, indent); }
    void put_value(const std::string &p, const NoneValue &, int indent) { line(indent, p + "None"); }
    void put_value(const std::string &p, const EllipsisValue &, int indent) { line(indent, p + "..."); }
    void put_value(const std::string &p, bool b, int indent) { line(indent, p + (b ? "True" : "False")); }
    void put_value(const std::string &p, int64_t i, int indent) { line(indent, p + std::to_string(i)); }
    void put_value(const std::string &p, const BigInt &b, int indent) { line(indent, p + b.digits); }
    void put_value(const std::string &p, double d, int indent) { line(indent, p + float_repr(d)); }
    void put_value(const std::string &p, const Imaginary &c, int indent) { line(indent, p + float_repr(c.imag) + "j"); }
    void put_value(const std::string &p, const std::string &s, int indent) { line(indent, p + quote(s)); }
    void put_value(const std::string &p, const Bytes &b, int indent) { line(indent, p + "b\"" + hex(b.data) + "\""); }
};

}  // namespace

// One node per line: its kind, then " @line:col-end_line:end_col" when it has a location; its
// fields follow, two spaces deeper, as "name: value"; a list is "name: []" or "name:" followed by
// "- item" lines. Scalars are printed as Python prints them (repr for floats, JSON with ASCII
// escapes for strings, b"<hex>" for bytes), so that tests/frontend/pyast_dump.py can write the same
// text.
std::string dump(const Node &node, bool with_locations) {
    Dumper d{with_locations, {}};
    d.node("", node, 0);
    return d.out;
}

}  // namespace tad::ast
