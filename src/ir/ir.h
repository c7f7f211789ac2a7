// tad's tile IR.
//
// Semantics
// - A Function is the body of one Triton program: it runs once per program id of the launch grid,
//   and programs share nothing but global memory.
// - Values are SSA. Each is defined by exactly one Op (or is a Function parameter) and has a Type:
//   an element type and a shape. An empty shape is a scalar; otherwise a tile whose dims each carry
//   a bound value and the source expression it came from ("BLOCK_SIZE", "16"), so emitted code stays
//   symbolic in the user's constexpr names.
// - Element types: i1 (masks), i32, i64, f16, bf16, f32, f64, and pointers to any of those.
// - Elementwise ops take operands of identical shape: the frontend inserts explicit Broadcast ops
//   (numpy rules: align right, 1 stretches), so reverse mode can reduce gradients back over exactly
//   the broadcast dims. Likewise it inserts explicit Casts for Triton's type promotion, and a Store's
//   value always has the pointee's element type.
// - Integer Div and Mod truncate toward zero (C semantics, as Triton's arith.divsi / remsi).
// - Load / Store / AtomicAdd address memory through pointer tiles; lanes whose mask is false neither
//   read nor write (a masked-off Load yields `other`, or an undefined value when absent).
// - Ops run in order, except loops. A loop is flat and well nested in the op list:
//     %i = for_begin %lo, %hi, %step          (i32 scalars; %i runs lo, lo+step, ... < hi)
//     %c = loop_arg %init                      (one per loop-carried value, right after for_begin)
//     ... body ...
//     for_end %y0, %y1, ...                    (the next values of the carried values, in order)
//     %r = loop_result k                       (one per carried value, right after for_end: the
//                                              last yield, or the init when the loop runs 0 times)
//   Values defined in a body are visible only inside it (later iterations see them only through
//   loop_arg); values defined before the loop are visible inside.
// Printing (printer.cpp) is deterministic: values are numbered in definition order.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tad::ir {

enum class DType { I1, I32, I64, F16, BF16, F32, F64 };

const char *dtype_name(DType t);  // "f32"
const char *dtype_triton(DType t);  // "tl.float32"
const char *dtype_torch(DType t);  // "float32"
bool dtype_is_float(DType t);
int dtype_rank(DType t);  // promotion order within ints / within floats
bool dtype_from_torch(const std::string &name, DType *out);  // "float16" -> F16

struct Dim {
    int64_t value = 1;
    std::string expr;  // symbolic spelling; equals std::to_string(value) for literals
};

struct Type {
    DType elem = DType::F32;
    bool is_ptr = false;
    std::vector<Dim> shape;  // empty: scalar

    bool scalar() const { return shape.empty(); }
    bool is_float() const { return !is_ptr && dtype_is_float(elem); }
    size_t rank() const { return shape.size(); }
    int64_t numel() const;
    Type with_elem(DType e) const;  // same shape, non-pointer element e
    Type with_shape(std::vector<Dim> s) const;
    bool same_shape(const Type &o) const;  // dims compared by value
    bool operator==(const Type &o) const;
    std::string str() const;  // "f32[BLOCK_SIZE]", "ptr<f16>", "i1[BLOCK_M,BLOCK_N]"
};

using ValueId = int;
constexpr ValueId kNoValue = -1;

// Where an op came from, for diagnostics and for comments in emitted code.
struct SrcLoc {
    int line = 0;
    int col = 0;  // 1-based
};

// One enumerator per row of ops.def, in its order; the table documents each op.
enum class OpKind {
#define TAD_OP(kind, name, cls, attrs, spelling) kind,
#include "ir/ops.def"
};

// What kind of computation an op is (ops.def's Class column).
enum class OpClass {
    Leaf,  // no operands: parameters, constants, program ids, ranges
    Shape,  // moves elements: broadcast, expand_dims, trans, reshape, join, split
    Unary,  // elementwise, one operand (lanes in ops.def)
    Binary,  // elementwise arithmetic, two operands of one element type (lanes in ops.def)
    Compare,  // elementwise comparison giving i1 (lanes in ops.def)
    Logical,  // elementwise bitwise / logical (lanes in ops.def)
    Elementwise,  // elementwise with semantics of its own: where, cast, add_ptr
    Random,  // rand: elementwise over its offsets, with a scalar seed
    Reduction,
    Scan,
    Contraction,  // dot
    Memory,  // load, store, atomic_add
    Barrier,
    Loop,  // loop structure (for_begin, loop_arg, for_end, loop_result)
};

// Which attributes of Op an op kind carries, and so how the printer writes them (ops.def's Attrs).
enum class OpAttrs {
    None,
    Param,  // ival (the parameter's index), name
    Constant,  // fval, name (a constexpr's spelling)
    Axis,  // axis
    Range,  // ival, ival2
    Index,  // ival
    AxisKeepDims,  // axis, keep_dims
    AxisReverse,  // axis, ival (reverse)
    Precision,  // name
    Access,  // has_mask, has_other (which operands are mask / other), name (memory semantics)
    Iterator,  // name
};

// How the emitter spells an op in Triton (ops.def's Spelling column).
struct Spelling {
    enum Form { Custom, Call, Infix, Prefix, Reduce } form = Custom;
    const char *text = "";  // the function or operator
    const char *int_text = "";  // Infix: the operator on integer operands
    int prec = 100;  // Infix / Prefix: the operator's Python binding strength
};

struct OpInfo {
    OpKind kind;
    const char *name;  // printed name
    OpClass cls;
    OpAttrs attrs;
    Spelling spelling;
    bool float_lane, int_lane;  // Unary / Binary / Compare / Logical: defined on floats / integers
    const char *tl_name;  // Unary: the triton.language function lowered to it ("" none)
};

const OpInfo &op_info(OpKind k);
const std::vector<OpInfo> &op_table();  // every op, in OpKind order
const char *op_name(OpKind k);  // "add", "reduce_sum", ...
// Elementwise over same-shape operands (Unary, Binary, Compare, Logical, Elementwise).
bool is_elementwise(OpKind k);

struct Op {
    Op(OpKind k, std::vector<ValueId> ops = {}) : kind(k), operands(std::move(ops)) {}
    OpKind kind;
    std::vector<ValueId> operands;
    ValueId result = kNoValue;  // none for Store / AtomicAdd / Barrier
    // Attributes; which ones apply depends on kind (see OpKind).
    int axis = 0;
    bool keep_dims = false;
    bool has_mask = false;
    bool has_other = false;
    double fval = 0.0;
    int64_t ival = 0, ival2 = 0;
    std::string name;  // Const: constexpr name; AtomicAdd: memory semantics ("relaxed")
    SrcLoc loc;
};

enum class ParamKind { Pointer, Int, Float };

struct Param {
    std::string name;
    ParamKind kind;
    ValueId value = kNoValue;
    // A pointer that reaches the buffer of forward parameter `final_of` as the launch left it (what
    // the forward stored there), not as the launch found it; empty for the launch's own parameters.
    // Only a backward's forward has these: a saved value the backward loads instead of recomputing.
    std::string final_of = {};
};

struct ValueInfo {
    Type type;
    int def_op = -1;  // index into Function::ops
    std::string name;  // the source variable it was bound to, if any ("x", "mean")
};

// A constexpr parameter of the kernel: kept in the signature so the emitted code stays symbolic.
struct Constexpr {
    std::string name;
    std::string literal;  // its value as a Python literal: 16, 0.5, True, 'gelu'
};

struct Function {
    std::string name;
    std::vector<Param> params;
    std::vector<Constexpr> constexprs;  // after params in the signature
    // Constexprs whose values the function depends on, not only through their names (a static `if`,
    // a tl.static_range trip count, an axis, a value folded without a spelling): it is only valid for
    // those values, their literals in `constexprs`. A parameter's name here (not a constexpr's): the
    // function depends on its not being None (`if B is not None`), and serves launches where it is not.
    std::vector<std::string> specialized;
    std::vector<ValueInfo> values;
    std::vector<Op> ops;
    std::string source_path;  // the file the function was lowered from

    const Type &type(ValueId v) const { return values.at(v).type; }
    const Op &def(ValueId v) const { return ops.at(values.at(v).def_op); }
    int param_index(const std::string &name) const;  // -1 if absent
};

// Appends ops to a Function, computing result types.
class Builder {
public:
    explicit Builder(Function &f) : f_(f) {}
    Function &func() { return f_; }
    SrcLoc loc;  // attached to every op built until changed

    ValueId param(const std::string &name, ParamKind kind, Type t);
    ValueId param_like(const Param &p, Type t);  // a copy of another function's parameter
    ValueId constant(double v, DType t, const std::string &constexpr_name = "");
    ValueId program_id(int axis);
    ValueId num_programs(int axis);
    ValueId arange(int64_t start, int64_t end, const std::string &len_expr);
    ValueId broadcast(ValueId v, std::vector<Dim> shape);  // by value: callers pass shapes of this function's values
    ValueId expand_dims(ValueId v, int axis);
    ValueId trans(ValueId v);
    ValueId reshape(ValueId v, std::vector<Dim> shape);  // same element count
    ValueId join(ValueId a, ValueId b);  // operands of one type
    ValueId split(ValueId v, int index);  // v's last dim is 2; index 0 or 1
    ValueId dot(ValueId a, ValueId b, DType out, const std::string &precision);
    ValueId binary(OpKind k, ValueId a, ValueId b);  // operands must already agree in type
    ValueId unary(OpKind k, ValueId a);
    ValueId where(ValueId c, ValueId a, ValueId b);
    ValueId rand(ValueId seed, ValueId offsets, OpKind kind = OpKind::Rand);  // or Randn
    // A cast to the value's own type is elided unless `keep` (the user's explicit casts are kept, so
    // the emitted backward stays right when the same code runs on another input dtype).
    ValueId cast(ValueId v, DType to, bool keep = false);
    ValueId cast_like(ValueId v, ValueId like);
    ValueId add_ptr(ValueId p, ValueId off);
    ValueId reduce(OpKind k, ValueId v, int axis, bool keep_dims);  // also Argmax / Argmin, giving i32
    ValueId cumsum(ValueId v, int axis, bool reverse);
    ValueId load(ValueId p, ValueId mask, ValueId other);  // mask / other may be kNoValue
    void store(ValueId p, ValueId v, ValueId mask);
    void atomic_add(ValueId p, ValueId v, ValueId mask, const std::string &sem);
    void barrier();
    ValueId for_begin(ValueId lo, ValueId hi, ValueId step, const std::string &iterator);
    ValueId loop_arg(ValueId init, int index);
    void for_end(const std::vector<ValueId> &yields);
    ValueId loop_result(int index, const Type &t);

    // Low-level: appends an op whose result (if `has_result`) has type `t`.
    ValueId append(Op op, const Type &t, bool has_result = true);

private:
    Function &f_;
};

// The loops of a function: op indices of each loop's structural ops, outermost first in source
// order. `parent` is the enclosing loop's index in the result, -1 at top level.
struct Loop {
    int begin = -1, end = -1;  // for_begin / for_end op indices
    std::vector<int> args, results;  // loop_arg / loop_result op indices, in carried order
    int parent = -1;
    int last() const { return results.empty() ? end : results.back(); }  // the loop's last op
};
// Empty and `problem` set when the loop structure is malformed.
std::vector<Loop> loops(const Function &f, std::string *problem = nullptr);

// Per value, the indices of the ops that read it, in op order (an op reading it twice appears twice).
std::vector<std::vector<int>> users(const Function &f);

// The names an expression's spelling reads (a Dim's expr, a named constant's "WIDTH - 1"): its
// identifiers, not a number's letters (1e5, 0x10).
std::set<std::string> spelled_names(const std::string &expr);

// Broadcast shape of two shapes under numpy rules; false if incompatible.
bool broadcast_shapes(const std::vector<Dim> &a, const std::vector<Dim> &b, std::vector<Dim> *out);

// Deterministic text form of a function (goldens, tests/passes inputs). It holds all that parse()
// needs to rebuild the function except op locations and the source path:
//   func @k(X: ptr<f32>, n: i32, BLOCK: constexpr = 16) {
//     %3 = arange 0, 16 : i32[BLOCK=16]                    a dim: spelling=value, or the value alone
//     %6 = load %5, mask=%4, other=%2 : f32[BLOCK=16]  // x  after //: the value's source name
//     store %7, %6, mask=%4
//   }
// %0, %1, ... are the parameters. Parameters whose ops are not the leading ops in order print
// with their values (`%5 X: ptr<f32>`) and as `param` ops in the body; a kind that differs from
// the type's prints as `n: f32 kind=int`; `specialized(A, B)` follows the parameters when set.
// Names and spellings that are not words are quoted.
std::string print(const Function &f);

// The inverse of print(): parse(print(f)) equals f in ops, operands, attributes, types (dim
// values and spellings), value names, parameters and constexprs. Lines starting with `//` are
// comments; each op's loc is its line:col in the text. Throws tad::Error TAD_ERR_SYNTAX
// "line:col: message" on malformed text.
Function parse(const std::string &text);

// Checks SSA order, operand types and shapes; returns "" when valid, else the first problem.
std::string verify(const Function &f);

}  // namespace tad::ir
