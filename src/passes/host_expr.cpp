#include "passes/host_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;

HostExpr node(HostExpr::Op op, std::vector<HostExpr> args) {
    HostExpr e;
    e.op = op;
    e.args = std::move(args);
    return e;
}

std::optional<HostExpr::Op> binary_op(OpKind k) {
    switch (k) {
    case OpKind::Add: return HostExpr::Add;
    case OpKind::Sub: return HostExpr::Sub;
    case OpKind::Mul: return HostExpr::Mul;
    case OpKind::Div: return HostExpr::Div;
    case OpKind::Mod: return HostExpr::Mod;
    case OpKind::Minimum: return HostExpr::Min;
    case OpKind::Maximum: return HostExpr::Max;
    default: return std::nullopt;
    }
}

bool is_constexpr(const ir::Function &f, const std::string &name) {
    return std::any_of(f.constexprs.begin(), f.constexprs.end(),
                       [&](const ir::Constexpr &c) { return c.name == name; });
}

// A constexpr's spelling, as the frontend writes it: names, integers, + - * // %, unary minus and
// parentheses. Anything else is not read (nullopt).
class Spelling {
public:
    Spelling(const ir::Function &f, const std::string &s) : f_(f), s_(s) {}

    std::optional<HostExpr> parse() {
        std::optional<HostExpr> e = sum();
        skip();
        return e && pos_ == s_.size() ? e : std::nullopt;
    }

private:
    const ir::Function &f_;
    const std::string &s_;
    size_t pos_ = 0;

    void skip() {
        while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
    }
    bool eat(const std::string &tok) {
        skip();
        if (s_.compare(pos_, tok.size(), tok) != 0) return false;
        pos_ += tok.size();
        return true;
    }

    std::optional<HostExpr> sum() {
        std::optional<HostExpr> e = product();
        while (e) {
            const HostExpr::Op op = eat("+") ? HostExpr::Add : eat("-") ? HostExpr::Sub : HostExpr::Const;
            if (op == HostExpr::Const) break;
            std::optional<HostExpr> r = product();
            e = r ? std::optional<HostExpr>(node(op, {*e, *r})) : std::nullopt;
        }
        return e;
    }

    std::optional<HostExpr> product() {
        std::optional<HostExpr> e = unary();
        while (e) {
            const HostExpr::Op op = eat("//")  ? HostExpr::FloorDiv
                                    : eat("*") ? HostExpr::Mul
                                    : eat("%") ? HostExpr::FloorMod
                                               : HostExpr::Const;
            if (op == HostExpr::Const) break;
            std::optional<HostExpr> r = unary();
            e = r ? std::optional<HostExpr>(node(op, {*e, *r})) : std::nullopt;
        }
        return e;
    }

    std::optional<HostExpr> unary() {
        if (eat("-")) {
            std::optional<HostExpr> e = unary();
            HostExpr zero;
            return e ? std::optional<HostExpr>(node(HostExpr::Sub, {zero, *e})) : std::nullopt;
        }
        if (eat("(")) {
            std::optional<HostExpr> e = sum();
            return e && eat(")") ? e : std::nullopt;
        }
        skip();
        const size_t start = pos_;
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
        const std::string word = s_.substr(start, pos_ - start);
        if (word.empty()) return std::nullopt;
        HostExpr e;
        if (std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
            e.value = std::stoll(word);
            return e;
        }
        if (!is_constexpr(f_, word)) return std::nullopt;
        e.op = HostExpr::Name;
        e.name = word;
        return e;
    }
};

}  // namespace

bool HostExpr::eval(const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out) const {
    if (op == Const) return *out = value, true;
    if (op == Name) return lookup(name, out);
    int64_t a = 0, b = 0;
    if (!args[0].eval(lookup, &a) || !args[1].eval(lookup, &b)) return false;
    switch (op) {
    case Add: *out = a + b; return true;
    case Sub: *out = a - b; return true;
    case Mul: *out = a * b; return true;
    case Div: return b != 0 && (*out = a / b, true);  // C++ truncates, as the kernel
    case Mod: return b != 0 && (*out = a % b, true);
    case FloorDiv: return b != 0 && (*out = a / b - ((a % b != 0) && ((a < 0) != (b < 0))), true);
    case FloorMod: return b != 0 && (*out = a - b * (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))), true);
    case Min: *out = std::min(a, b); return true;
    case Max: *out = std::max(a, b); return true;
    default: return false;
    }
}

std::string HostExpr::str(const std::function<std::string(const std::string &)> &spell) const {
    if (op == Const) return std::to_string(value);
    if (op == Name) return spell(name);
    const std::string a = args[0].str(spell), b = args[1].str(spell);
    switch (op) {
    case Add: return "(" + a + " + " + b + ")";
    case Sub: return "(" + a + " - " + b + ")";
    case Mul: return a + " * " + b;
    case Div: return "_tdiv(" + a + ", " + b + ")";
    case Mod: return "_tmod(" + a + ", " + b + ")";
    case FloorDiv: return "(" + a + " // " + b + ")";
    case FloorMod: return "(" + a + " % " + b + ")";
    case Min: return "min(" + a + ", " + b + ")";
    case Max: return "max(" + a + ", " + b + ")";
    default: return "?";
    }
}

std::string HostExpr::str() const {
    return str([](const std::string &n) { return n; });
}

std::optional<HostExpr> host_expr(const ir::Function &f, ir::ValueId v, std::string *why, bool program_ids) {
    const ir::Op &op = f.def(v);
    const ir::Type &t = f.type(v);
    auto refuse = [&]() -> std::optional<HostExpr> {
        *why = op_at(f, f.values[v].def_op);
        return std::nullopt;
    };
    if (!t.scalar() || t.is_ptr || ir::dtype_is_float(t.elem)) return refuse();
    HostExpr e;
    switch (op.kind) {
    case OpKind::Param:
        if (f.params[op.ival].kind != ir::ParamKind::Int) return refuse();
        e.op = HostExpr::Name;
        e.name = f.params[op.ival].name;
        return e;
    case OpKind::ProgramId:
        if (!program_ids) return refuse();
        e.op = HostExpr::Name;
        e.name = "program_id(" + std::to_string(op.axis) + ")";
        return e;
    case OpKind::Const: {
        if (op.fval != std::floor(op.fval)) return refuse();
        if (op.name.empty()) {
            e.value = static_cast<int64_t>(op.fval);
            return e;
        }
        std::optional<HostExpr> spelled = Spelling(f, op.name).parse();
        if (!spelled) *why = "constant spelled '" + op.name + "'";
        return spelled;
    }
    case OpKind::Cast:  // between integers: only a widening cast keeps every value
        if (ir::dtype_is_float(f.type(op.operands[0]).elem) ||
            ir::dtype_rank(t.elem) < ir::dtype_rank(f.type(op.operands[0]).elem))
            return refuse();
        return host_expr(f, op.operands[0], why, program_ids);
    default: break;
    }
    const std::optional<HostExpr::Op> bin = binary_op(op.kind);
    if (!bin) return refuse();
    std::optional<HostExpr> a = host_expr(f, op.operands[0], why, program_ids);
    if (!a) return std::nullopt;
    std::optional<HostExpr> b = host_expr(f, op.operands[1], why, program_ids);
    if (!b) return std::nullopt;
    return node(*bin, {std::move(*a), std::move(*b)});
}

bool TripCount::eval(const std::function<bool(const std::string &, int64_t *)> &lookup, int64_t *out) const {
    int64_t l = 0, h = 0, s = 0;
    if (!lo.eval(lookup, &l) || !hi.eval(lookup, &h) || !step.eval(lookup, &s) || s == 0) return false;
    // len(range(l, h, s))
    if (s > 0)
        *out = h > l ? (h - l + s - 1) / s : 0;
    else
        *out = l > h ? (l - h - s - 1) / -s : 0;
    *out = (*out + per - 1) / per;
    return true;
}

std::string TripCount::str(const std::function<std::string(const std::string &)> &spell) const {
    const std::string n = "len(range(" + lo.str(spell) + ", " + hi.str(spell) + ", " + step.str(spell) + "))";
    return per == 1 ? n : "_cdiv(" + n + ", " + std::to_string(per) + ")";
}

std::string TripCount::str() const {
    return str([](const std::string &n) { return n; });
}

}  // namespace tad::passes
