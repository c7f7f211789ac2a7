// What differentiating a stub's call produced, before it is planned: per forward launch, the
// backward kernels of each specialization (with the variants the launcher chooses between at run
// time) and the tangent kernels, plus the facts of the multi-launch dataflow (src/flow) that decide
// how shadows are shared and which copies are saved. The builders in plan.h turn it into plans.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ad/forward.h"
#include "ad/reverse.h"
#include "passes/affine.h"
#include "passes/host_expr.h"
#include "passes/passes.h"
#include "passes/remap_programs.h"
#include "passes/stash.h"
#include "passes/widen.h"

namespace tad::plan {

// A tensor of the traced call: stub input `index`, returned output `index`, or temporary `index`
// (a buffer the stub allocates and passes between launches).
struct TensorRef {
    enum Kind { Input, Output, Temp } kind = Input;
    int index = 0;
    bool operator<(const TensorRef &o) const { return kind != o.kind ? kind < o.kind : index < o.index; }
    bool operator==(const TensorRef &o) const { return kind == o.kind && index == o.index; }
    bool operator!=(const TensorRef &o) const { return !(*this == o); }
};

// The values of the constexprs that chose static branches while lowering (constexpr name -> Python
// literal), and the parameters whose not being None did (name -> kNotNone); empty when none did.
using Key = std::vector<std::pair<std::string, std::string>>;
inline constexpr const char *kNotNone = "not None";
// A run-time condition on a launch's recorded scalars (and `num_programs(k)`, its grid): two
// scalars equal (a store that mirrors the forward's addresses when `stride_x == stride_y`),
// `lhs >= rhs` (a disjointness proof's `stride >= 2*N`), or any one of several conjunctions (a
// proof that holds for row-major or for column-major strides).
struct Guard {
    enum Op { Equal, AtLeast, Any } op = Equal;
    passes::Poly lhs, rhs;
    std::vector<std::vector<Guard>> any;  // Any: holds when every guard of one of these holds
    bool operator==(const Guard &o) const { return op == o.op && lhs == o.lhs && rhs == o.rhs && any == o.any; }
    // Printed with each symbol spelled by `name`, as Python: "stride_x == stride_y",
    // "stride >= 2*N", "((a >= 1 and b >= c) or (b >= 1 and a >= d))".
    std::string str(const std::function<std::string(const std::string &)> &name) const;
    std::string str() const;
    // Whether it holds where `value` knows every symbol; false where it does not know one.
    bool eval(const std::function<bool(const std::string &, int64_t *)> &value, bool *holds) const;
};
// The conditions under which a variant applies (all of them).
using Guards = std::vector<Guard>;

// A backward kernel re-gridded by passes::regrid: it runs on P programs along the first of grid
// axes `axes` and one along the others (the executor chooses 1 <= P <= G, G the product of the
// recorded grid's sizes along them), each looping over the forward's programs p, p + P, ... < G.
struct Regrid {
    std::vector<int> axes;
    std::vector<std::string> grid_params;  // per axis, the scalar parameter that receives its recorded size
    // Gradient parameter -> the scalar parameter of its partial buffer's row stride: the kernel writes
    // row p of a partial buffer of P rows instead of adding into the gradient.
    std::vector<std::pair<std::string, std::string>> partial;
    std::vector<std::optional<passes::Coverage>> covers;  // per partial: passes::Regrid::covers
    std::vector<std::string> accumulated;  // every gradient parameter summed in registers
};

// A kernel passes::transpose_loops wrote for gradients reduced over a loop and a grid axis. It
// runs on the recorded grid with the size along `axis` replaced by the loop's trip count, and
// receives G, the recorded size along `axis`, in `grid_param`.
struct Transposed {
    ad::Backward bwd;  // its kernel and parameter origins; writes: its gradients, plain stores
    int axis = 0;
    bool split = false;  // a kernel of passes::split_loops (writes: as the backward it splits wrote)
    std::string grid_param;
    passes::TripCount trips;
    passes::Widening widening;  // the constexpr it is launched with widened (passes/widen.h)
    std::vector<passes::FreeTile> tiles;  // other block sizes the launcher may set (passes/widen.h)
};

// A backward kernel and the run-time condition under which the launcher uses it.
struct KernelVariant {
    ad::Backward bwd;
    Guards guards;
    std::optional<Regrid> regrid;
    std::vector<Transposed> transposed;  // run after bwd, each writing a gradient bwd no longer writes
    bool rest = true;  // whether bwd still writes anything (false: only the transposed kernels run)
    // Run last: the writes at data-dependent addresses of gradients the kernels before store
    // (passes::split_scatter), as relaxed atomic adds onto what they stored.
    std::optional<ad::Backward> scatter;
    // Derived from the forward rewritten on its tile coordinates (passes/remap_programs.h): the
    // variant applies where the launch's programs map one to one onto the coordinates' box, and its
    // kernels run on that box instead of the recorded grid.
    std::optional<passes::ProgramMap> remap;
    std::vector<passes::Stash> stashes = {};  // what bwd stores for the transposed kernels (passes/stash.h)
};

// A condition on the launch's arguments that the derivation assumed without proving it statically
// (passes/rewrites.h: a program writes each element of a buffer once, `stride_t >= C`); where it
// fails, the backward raises `refusal` instead of computing a wrong gradient. `mapped`: the
// condition is that the programs map one to one onto the box of some remapped variant (that
// variant's forward on tile coordinates writes each element once: ad::GradSpec::mapped_once).
struct Precondition {
    Guards guards;
    bool mapped = false;
    std::string refusal;
    bool operator==(const Precondition &o) const {
        return guards == o.guards && mapped == o.mapped && refusal == o.refusal;
    }
};

// The backward of one specialization: its variants, tried in order (the last has no guards, unless
// a precondition is `mapped`: then every variant is a remapped one).
struct Specialization {
    Key key;
    std::vector<KernelVariant> variants;
    std::vector<Precondition> preconditions = {};  // checked before any variant runs
};

// The tangent kernel (forward mode) of one specialization, or why forward mode does not handle it.
struct Tangent {
    Key key;
    std::optional<ad::Forward> jvp;
    std::string unsupported;  // the reason, when there is no jvp
};

// One launch of the stub and what was derived for it.
struct LaunchDerivation {
    std::string kernel;  // the forward kernel
    std::map<std::string, TensorRef> tensors;  // pointer parameter -> tensor
    std::vector<Specialization> specializations;  // empty: no gradient flows through the launch
    std::vector<Tangent> tangents;  // forward mode, one per specialization, in its order
    // Pointer parameter -> the launch (this one or a later one) that overwrites its tensor: the
    // derivatives read a copy of the contents saved before that launch.
    std::map<std::string, size_t> saved_before;
};

struct Derivation {
    size_t num_inputs = 0;  // stub parameters
    size_t num_outputs = 0;  // returned tensors
    std::vector<int> grad_inputs;  // stub parameter indices, in GRAD_INPUTS order
    std::vector<LaunchDerivation> launches;  // forward order
    // Where temporary i of the forward is reached: (launch, pointer parameter) of the first launch
    // that takes it.
    std::vector<std::pair<size_t, std::string>> temps;
    std::set<TensorRef> shared;  // shadows accumulated by several launches, or zeroed
    // Shared shadows that one launch's backward writes before any other touches them: it allocates
    // them (float32) as its writes want, and may store there (flow::first_writers).
    std::map<TensorRef, size_t> first_writer;
    std::map<int, int> aliases;  // output j -> the stub input it is (updated in place and returned)
    std::string jvp_unsupported;  // why there is no forward mode (empty: see the tangents)
};

}  // namespace tad::plan
