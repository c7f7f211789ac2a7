// The Lowerer behind lower_kernel, split over lower_*.cpp by topic: lower.cpp (entry points,
// parameters), lower_stmt.cpp (statements and loops), lower_if.cpp (`if` on run-time scalars and
// early `return`), lower_expr.cpp (names, attributes,
// subscripts), lower_arith.cpp (constant folding, operators, type promotion), lower_call.cpp (call
// dispatch, inlining, Python builtins), lower_tl.cpp (triton.language functions),
// lower_memory.cpp (tl.load, tl.store, tl.atomic_add), lower_block_ptr.cpp (tl.make_block_ptr) and
// lower_tensor_desc.cpp (tl.make_tensor_descriptor).
#pragma once

#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "ir/ir.h"
#include "support/error.h"
#include "support/identifier.h"

namespace tad::frontend::detail {

using ir::Dim;
using ir::DType;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

// A value during symbolic evaluation: an IR value, or something known at compile time.
//
// Provenance. A compile-time value computed from constexprs (or from parameters bound to None, a
// bool or a string, which are compile-time too) knows which ones: `deps`. Its spelling is
// *symbolic* when it names them so that the emitted code computes the right value for every
// binding (`BLOCK`, `BLOCK // 2`, `(D + BD - 1) // BD`; a float constexpr's name): a dim or a
// constant spelled so stays valid whatever the constexprs are. Every other use of a value with
// deps bakes the traced value into the IR (a static `if`, a static_range trip count, an axis, a
// value whose spelling was lost by folding), and Lowerer::consume records its deps in
// ir::Function::specialized: the function is then valid only for those values.
struct CV {
    enum Kind {
        Value,
        Int,
        Float,
        Bool,
        None,
        Str,
        DTypeV,
        Tuple,
        Module,
        Func,
        Method,
        FullSlice,
        BlockPtr,
        TensorDesc
    };
    Kind kind = None;
    ValueId v = ir::kNoValue;
    int64_t i = 0;
    double f = 0;
    std::string s;  // Int: symbolic spelling; Str; Module/Func: dotted name; Method: method name
    DType dt = DType::F32;
    // Tuple; Method: [receiver]; BlockPtr: shape, strides, offsets (rank each); TensorDesc: shape,
    // strides (rank each), with its padding option ("zero" / "nan") in s.
    std::vector<CV> items;
    std::vector<Dim> block;  // BlockPtr, TensorDesc: block_shape; v is the base pointer
    std::set<std::string> deps;  // compile-time: the constexprs its value was computed from
    bool symbolic = false;  // Int / Float with deps: `s` spells it in terms of deps, for any binding

    static CV value(ValueId v) {
        CV c;
        c.kind = Value;
        c.v = v;
        return c;
    }
    static CV integer(int64_t i, std::string expr = "") {
        CV c;
        c.kind = Int;
        c.i = i;
        c.s = expr.empty() ? std::to_string(i) : std::move(expr);
        return c;
    }
    // Constexpr `name` (or an expression over constexprs, `expr`) of value i, spelled by name.
    static CV symbol(int64_t i, const std::string &expr, std::set<std::string> deps) {
        CV c = integer(i, expr);
        c.deps = std::move(deps);
        c.symbolic = !c.deps.empty();
        return c;
    }
    static CV real(double f) {
        CV c;
        c.kind = Float;
        c.f = f;
        return c;
    }
    static CV boolean(bool b) {
        CV c;
        c.kind = Bool;
        c.i = b;
        return c;
    }
    static CV dtype(DType t) {
        CV c;
        c.kind = DTypeV;
        c.dt = t;
        return c;
    }
    static CV named(Kind k, std::string s) {
        CV c;
        c.kind = k;
        c.s = std::move(s);
        return c;
    }
    bool compile_time() const { return kind != Value; }
    // BlockPtr: its d-th offset (carried through loops and moved by tl.advance).
    CV &offset(size_t d) { return items[2 * block.size() + d]; }
    const CV &offset(size_t d) const { return items[2 * block.size() + d]; }
};

// Environment key prefix marking a name assigned in only one branch of a run-time `if` (the
// marker's value is the if's location), so a later use can say why the name is undefined.
inline const char *const kOneBranchPrefix = "$undefined:";

// tl.<name> (and the tile method .<name>) lowered to one unary op.
const std::map<std::string, OpKind> &unary_math();
// Triton's dtype names (tl.float32, tl.fp16, ...).
const std::map<std::string, DType> &dtype_names();

class Lowerer {
public:
    // host_descriptors: a Tensor binding with desc_block binds a TensorDescriptor parameter (true
    // for forward files; emitted kernels take the descriptor's base pointer instead).
    Lowerer(const ast::File &file, const std::map<std::string, ast::NodePtr> &jit, bool host_descriptors)
        : file_(file), jit_(jit), host_descriptors_(host_descriptors), b_(fn_) {}

    ir::Function run(const std::string &kernel, const std::vector<ArgBinding> &args);

private:
    using Env = std::map<std::string, CV>;

    const ast::File &file_;
    const std::map<std::string, ast::NodePtr> &jit_;
    const bool host_descriptors_;
    ir::Function fn_;
    ir::Builder b_;
    std::vector<std::string> call_stack_;
    // Every compile-time parameter (constexpr or bound to None / a bool / a string) and its value as
    // a Python literal: a specialization on one that is not a constexpr makes it one (run()).
    std::map<std::string, std::string> compile_time_params_;
    // The i1 scalar under which the statement being lowered runs: the AND of the enclosing run-time
    // `if` conditions (negated in `else`) and of "not returned yet"; kNoValue when unconditional.
    // Every load, store and atomic is masked with it.
    ValueId pred_ = ir::kNoValue;
    int dynamic_ifs_ = 0;  // run-time `if`s open in the function being inlined (0 in a new frame)
    std::set<std::string> globals_in_progress_;  // module-level names being evaluated (a cycle is refused)

    static ir::SrcLoc loc_of(const ast::Node &n) { return ir::SrcLoc{n.loc.line, n.loc.col + 1}; }
    std::string at(const ast::Node &n) const { return tad::where(file_.path, n.loc.line, n.loc.col + 1); }

    [[noreturn]] void unsupported(const ast::Node &n, const std::string &construct, const std::string &why) const {
        fail(TAD_ERR_UNSUPPORTED,
             at(n) + ": unsupported construct '" + construct + "'" + (why.empty() ? "" : ": " + why));
    }

    // ---- parameters (lower.cpp) ----------------------------------------------------------------
    static bool is_constexpr_annotation(const ast::NodePtr &a);
    void bind_params(const ast::Node &def, const std::vector<ArgBinding> &args, Env &env);
    void bind_default(const std::string &name, const ast::Node &value, bool cexpr, Env &env);
    // A constexpr parameter, or one bound to None, a bool or a string: a compile-time value.
    CV compile_time_param(const ast::Node &p, const ArgBinding &bound, bool cexpr);
    // A tensor, int or float parameter: an IR parameter (a tensor descriptor's several).
    void bind_run_time_param(const ast::Node &p, const ArgBinding &bound, const std::vector<ArgBinding> &args,
                             const ast::NodeList &params, Env &env);
    void add_constexpr(const std::string &name, const CV &c);
    // The value as a Python literal ("" for kinds that have none).
    static std::string literal_of(const CV &c);
    static std::string python_float(double v);

    // ---- provenance of compile-time values (lower_spec.cpp) -------------------------------------
    // Records the deps of `c` (and of its items) in ir::Function::specialized: its value is baked in.
    void consume(const CV &c);
    // Records the deps of the parts of `c` whose spelling is not symbolic: a value that can only be
    // used by value, whatever the callee it is passed to does with it.
    void consume_baked(const CV &c);
    // A compile-time value used by value: an integer (axis, flag), a flag (absent or None: false),
    // a string (absent or not a string: "").
    int64_t int_of(const CV &c, const ast::Node &n, const std::string &what);
    bool flag_of(const CV *c);
    std::string str_of(const CV *c);
    // A tile dim of size `c`: spelled symbolically where it can be, else the value (recorded).
    Dim dim_of(const CV &c, const ast::Node &n);
    // The compile-time integer a dim stands for, with the constexprs its spelling names.
    CV from_dim(const Dim &d) const;
    // Whether `c`'s spelling holds for every binding of its deps (a literal without deps does too),
    // and that spelling ("" where there is none).
    static bool spellable(const CV &c);
    static std::string spelling(const CV &c);
    // The constexprs recorded as specializations, in signature order, each with its literal.
    void finish_specializations();

    // ---- statements (lower_stmt.cpp) -----------------------------------------------------------
    // Lowers a function body; returns the value of its `return` (None if none).
    CV lower_body(const ast::NodeList &body, Env &env, const std::string &fname);
    // Lowers a statement list in order; returns true when every path through it returned.
    bool lower_block(const ast::NodeList &body, Env &env, const std::string &fname);
    // Returns true when every path through the statement returned.
    bool lower_stmt(const ast::Node &s, Env &env, const std::string &fname);
    // Evaluates a static condition, recording the constexprs it reads as specializations.
    CV condition(const ast::Node &test, Env &env);
    bool truthy(const CV &c, const ast::Node &n) const;
    void assign(const ast::Node &target, const CV &v, Env &env);

    // ---- loops (lower_stmt.cpp) ----------------------------------------------------------------
    // Names a statement list assigns, in first-assignment order (nested blocks included).
    static void assigned_names(const ast::NodeList &body, std::vector<std::string> &out);
    void lower_for(const ast::Node &s, Env &env, const std::string &fname);
    struct ForRange;
    struct LoopSlot;
    ForRange for_range(const ast::Node &iter, Env &env);
    ForRange counting_up(ForRange r, const ast::Node &iter);
    void unroll_static_range(const ast::Node &s, const ForRange &r, const std::string &var, Env &env,
                             const std::string &fname);
    // A range / tl.range loop as an IR loop carrying the names its body reassigns.
    void lower_range_loop(const ast::Node &s, const ForRange &r, const std::string &var, Env &env,
                          const std::string &fname);
    std::vector<LoopSlot> loop_slots(const ast::Node &s, const std::string &var, const Env &env);
    ValueId loop_yield(const ast::Node &s, const LoopSlot &sl, const Env &before, const Env &body);

    // ---- run-time `if` and `return` (lower_if.cpp) ---------------------------------------------
    // An `if` on a run-time scalar, if-converted: both branches are lowered under their predicate
    // and the names they assign are merged with where(). Returns true when both branches returned.
    bool lower_dynamic_if(const ast::Node &s, const CV &cond, Env &env, const std::string &fname);
    // The condition as an i1 scalar (`!= 0` for numbers); tiles are refused.
    ValueId scalar_condition(const CV &c, const ast::Node &s);
    void merge_branches(const ast::Node &s, ValueId c, Env &env, const Env &then_env, const Env &else_env);
    Env merged_names(const ast::Node &s, ValueId c, const Env &env, const Env &then_env, const Env &else_env);
    CV merge_value(const ast::Node &s, ValueId c, const std::string &name, const CV &t, const CV &e);
    CV merge_block_ptr(const ast::Node &s, ValueId c, const std::string &name, const CV &t, const CV &e);
    void lower_return(const ast::Node &s, Env &env);
    // The i1 scalar "this program has not returned", kNoValue when it certainly has not.
    static ValueId alive(const Env &env);
    static bool returned(const Env &env);
    ValueId conjoin(ValueId a, ValueId b);  // a AND b, either kNoValue meaning true
    // `mask` (kNoValue: none) restricted to the current predicate, broadcast to `shape`.
    ValueId predicated(ValueId mask, const std::vector<Dim> &shape);

    // ---- expressions (lower_expr.cpp) ----------------------------------------------------------
    CV eval(const ast::Node &e, Env &env);
    CV eval_inner(const ast::Node &e, Env &env);
    CV name_value(const ast::Node &e, Env &env);
    CV if_exp(const ast::Node &e, Env &env);

    // ---- module-level names (lower_globals.cpp) ------------------------------------------------
    // The expression of the last top-level `NAME = <expr>` or `NAME: T = <expr>`, or null.
    const ast::Node *module_global(const std::string &name) const;
    // The compile-time value of global `id` read at `e`, or nullopt where it is not one.
    std::optional<CV> global_value(const ast::Node &e, const std::string &id);
    // The module path a top-level import binds `name` to (triton.language spelled `tl`), or "".
    std::string imported_module(const std::string &name) const;
    // The function lowered for a call of helper `callee`: its TAD_DIFFERENTIATE_AS definition, or itself.
    std::string differentiable_definition(const ast::Node &call, const std::string &callee) const;
    // The TAD_DERIVATIVES of helper `helper`, one function name per parameter ("" for None), or none.
    std::vector<std::string> user_derivatives(const ast::Node &call, const std::string &helper) const;
    // math.pi, math.e, math.tau, math.inf, math.nan; nullopt for other names.
    static std::optional<CV> math_constant(const std::string &attr);
    CV constant(const ast::Node &e);
    CV attribute(const ast::Node &e, Env &env);
    CV subscript(const ast::Node &e, Env &env);

    // ---- arithmetic (lower_arith.cpp) ----------------------------------------------------------
    // `s` as an operand of a binary operator: parenthesized unless a name or a number.
    static std::string paren(const std::string &s);
    // A binary operator on compile-time values, with the operands' provenance (fold_value: the value).
    CV fold(const std::string &op, const CV &a, const CV &b, const ast::Node &n);
    CV fold_value(const std::string &op, const CV &a, const CV &b, const ast::Node &n);
    // A Python int as the float it converts to, with its provenance and spelling.
    static CV as_float(const CV &c);

    // Turns a compile-time number into an IR scalar, typed after `like` (Triton's weak typing of
    // Python scalars: an int literal takes the other side's integer type, a float literal the other
    // side's float type).
    ValueId materialize(const CV &c, const Type *like, const ast::Node &n);

    static DType promote(DType a, DType b);

    // Brings two operands to a common shape (and, unless `keep_types`, a common element type).
    std::pair<ValueId, ValueId> unify(const CV &ca, const CV &cb, const ast::Node &n, bool keep_types = false);

    CV binop(const std::string &op, const CV &a, const CV &b, const ast::Node &n);
    CV unaryop_neg(const CV &v, const ast::Node &n);
    CV unaryop(const ast::Node &e, const CV &v);
    CV where(const CV &c, const CV &a, const CV &b, const ast::Node &n);

    // ---- calls (lower_call.cpp) ----------------------------------------------------------------
    struct Args {
        std::vector<CV> pos;
        std::map<std::string, CV> kw;
        const CV *get(size_t i, const std::string &name) const {
            if (i < pos.size()) return &pos[i];
            auto it = kw.find(name);
            return it == kw.end() ? nullptr : &it->second;
        }
    };

    const CV &need(const Args &a, size_t i, const std::string &name, const ast::Node &n, const std::string &fn);
    CV call(const ast::Node &e, Env &env);
    // Inlines helper `called` (or its TAD_DIFFERENTIATE_AS definition).
    CV inline_call(const ast::Node &e, const std::string &called, const Args &a);
    CV builtin(const ast::Node &e, const std::string &name, const Args &a);
    CV extremum(const ast::Node &e, bool min, const CV &x, const CV &y);
    DType dtype_arg(const CV &c, const ast::Node &n);
    std::vector<Dim> shape_arg(const CV &c, const ast::Node &n);
    ValueId value_arg(const CV &c, const ast::Node &n) { return materialize(c, nullptr, n); }
    CV method(const ast::Node &e, const CV &m, const Args &a);
    // The value `y` of a helper call with the gradient of its TAD_DERIVATIVES (`bound`: its arguments).
    CV with_derivatives(const ast::Node &e, const CV &y, const std::vector<std::string> &partials,
                        const std::vector<CV> &bound, const Args &a);
    // math.<fn> of compile-time numbers (lower_globals.cpp).
    CV math_call(const ast::Node &e, const std::string &fn, const Args &a);

    // ---- triton.language (lower_tl.cpp) --------------------------------------------------------
    // A call of triton.language function `name` (without its module prefix), spelled `full`.
    CV tl_call(const ast::Node &e, const std::string &name, const std::string &full, const Args &a);
    struct TlCall {
        const ast::Node &e;
        const std::string &name, &full;
        const Args &a;
    };
    using TlLowering = CV (*)(Lowerer &, const TlCall &);
    static const std::map<std::string, TlLowering> &tl_lowerings();
    CV tl_unary_math(const TlCall &c, OpKind k);
    CV tl_program_id(const TlCall &c);  // and tl.num_programs
    CV tl_arange(const TlCall &c);
    CV tl_full(const TlCall &c);  // and tl.zeros
    CV tl_zeros_like(const TlCall &c);
    CV tl_where(const TlCall &c);
    CV tl_extremum(const TlCall &c, OpKind k);  // tl.maximum, tl.minimum
    CV tl_join(const TlCall &c);
    CV tl_split(const TlCall &c);
    [[noreturn]] CV tl_cat(const TlCall &c);
    CV tl_pow(const TlCall &c);
    CV tl_div(const TlCall &c);  // fdiv, div_rn
    CV tl_fma(const TlCall &c);
    CV tl_clamp(const TlCall &c);
    CV tl_softmax(const TlCall &c);
    CV tl_cast(const TlCall &c);
    CV tl_broadcast_to(const TlCall &c);
    CV tl_trans(const TlCall &c);  // and tl.permute
    CV tl_expand_dims(const TlCall &c);
    CV tl_debug_barrier();
    CV tl_rand(const TlCall &c);
    CV tl_cdiv(const TlCall &c);
    CV next_power_of_2(const TlCall &c);

    // tl.dot(a, b, acc) is lowered as acc + dot(a, b): the accumulate is then an ordinary add,
    // which is what makes a K loop an accumulator loop for reverse mode.
    CV scan(const ast::Node &e, const std::string &name, const Args &a);
    // Block pointers (lower_block_ptr.cpp) are lowered to pointer tiles and boundary masks.
    CV make_block_ptr(const ast::Node &e, const Args &a);
    CV advance(const ast::Node &e, const Args &a);
    // The pointer tile and mask (kNoValue without boundary_check) of a block pointer access.
    std::pair<ValueId, ValueId> block_access(const ast::Node &e, const CV &bp, const Args &a, const std::string &fn);
    // The same for the dims flagged in `checked`.
    std::pair<ValueId, ValueId> block_window(const ast::Node &e, const CV &bp, const std::vector<bool> &checked);
    // Tensor descriptors (lower_tensor_desc.cpp): a block pointer addressed by offsets per access,
    // every dim boundary-checked.
    CV make_tensor_descriptor(const ast::Node &e, const Args &a);
    // Kernel parameter `p` bound to a host-side TensorDescriptor: a pointer parameter for its base,
    // integer parameters for its shape and strides, constexprs for its block shape.
    CV host_tensor_desc(const ast::Node &p, const ArgBinding &base, const std::vector<ArgBinding> &args,
                        const ast::NodeList &params);
    std::vector<const ArgBinding *> host_desc_scalars(const ast::Node &p, const ArgBinding &base,
                                                      const std::vector<ArgBinding> &args, const ast::NodeList &params);
    CV tensor_desc_attribute(const ast::Node &e, const CV &desc, const std::string &attr);
    CV tensor_desc_method(const ast::Node &e, const CV &desc, const std::string &name, const Args &a);
    bool is_add_combiner(const std::string &callee) const;  // a jit function `return a + b`
    CV reshape(const ast::Node &e, const std::string &name, const Args &a);
    CV dot(const ast::Node &e, const Args &a);
    CV reduce(const ast::Node &e, const std::string &name, const Args &a);
    // The axis argument of tl.<name> over a tile of type `t`, in [0, rank).
    int reduce_axis(const ast::Node &e, const std::string &name, const CV &axis, const Type &t);

    // ---- memory (lower_memory.cpp) -------------------------------------------------------------
    CV load(const ast::Node &e, const Args &a);
    // tl.store and tl.atomic_add.
    CV store(const ast::Node &e, const std::string &name, const Args &a);
};

}  // namespace tad::frontend::detail
