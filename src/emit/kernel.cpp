#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "emit/emit.h"
#include "passes/pipeline_loops.h"
#include "passes/write_parts.h"
#include "support/error.h"
#include "support/identifier.h"
#include "support/py_literal.h"

namespace tad::emit {

namespace {

using ir::OpKind;
using ir::ValueId;

struct Expr {
    std::string text;
    int prec;  // Python binding strength: 100 atoms/calls, 80 unary, 70 * /, 60 + -, 45 &, 44 ^, 43 |, 40 compare
};

std::string float_literal(double v) {
    if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
    if (std::isnan(v)) return "float(\"nan\")";
    char buf[40];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

// Users that broadcast their operands implicitly in Triton, so a Broadcast feeding them can be
// spelled as its operand.
bool broadcasts_implicitly(const ir::Op &user, size_t operand) {
    switch (ir::op_info(user.kind).cls) {
    case ir::OpClass::Memory: return operand != 0;  // the address is not broadcast
    case ir::OpClass::Shape:
    case ir::OpClass::Reduction:
    case ir::OpClass::Scan:
    case ir::OpClass::Contraction: return false;
    default: return true;
    }
}

class KernelEmitter {
public:
    KernelEmitter(const ir::Function &f, bool write_parts)
        : f_(f),
          parts_(write_parts ? passes::write_parts(f) : std::vector<int>{}),
          uses_(f.values.size()),
          last_use_(f.values.size(), -1),
          loops_(ir::loops(f)),
          innermost_(f.ops.size(), -1),
          pipelined_(passes::has_pipelined_loop(f)) {
        for (size_t l = 0; l < loops_.size(); ++l)
            for (int i = loops_[l].begin + 1; i < loops_[l].end + 1; ++i) innermost_[i] = static_cast<int>(l);
        for (size_t i = 0; i < f.ops.size(); ++i)
            for (size_t k = 0; k < f.ops[i].operands.size(); ++k)
                uses_[f.ops[i].operands[k]].push_back({static_cast<int>(i), k});
        for (size_t i = 0; i < f.ops.size(); ++i)
            for (ValueId v : f.ops[i].operands) {
                // A use inside an inlined expression happens where that expression is evaluated.
                int at = evaluated_at(static_cast<int>(i));
                // A value read inside a loop it was defined outside of stays live for the whole loop,
                // so its name must not be reused inside the body. A loop_arg reads its init once per
                // run of its own loop: only the loops around that one keep the init live.
                for (const ir::Loop &l : loops_) {
                    if (f.ops[i].kind == OpKind::LoopArg &&
                        std::count(l.args.begin(), l.args.end(), static_cast<int>(i)))
                        continue;
                    int d = f.values[v].def_op;
                    if (l.begin < at && at <= l.end && !(l.begin < d && d <= l.end)) at = std::max(at, l.end);
                }
                last_use_[v] = std::max(last_use_[v], at);
            }
        plan_broadcasts();
    }

    std::string run(const std::string &doc) {
        std::ostringstream os;
        os << "@triton.jit\ndef " << f_.name << "(";
        std::vector<std::string> params;
        for (const ir::Param &p : f_.params) {
            names_[p.value] = p.name;
            bound_[p.name] = p.value;
            scope_[p.name] = -1;
            params.push_back(p.name);
        }
        for (const ir::Constexpr &c : f_.constexprs) params.push_back(c.name + ": tl.constexpr");
        if (pipelined_) params.push_back(std::string(passes::kLoopStages) + ": tl.constexpr");
        if (!parts_.empty()) params.push_back(std::string(passes::kWritePart) + ": tl.constexpr = 0");
        for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
        os << "):\n";
        if (!doc.empty()) os << "    " << py_literal(doc, PyQuotes::Docstring) << "\n";
        for (size_t i = 0; i < f_.ops.size(); ++i) {
            const ir::Op &op = f_.ops[i];
            if (op.kind == OpKind::ForBegin) {
                loop_begin(os, i);
                continue;
            }
            if (op.kind == OpKind::ForEnd) {
                loop_end(os, i);
                continue;
            }
            if (op.kind == OpKind::LoopArg || op.kind == OpKind::LoopResult) continue;
            if (op.kind == OpKind::Param || (op.result != ir::kNoValue && inline_value(op.result))) continue;
            if (op.result != ir::kNoValue && uses_[op.result].empty()) continue;
            std::string rhs = expr(op).text;
            if (!body_statements_.empty()) ++body_statements_.back();
            if (op.result == ir::kNoValue && !parts_.empty() && parts_[i] > 0) {
                const std::string k = passes::kWritePart;
                os << indent() << "if " << k << " == 0 or " << k << " == " << parts_[i] << ":\n"
                   << indent() << "    " << rhs << "\n";
            } else if (op.result == ir::kNoValue) {
                os << indent() << rhs << "\n";
            } else {
                std::string n = assign_name(op.result, static_cast<int>(i), innermost_[i]);
                os << indent() << n << " = " << rhs << "\n";
            }
        }
        return os.str();
    }

private:
    const ir::Function &f_;
    std::vector<int> parts_;  // per op: its write's part (passes/write_parts.h); empty: not split
    std::vector<std::vector<std::pair<int, size_t>>> uses_;
    std::vector<int> last_use_;
    std::vector<ir::Loop> loops_;
    std::vector<int> innermost_;  // per op: the innermost loop whose body holds it, -1 at top level
    bool pipelined_;  // a loop reads the constexpr passes::kLoopStages
    int depth_ = 1;
    std::vector<int> body_statements_;  // statements emitted in each open loop body

    std::string indent() const { return std::string(4 * static_cast<size_t>(depth_), ' '); }

    const ir::Loop &loop_at(size_t begin) const {
        for (const ir::Loop &l : loops_)
            if (l.begin == static_cast<int>(begin)) return l;
        fail(TAD_ERR_INTERNAL, "emitter: no loop begins at op " + std::to_string(begin));
    }

    // Carried values are initialised before the `for`; the loop variable and the carried names
    // are bound for the body.
    void loop_begin(std::ostringstream &os, size_t i) {
        const ir::Loop &l = loop_at(i);
        const auto self = static_cast<int>(&l - loops_.data());  // the iv is bound in the loop's body
        for (int a : l.args) {
            const ir::Op &arg = f_.ops[a];
            std::string init = value(arg.operands[0]).text;
            // Carried names are bound before the `for`, in the enclosing scope.
            std::string n = assign_name(arg.result, a, l.parent);
            if (init != n) os << indent() << n << " = " << init << "\n";
        }
        const ir::Op &op = f_.ops[i];
        std::string iv = assign_name(op.result, static_cast<int>(i), self);
        std::string lo = value(op.operands[0]).text, hi = value(op.operands[1]).text, step = value(op.operands[2]).text;
        std::string range = step != "1" ? lo + ", " + hi + ", " + step : lo != "0" ? lo + ", " + hi : hi;
        std::string iterator = op.name;
        if (op.ival) {  // pipelined (pipeline_loops.h): only tl.range takes stages
            iterator = "tl.range";
            range = lo + ", " + hi + ", " + step + ", num_stages=" + passes::kLoopStages;
        }
        if (!body_statements_.empty()) ++body_statements_.back();
        os << indent() << "for " << iv << " in " << iterator << "(" << range << "):\n";
        ++depth_;
        body_statements_.push_back(0);
    }

    // The next values of the carried names, assigned together (each may read the others' old values).
    void loop_end(std::ostringstream &os, size_t i) {
        const ir::Loop &l = loop_at(static_cast<size_t>(loops_[innermost_[i]].begin));
        std::vector<std::string> lhs, rhs;
        for (size_t k = 0; k < l.args.size(); ++k) {
            const std::string &n = names_.at(f_.ops[l.args[k]].result);
            std::string y = value(f_.ops[i].operands[k]).text;
            if (y != n) {
                lhs.push_back(n);
                rhs.push_back(y);
            }
        }
        if (!lhs.empty())
            os << indent() << join_commas(lhs) << " = " << join_commas(rhs) << "\n";
        else if (body_statements_.back() == 0)
            os << indent() << "pass\n";
        body_statements_.pop_back();
        --depth_;
        // After the loop its carried names hold its results, in the enclosing scope.
        for (size_t k = 0; k < l.results.size(); ++k) {
            ValueId r = f_.ops[l.results[k]].result;
            names_[r] = names_.at(f_.ops[l.args[k]].result);
            bound_[names_[r]] = r;
            scope_[names_[r]] = l.parent;
        }
    }

    static std::string join_commas(const std::vector<std::string> &v) {
        std::string s;
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s;
    }

    std::map<ValueId, std::string> names_;
    std::map<std::string, ValueId> bound_;
    // Where each bound name was bound: the innermost loop (index into loops_), -1 at top level
    // (parameters too).
    std::map<std::string, int> scope_;
    int temp_counter_ = 0;

    // Whether scope `outer` strictly encloses `scope` (top level, -1, encloses every loop).
    bool encloses(int outer, int scope) const {
        for (int s = scope; s != -1;) {
            s = loops_[s].parent;
            if (s == outer) return true;
        }
        return false;
    }

    // The op index of the statement that evaluates op `i` (itself, or where it is inlined into).
    int evaluated_at(int i) const {
        const ir::Op &op = f_.ops[i];
        if (op.result == ir::kNoValue || !inline_value(op.result)) return i;
        int at = i;
        for (const auto &[user, k] : uses_[op.result]) at = std::max(at, evaluated_at(user));
        return at;
    }

    // Uses of `v`, counting a use by a Broadcast (always spelled inline) as that broadcast's uses.
    size_t effective_uses(ValueId v) const {
        size_t n = 0;
        for (const auto &[op, k] : uses_[v]) {
            const ir::Op &user = f_.ops[op];
            n += user.kind == OpKind::Broadcast ? effective_uses(user.result) : 1;
        }
        return n;
    }

    bool inline_value(ValueId v) const {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Const || op.kind == OpKind::Broadcast) return true;
        if (op.kind == OpKind::Load || op.kind == OpKind::Param || op.kind == OpKind::ForBegin ||
            op.kind == OpKind::LoopArg || op.kind == OpKind::LoopResult)
            return false;
        // Inlining into another loop body would recompute the expression every iteration.
        if (used_in_other_loop(v, innermost_[f_.values[v].def_op])) return false;
        return f_.values[v].name.empty() && effective_uses(v) == 1;
    }

    // Whether `v` is read (directly or through inlined broadcasts) outside loop `home`'s own body.
    bool used_in_other_loop(ValueId v, int home) const {
        for (const auto &[user, k] : uses_[v]) {
            const ir::Op &u = f_.ops[user];
            if (u.kind == OpKind::Broadcast ? used_in_other_loop(u.result, home) : innermost_[user] != home)
                return true;
        }
        return false;
    }

    // Whether `n` may name value `v`, bound at op `at` in `scope`: a free name, or one whose value has
    // no later use, unless it was bound in a scope enclosing this one. Triton (as Python) keeps a name
    // bound in a loop body to that body, and takes a name that a loop body assigns and that is bound
    // where the loop starts (a parameter, a value of an enclosing body) for a loop-carried value,
    // which must keep its type: `do = ...` in a loop over a scalar parameter `do` does not compile.
    // The loop's own carried names are such values, so one of them may name a value of its type (the
    // loop's next value, usually).
    bool free_name(const std::string &n, ValueId v, int at, int scope) const {
        for (const ir::Constexpr &c : f_.constexprs)
            if (c.name == n) return false;
        if (pipelined_ && n == passes::kLoopStages) return false;  // the constexpr a pipelined loop reads
        if (!parts_.empty() && n == passes::kWritePart) return false;
        auto it = bound_.find(n);
        if (it == bound_.end()) return true;
        if (last_use_[it->second] > at) return false;
        const int where = scope_.at(n);
        if (!encloses(where, scope)) return true;
        return scope >= 0 && where == loops_[scope].parent && carried_by(scope, it->second) &&
               f_.type(it->second) == f_.type(v);
    }

    bool carried_by(int loop, ValueId v) const {
        for (int a : loops_[loop].args)
            if (f_.ops[a].result == v) return true;
        return false;
    }

    // Names value `v`, bound at op `at` in `scope` (a loop, or -1).
    std::string assign_name(ValueId v, int at, int scope) {
        // Python's keywords and the names the emitted code calls.
        static const std::set<std::string> reserved = {
            "False",    "None",   "True",  "and",  "as",     "assert",   "async",   "await", "break", "class",
            "continue", "def",    "del",   "elif", "else",   "except",   "finally", "for",   "from",  "global",
            "if",       "import", "in",    "is",   "lambda", "nonlocal", "not",     "or",    "pass",  "raise",
            "return",   "try",    "while", "with", "yield",  "tl",       "triton",  "torch", "math",  "libdevice",
            "range",    "float",  "int",   "min",  "max",    "abs",      "len",     "print"};
        std::string base = f_.values[v].name;
        if (!is_identifier(base) || reserved.count(base)) base = base.empty() ? "" : base + "_";
        if (base.empty()) base = "t" + std::to_string(temp_counter_++);
        std::string n = base;
        for (int k = 1; !free_name(n, v, at, scope); ++k) n = base + "_" + std::to_string(k);
        bound_[n] = v;
        scope_[n] = scope;
        names_[v] = n;
        return n;
    }

    // The operand a Broadcast feeding `user` at `k` is spelled as, or kNoValue where it is spelled
    // itself.
    ValueId implicit_source(const ir::Op &user, size_t k) const {
        const ir::Op &def = f_.def(user.operands[k]);
        if (def.kind != OpKind::Broadcast || !broadcasts_implicitly(user, k)) return ir::kNoValue;
        const ir::Op &sdef = f_.def(def.operands[0]);
        return sdef.kind != OpKind::Broadcast || broadcasts_implicitly(sdef, 0) ? def.operands[0] : ir::kNoValue;
    }

    // ---- implicit broadcasts ------------------------------------------------------------------
    // Triton broadcasts the operands of elementwise ops (and a memory op's mask, value and other)
    // implicitly, so a Broadcast feeding them is spelled as its operand, and the spelling of an
    // expression may have a smaller shape than its IR type. That is right where every use broadcasts
    // it back, wrong where a use takes the shape as it is: a loop's carried value
    // (`tl.zeros([B]) - float("inf")` must not become a scalar), a reduction, an address.
    enum Need { kAnyShape, kSameRank, kExactShape };
    std::vector<Need> need_;  // per value: what its uses require of its spelling's shape
    std::vector<std::vector<ir::Dim>> spelled_;  // per value: the shape of its spelling
    std::vector<std::vector<bool>> dropped_;  // per op: the operands spelled without their broadcast
    std::vector<bool> widened_;  // per op: spelled inside tl.broadcast_to to reach its shape

    size_t index_of(const ir::Op &op) const { return static_cast<size_t>(&op - f_.ops.data()); }

    // What `user` requires of operand k's shape. tl.load / tl.store and tl.broadcast_to broadcast
    // a scalar or a tile of their rank only; `x.to(y.dtype)` reads y's dtype alone.
    static Need need_of_use(const ir::Op &user, size_t k) {
        const ir::OpClass cls = ir::op_info(user.kind).cls;
        if (cls == ir::OpClass::Loop) return kExactShape;
        if (user.kind == OpKind::Broadcast || (cls == ir::OpClass::Memory && k > 0)) return kSameRank;
        if (user.kind == OpKind::Cast && k == 1) return kAnyShape;
        return broadcasts_implicitly(user, k) ? kAnyShape : kExactShape;
    }

    static bool fits(const std::vector<ir::Dim> &shape, const ir::Type &t, Need need) {
        if (need == kAnyShape) return true;
        if (need == kSameRank) return shape.empty() || shape.size() == t.rank();
        return shape.size() == t.rank() && t.with_shape(shape).same_shape(t);
    }

    static bool memory_operand(const ir::Op &op, size_t k) {
        return ir::op_info(op.kind).cls == ir::OpClass::Memory && k > 0;
    }

    // Ops whose result has the broadcast shape of their operands (of the value alone for
    // `x.to(y.dtype)`).
    static bool elementwise(const ir::Op &op) {
        switch (ir::op_info(op.kind).cls) {
        case ir::OpClass::Unary:
        case ir::OpClass::Binary:
        case ir::OpClass::Compare:
        case ir::OpClass::Logical:
        case ir::OpClass::Elementwise:
        case ir::OpClass::Random: return op.result != ir::kNoValue;
        default: return false;
        }
    }

    // The shape of an elementwise op's spelling when the operands in `drop` lose their broadcast.
    bool elementwise_shape(const ir::Op &op, const std::vector<bool> &drop, std::vector<ir::Dim> *shape) const {
        shape->clear();
        const size_t n = op.kind == OpKind::Cast ? 1 : op.operands.size();
        for (size_t k = 0; k < n; ++k) {
            std::vector<ir::Dim> out;
            if (!ir::broadcast_shapes(*shape, spelled_[drop[k] ? implicit_source(op, k) : op.operands[k]], &out))
                return false;
            *shape = out;
        }
        return true;
    }

    void plan_broadcasts() {
        need_.assign(f_.values.size(), kAnyShape);
        for (const ir::Op &op : f_.ops)
            for (size_t k = 0; k < op.operands.size(); ++k)
                need_[op.operands[k]] = std::max(need_[op.operands[k]], need_of_use(op, k));
        spelled_.resize(f_.values.size());
        dropped_.resize(f_.ops.size());
        widened_.assign(f_.ops.size(), false);
        for (size_t i = 0; i < f_.ops.size(); ++i) plan_op(f_.ops[i], i);
    }

    // Drops every broadcast it can; where the spelling's shape then does not fit the uses, keeps the
    // first operands' broadcasts, and where that is not enough either, wraps the whole expression.
    void plan_op(const ir::Op &op, size_t i) {
        std::vector<bool> &drop = dropped_[i];
        drop.assign(op.operands.size(), false);
        for (size_t k = 0; k < drop.size(); ++k) {
            ValueId src = implicit_source(op, k);
            drop[k] = src != ir::kNoValue &&
                      (!memory_operand(op, k) || fits(spelled_[src], f_.type(op.operands[k]), kSameRank));
        }
        if (op.result == ir::kNoValue) return;
        const ir::Type &t = f_.type(op.result);
        if (!elementwise(op)) {
            spelled_[op.result] = t.shape;
            return;
        }
        for (size_t keep = 0;; ++keep) {
            std::vector<ir::Dim> shape;
            if (elementwise_shape(op, drop, &shape) && fits(shape, t, need_[op.result])) {
                spelled_[op.result] = shape;
                return;
            }
            while (keep < drop.size() && !drop[keep]) ++keep;
            if (keep == drop.size()) break;
            drop[keep] = false;
        }
        widened_[i] = true;
        spelled_[op.result] = t.shape;
    }

    Expr operand(const ir::Op &user, size_t k) {
        if (dropped_[index_of(user)][k]) return value(implicit_source(user, k));
        return value(user.operands[k]);
    }

    Expr value(ValueId v) {
        auto it = names_.find(v);
        if (it != names_.end()) return {it->second, 100};
        return expr(f_.def(v));
    }

    static std::string wrap(const Expr &e, int need) { return e.prec >= need ? e.text : "(" + e.text + ")"; }

    std::string shape_tuple(const std::vector<ir::Dim> &shape) {
        std::string s = "(";
        for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].expr;
        return s + (shape.size() == 1 ? ",)" : ")");
    }

    Expr binary(const ir::Op &op, const char *sym, int prec) {
        Expr a = operand(op, 0), b = operand(op, 1);
        bool compare = prec == 40;
        return {wrap(a, compare ? prec + 1 : prec) + " " + sym + " " + wrap(b, prec + 1), prec};
    }

    Expr call(const std::string &fn, const ir::Op &op) {
        std::vector<std::string> args;
        for (size_t k = 0; k < op.operands.size(); ++k) args.push_back(operand(op, k).text);
        // A math function of a number made of constants alone (the closed form's log(1) where it reads
        // a saved logsumexp): Triton has it as a Python number, which tl.log and the like reject.
        if (ir::op_info(op.kind).cls == ir::OpClass::Unary && args.size() == 1 && constant_only(op.operands[0]))
            args[0] = "tl.full((), " + args[0] + ", " + ir::dtype_triton(f_.type(op.operands[0]).elem) + ")";
        return {fn + "(" + join_commas(args) + ")", 100};
    }

    bool constant_only(ir::ValueId v) const {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Const) return f_.type(v).scalar() && op.name.empty();
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (cls != ir::OpClass::Binary && cls != ir::OpClass::Unary) return false;
        return std::all_of(op.operands.begin(), op.operands.end(), [&](ir::ValueId o) { return constant_only(o); });
    }

    Expr constant(const ir::Op &op) {
        if (!op.name.empty()) return {op.name, is_identifier(op.name) ? 100 : 0};
        const ir::Type &t = f_.type(op.result);
        std::string s;
        if (t.is_float())
            s = float_literal(op.fval);
        else if (t.elem == ir::DType::I1)
            s = op.fval != 0 ? "True" : "False";
        else
            s = std::to_string(static_cast<long long>(op.fval));
        return {s, s[0] == '-' ? 80 : 100};
    }

    Expr memory(const ir::Op &op) {
        std::string ptr = operand(op, 0).text;
        if (f_.def(op.operands[0]).kind == OpKind::Broadcast) ptr = value(op.operands[0]).text;
        if (op.kind == OpKind::Load) {
            std::string s = "tl.load(" + ptr;
            if (op.has_mask) s += ", mask=" + operand(op, 1).text;
            if (op.has_other) s += ", other=" + operand(op, 2).text;
            return {s + ")", 100};
        }
        std::string s =
            std::string(op.kind == OpKind::Store ? "tl.store(" : "tl.atomic_add(") + ptr + ", " + operand(op, 1).text;
        if (op.has_mask) s += ", mask=" + operand(op, 2).text;
        if (op.kind == OpKind::AtomicAdd) s += ", sem=\"" + op.name + "\"";
        return {s + ")", 100};
    }

    Expr expr(const ir::Op &op) {
        Expr e = spell(op);
        if (!widened_[index_of(op)]) return e;
        return {"tl.broadcast_to(" + e.text + ", " + shape_tuple(f_.type(op.result).shape) + ")", 100};
    }

    // An op the table spells CALL / INFIX / PREFIX / REDUCE; the others by hand (custom).
    Expr spell(const ir::Op &op) {
        const ir::Spelling &s = ir::op_info(op.kind).spelling;
        switch (s.form) {
        case ir::Spelling::Call: return call(s.text, op);
        case ir::Spelling::Infix: return binary(op, f_.type(op.operands[0]).is_float() ? s.text : s.int_text, s.prec);
        case ir::Spelling::Prefix: return {s.text + wrap(operand(op, 0), s.prec), s.prec};
        case ir::Spelling::Reduce: return reduction(s.text, op);
        case ir::Spelling::Custom: break;
        }
        return custom(op);
    }

    // tl.sum(x, axis=k, keep_dims=True) and the like; no axis over all dims.
    Expr reduction(const std::string &fn, const ir::Op &op) {
        std::string s = fn + "(" + operand(op, 0).text;
        if (op.axis >= 0) s += ", axis=" + std::to_string(op.axis);
        if (op.keep_dims) s += ", keep_dims=True";
        return {s + ")", 100};
    }

    Expr broadcast(const ir::Op &op) {
        const ir::Type &rt = f_.type(op.result);
        const ir::Op &src = f_.def(op.operands[0]);
        if (src.kind == OpKind::Const && f_.type(op.operands[0]).scalar())
            return {
                "tl.full(" + shape_tuple(rt.shape) + ", " + constant(src).text + ", " + ir::dtype_triton(rt.elem) + ")",
                100};
        return {"tl.broadcast_to(" + value(op.operands[0]).text + ", " + shape_tuple(rt.shape) + ")", 100};
    }

    // x[:, None] for an inner axis; tl.expand_dims for a scalar.
    Expr expand_dims(const ir::Op &op) {
        Expr x = operand(op, 0);
        if (f_.type(op.operands[0]).scalar()) return {"tl.expand_dims(" + x.text + ", 0)", 100};
        std::string idx;
        for (size_t i = 0; i < f_.type(op.result).rank(); ++i)
            idx += std::string(i ? ", " : "") + (static_cast<int>(i) == op.axis ? "None" : ":");
        return {wrap(x, 100) + "[" + idx + "]", 100};
    }

    Expr dot(const ir::Op &op) {
        const ir::DType out = f_.type(op.result).elem;
        std::string s = "tl.dot(" + operand(op, 0).text + ", " + operand(op, 1).text;
        if (!op.name.empty()) s += ", input_precision=\"" + op.name + "\"";
        if (out != ir::DType::F32) s += std::string(", out_dtype=") + ir::dtype_triton(out);
        return {s + ")", 100};
    }

    // A value computed from scalar parameters and constants alone (a broadcast of one is spelled as
    // the scalar), which Triton may have folded to a Python number.
    bool maybe_python_number(ir::ValueId v) const {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Param || op.kind == OpKind::Const) return f_.type(v).scalar();
        if (op.kind == OpKind::Broadcast) return maybe_python_number(op.operands[0]);
        const ir::OpClass cls = ir::op_info(op.kind).cls;
        if (cls != ir::OpClass::Binary && cls != ir::OpClass::Unary && op.kind != OpKind::Cast) return false;
        return std::all_of(op.operands.begin(), op.operands.end(),
                           [&](ir::ValueId o) { return maybe_python_number(o); });
    }

    Expr cast(const ir::Op &op) {
        if (op.operands.size() == 2)
            return {wrap(operand(op, 0), 100) + ".to(" + wrap(value(op.operands[1]), 100) + ".dtype)", 100};
        const char *to = ir::dtype_triton(f_.type(op.result).elem);
        const ir::Op &src = f_.def(op.operands[0]);
        // A number without a name, cast to float32: the float literal itself.
        if (src.kind == OpKind::Const && src.name.empty() && f_.type(op.result).elem == ir::DType::F32 &&
            f_.type(op.operands[0]).scalar() && std::isfinite(src.fval))
            return {float_literal(src.fval), src.fval < 0 ? 80 : 100};
        // Python numbers and constexprs have no .to(), and Triton passes an integer argument equal to
        // 1 as a Python int: so is arithmetic on such arguments (`BLOCK_K * stride_ak`).
        if (maybe_python_number(op.operands[0])) return {"tl.cast(" + operand(op, 0).text + ", " + to + ")", 100};
        return {wrap(operand(op, 0), 100) + ".to(" + to + ")", 100};
    }

    // The ops ops.def marks CUSTOM. Loop structure is spelled by loop_begin / loop_end instead.
    Expr custom(const ir::Op &op) {
        switch (op.kind) {
        case OpKind::Param: return {op.name, 100};
        case OpKind::Const: return constant(op);
        case OpKind::ProgramId: return {"tl.program_id(" + std::to_string(op.axis) + ")", 100};
        case OpKind::NumPrograms: return {"tl.num_programs(" + std::to_string(op.axis) + ")", 100};
        case OpKind::Arange:
            return {"tl.arange(" + std::to_string(op.ival) + ", " + f_.type(op.result).shape[0].expr + ")", 100};
        case OpKind::Broadcast: return broadcast(op);
        case OpKind::ExpandDims: return expand_dims(op);
        case OpKind::Reshape:
            return {"tl.reshape(" + operand(op, 0).text + ", " + shape_tuple(f_.type(op.result).shape) + ")", 100};
        case OpKind::Split: return {"tl.split(" + operand(op, 0).text + ")[" + std::to_string(op.ival) + "]", 100};
        case OpKind::Dot: return dot(op);
        case OpKind::Cast: return cast(op);
        case OpKind::StopGradient:
        case OpKind::GradVia:
        case OpKind::ReplayAs: return operand(op, 0);  // the value; their gradients are reverse mode's
        case OpKind::CumSum:
            return {"tl.cumsum(" + operand(op, 0).text + ", axis=" + std::to_string(op.axis) +
                        (op.ival ? ", reverse=True)" : ")"),
                    100};
        case OpKind::Load:
        case OpKind::Store:
        case OpKind::AtomicAdd: return memory(op);
        default: break;
        }
        fail(TAD_ERR_INTERNAL, std::string("emitter has no spelling for op ") + ir::op_name(op.kind));
    }
};

}  // namespace

std::string emit_kernel(const ir::Function &fn, const std::string &doc, bool write_parts) {
    return KernelEmitter(fn, write_parts).run(doc);
}

}  // namespace tad::emit
