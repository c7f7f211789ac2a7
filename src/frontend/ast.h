// Python AST produced by tad's parser.
//
// The tree mirrors CPython's `ast` module (Python 3.11 grammar): every node has the class name of
// the corresponding ast node ("FunctionDef", "BinOp", "Name", ...) and the same fields under the
// same names, so a dump of this tree can be compared structurally with `ast.dump` (tests/frontend).
// Operators (Add, Lt, And, USub, ...) and expression contexts (Load, Store, Del) are nodes without
// location. Field values are a node, a list of nodes, an identifier/string, an int, a float, a bool,
// bytes, an ellipsis, an imaginary number or None, as in CPython.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tad::ast {

// 1-based line, 0-based column in UTF-8 bytes (CPython's col_offset); end positions likewise.
struct Loc {
    int line = 0;
    int col = 0;
    int end_line = 0;
    int end_col = 0;
};

struct Node;
using NodePtr = std::shared_ptr<Node>;
// A null entry is CPython's None (Dict.keys for `**x`, arguments.kw_defaults without default).
using NodeList = std::vector<NodePtr>;
// Lists of identifiers: Global.names, Nonlocal.names, MatchClass.kwd_attrs.
using StringList = std::vector<std::string>;

struct NoneValue {};
struct EllipsisValue {};
struct Bytes {
    std::string data;
};
// Python ints are arbitrary precision; values outside int64 keep their decimal text.
struct BigInt {
    std::string digits;
};
// An imaginary literal (`2j`): CPython's complex(0, imag). Literals never have a real part.
struct Imaginary {
    double imag;
};

using Value = std::variant<NoneValue, NodePtr, NodeList, std::string, int64_t, BigInt, double, bool, Bytes,
                           EllipsisValue, Imaginary, StringList>;

struct Node {
    std::string kind;  // CPython class name
    bool has_loc = false;
    Loc loc;
    // Fields in CPython's declaration order (ast.X._fields).
    std::vector<std::pair<std::string, Value>> fields;

    bool is(const char *k) const { return kind == k; }
    const Value *find(const std::string &name) const;
    // Typed accessors; they throw std::logic_error when the field is absent or of another type,
    // which is a bug in the caller (the parser always sets every field).
    NodePtr node(const std::string &name) const;  // NodePtr or nullptr for None
    const NodeList &list(const std::string &name) const;
    const std::string &str(const std::string &name) const;
    const StringList &strings(const std::string &name) const;
    void set(const std::string &name, Value v);
};

NodePtr make(std::string kind, Loc loc);
NodePtr make_noloc(std::string kind);

// A parsed file: the Module node plus the text it came from (for source slicing and diagnostics).
struct File {
    std::string path;
    std::string source;
    NodePtr module;
    // The exact source text of `loc` (multi-line aware).
    std::string slice(const Loc &loc) const;
};

// Calls f on `n` and every node below it, in source order (pre-order); null children are skipped.
template <class F> void walk(const NodePtr &n, F &&f) {
    if (!n) return;
    f(*n);
    for (const auto &field : n->fields) {
        if (auto p = std::get_if<NodePtr>(&field.second))
            walk(*p, f);
        else if (auto l = std::get_if<NodeList>(&field.second))
            for (const auto &c : *l) walk(c, f);
    }
}

// Dotted name of a Name / Attribute chain ("triton.jit"), or "" for anything else.
std::string dotted(const Node *n);

// Deterministic dump mirroring ast.dump(node, include_attributes=True) semantics but in a stable,
// line-oriented form; tests/frontend/pyast_dump.py writes CPython's tree in the same form.
std::string dump(const Node &node, bool with_locations);

}  // namespace tad::ast
