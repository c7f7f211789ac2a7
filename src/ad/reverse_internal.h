// Internal to src/ad: the reverse-mode builder shared by reverse.cpp (parameters, replay, the
// sweep, memory ops) and reverse_loops.cpp (reversal of whole loops).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ad/replay.h"
#include "ad/reverse.h"
#include "support/error.h"

namespace tad::ad::detail {

using ir::OpKind;
using ir::ValueId;

bool contains(const std::vector<std::string> &v, const std::string &s);

class Reverse {
public:
    Reverse(const ir::Function &fwd, const GradSpec &spec, const std::map<std::string, passes::GradWrite> &plan,
            const Cleanup &cleanup)
        : fwd_(fwd),
          spec_(spec),
          plan_(plan),
          cleanup_(cleanup),
          b_(bwd_),
          primal_(fwd.values.size(), ir::kNoValue),
          shadow_(fwd.values.size(), ir::kNoValue),
          adj_(fwd.values.size(), ir::kNoValue) {}

    Backward run(const std::string &name);

private:
    const ir::Function &fwd_;
    const GradSpec &spec_;
    const std::map<std::string, passes::GradWrite> &plan_;
    const Cleanup &cleanup_;
    ir::Function bwd_;
    ir::Builder b_;
    std::vector<ValueId> primal_, shadow_, adj_;
    // The parameters the backward adds to the forward's, by name: shadows and the tape.
    std::map<std::string, ParamOrigin> derived_params_;
    std::map<std::string, ValueId> shadow_param_;  // primal param name -> shadow param value
    std::map<std::string, bool> read_;

    bool atomic(const std::string &param) const;

    void declare_params();

    ValueId P(ValueId v) const { return primal_.at(v); }

    void replay() {
        replay_range(0, static_cast<int>(fwd_.ops.size()), [](int) { return true; });
    }

    // Appends a copy of forward `op` reading the current replay values (ad::replay_op).
    void replay_op(const ir::Op &op) { ad::replay_op(b_, fwd_, op, primal_); }

    // Replays forward ops [from, to) that `keep` accepts, writes excepted. A loop inside is copied
    // with the carried values whose loop_arg `keep` accepts (see body_cone, body_dependents), plus
    // a carried gradient pointer for each differentiated pointer whose loop_result is used, so that
    // shadow() reaches through the loop. A taped loop records its state here (tape.h).
    void replay_range(int from, int to, const std::function<bool(int)> &keep);
    void replay_loop(const ir::Loop &l, const std::function<bool(int)> &keep);

    // The gradient buffer's pointer that mirrors forward pointer value `v`.
    ValueId shadow(ValueId v);

    std::string base_param(ValueId p) const;

    void accumulate(ValueId fwd_value, ValueId contribution);

    // ---- loops ---------------------------------------------------------------------------------
    // While a loop's reverse body is built: the adjoints of values defined outside the loop are
    // accumulated in carried values of the reverse loop. Only the innermost context matters: a
    // nested loop's reversal hands its outer adjoints to the enclosing context when it ends.
    struct LoopContext {
        std::map<ValueId, ValueId> outer;  // forward value -> its running adjoint in the body
        std::set<ValueId> carried_float;  // the accumulators' chain values (see Chain)
    };
    std::vector<LoopContext> contexts_;
    std::vector<ir::Loop> loops_;

    const ir::Loop &loop_ending_at(int i) const;
    const ir::Loop &loop_beginning_at(int i) const;
    static int last_op(const ir::Loop &l) { return l.last(); }
    static int body_start(const ir::Loop &l) { return l.args.empty() ? l.begin + 1 : l.args.back() + 1; }
    // The loop whose loop_arg or loop_result op is `i` (the op's ival is the carried index).
    const ir::Loop &loop_of_slot(int i) const;

    bool is_constant(ValueId v) const;

    bool in_body(const ir::Loop &l, ValueId v) const;

    // How carried float value k of loop l gets from its loop_arg to its yield. An accumulator's path
    // only adds to it, subtracts from it, or passes it through a nested loop that carries it as an
    // accumulator too (`acc += x` under two loops); then its adjoint is the same all along the path
    // and in every iteration. Links are the op indices of those adds / subtractions and of the
    // nested loops' loop_result ops, in forward order; none when the value is only carried.
    struct Chain {
        bool linear = false;
        std::vector<int> links;
    };
    Chain accumulator_chain(const ir::Loop &l, size_t k) const;
    bool nonlinear(const ir::Loop &l) const;
    // Whether loop l stores to a buffer a program may write an element of twice (spec.rewritten):
    // its reverse must run last iteration first.
    bool rewrites(const ir::Loop &l) const;
    // Whether carried value k of loop l is read only as replay_as(it, w), w computed from no float
    // value l carries (passes/stored_states.h: a state the forward stored, loaded back; its address
    // may advance with a carried pointer, which the reverse loop recovers first): the reverse body
    // replays w for it, so it is neither taped nor rerun.
    bool replayed_state(const ir::Loop &l, size_t k) const;
    // No gradient reaches the loop: its results have no adjoints and its body seeds none (a store to
    // a differentiated output). Its reversal would compute nothing (the closed form of an online
    // softmax leaves the forward loop so).
    bool inert(const ir::Loop &l) const;
    // Passes accumulator k's loop-invariant adjoint `seed` along its chain, in the reverse body: to
    // each added term (negated when subtracted), and to the result of each nested loop it runs
    // through, which that loop's reversal reads when the sweep reaches it.
    void seed_chain(const ir::Loop &l, size_t k, const Chain &c, ValueId seed);

    // Values from outside the loop whose adjoints the body may produce (constants have none to
    // pass on). Builds the gradient pointers of outer pointers once, before the loop.
    std::vector<ValueId> outer_values(const ir::Loop &l);
    // Appends a reverse-loop loop_arg per outer value, starting at `zeros` (built before the loop:
    // loop_args must follow for_begin directly), for its running adjoint.
    void carry_outer_adjoints(const std::vector<ValueId> &outer, const std::vector<ValueId> &zeros, int &index,
                              LoopContext &ctx, std::vector<ValueId> &args);
    ValueId zero_like(ValueId fwd_value);  // a zero tile of the forward value's type
    std::vector<ValueId> zeros_like(const std::vector<ValueId> &fwd_values);

    bool differentiated_pointer(ValueId v) const;
    // Whether a replayed loop must carry the gradient pointer that mirrors its result v: when an op
    // after the loop reads v, or an enclosing loop yields it where that loop carries the mirror.
    bool shadow_needed(ValueId v) const;

    // Reverses a loop with nonlinear float state (h = a·h + x, an online softmax): the reverse loop
    // visits the iterations last to first; for each it recovers the carried state (rerunning the
    // forward loop up to that iteration, or reading the tape), replays the body there and propagates
    // the state's adjoint one step back. Accumulators it also carries are handled as in
    // reverse_loop: neither recovered nor carried.
    void reverse_loop_recompute(const ir::Loop &l);
    // What reverse_loop_recompute's steps hand on to each other, in the order they are built.
    struct Recompute {
        explicit Recompute(const ir::Loop &loop) : l(loop) {}
        const ir::Loop &l;
        // Carried indices: the nonlinear float state (recovered, with carried adjoints), the
        // accumulators (neither) and the differentiated pointers (their shadows carried alongside).
        std::vector<size_t> floats, accumulators, mirrored;
        std::vector<Chain> chains;  // per carried index; the accumulators' are linear
        std::vector<ValueId> accumulator_args;  // the accumulators' forward loop_arg values
        std::vector<ValueId> outer, mirror_inits;  // outer_values(l); the mirrored pointers' initial shadows
        std::vector<ValueId> saved_primal, saved_shadow, saved_adj;  // as before the loop
        ValueId lo = ir::kNoValue, step = ir::kNoValue, one = ir::kNoValue, trips = ir::kNoValue;
        ValueId k_it = ir::kNoValue, i_k = ir::kNoValue;  // the iteration reversed: index, iterator value
        std::vector<ValueId> state_adj, acc_args;  // the reverse loop's carried adjoints: state, outer values
        LoopContext ctx;
        std::vector<ValueId> state, mirror_state;  // per carried index / per mirrored: at iteration k_it
    };
    void classify_carried(Recompute &r) const;
    // The reverse loop over the iterations, last first, with its carried adjoints.
    void open_reverse_loop(Recompute &r);
    // The state at iteration k_it: rerunning the forward loop up to it, or reading the tape.
    void recover_state(Recompute &r);
    void rerun_to_iteration(Recompute &r, const std::vector<size_t> &rerun);
    // Where every value to rerun and every mirrored pointer only advances by an amount from before
    // the loop (passes::advance_of: `p += D`), each at iteration k_it directly, init + k_it · amount:
    // no rerun of the forward loop inside the reverse one (quadratic in the trip count).
    bool advance_to_iteration(Recompute &r, const std::vector<size_t> &rerun);
    ValueId advanced(const Recompute &r, ValueId init, size_t k);
    ValueId before_loop(const ir::Loop &l, ValueId v);
    // Replays the body at iteration k_it from the recovered state and sweeps it; returns the yields.
    std::vector<ValueId> sweep_iteration(Recompute &r);
    // Ends the reverse loop and hands its adjoints to the inits and the outer values.
    void close_reverse_loop(Recompute &r, const std::vector<ValueId> &yields);

    // The ops of loop l's body (loop_args included) that `roots` depend on. A nested loop enters
    // with its for_begin / for_end and the carried values needed, each with its init and yield.
    std::set<int> body_cone(const ir::Loop &l, const std::vector<ValueId> &roots) const;
    // The ops of loop l's body whose results depend on `roots` (values of l's body), through the
    // carried values of nested loops too.
    std::set<int> body_dependents(const ir::Loop &l, const std::vector<ValueId> &roots) const;

    // ---- the tape (LoopPolicy::Tape, tape.h) ---------------------------------------------------
    struct TapeRegion {
        std::vector<ValueId> state;  // forward loop_arg values stored, in carried order
        ValueId base = ir::kNoValue;  // backward: the region's first element (scalar pointer)
        ValueId slot = ir::kNoValue;  // backward: elements per iteration (i32)
        ValueId lo = ir::kNoValue, step = ir::kNoValue;
        std::vector<ValueId> offsets;  // backward: each state value's offset in the slot (i32)
    };
    std::map<int, TapeRegion> taped_;  // by the loop's for_begin op index
    ValueId tape_param_ = ir::kNoValue, tape_stride_param_ = ir::kNoValue;
    ValueId tape_cursor_ = ir::kNoValue;  // i64: start of the next region in this program's tape

    // Top-level loops with nonlinear float state whose counters and pointers do not depend on that
    // state (those are still recomputed, cheaply); the others keep the recompute policy. Loops
    // nested in a taped loop are replayed from its taped state; a nonlinear loop nested in any loop
    // is recomputed (its tape would need a region per iteration of the enclosing loops).
    void choose_taped_loops();
    void begin_tape_region(TapeRegion &region, const ir::Op &begin);
    void record_tape(const TapeRegion &region, const ir::Op &begin);
    // Loads the taped state of iteration r.k_it into r.state (reverse_loop_recompute).
    void read_tape(Recompute &r, const TapeRegion &region);
    std::string fresh_param_name(std::string name) const;
    static bool is_write(const ir::Op &op) { return op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd; }

    // Reverses an accumulator loop. Accumulators make the iterations independent of each other's
    // adjoints, so the reverse loop runs in forward order: it recomputes each iteration's body
    // (carrying pointers and counters as the forward does) and propagates the accumulators'
    // loop-invariant adjoints through it. A loop nested in the body is reversed in place, in the
    // context of the recomputed iteration, by the same machinery (sweep_range).
    void reverse_loop(const ir::Loop &l);

    void sweep() { sweep_range(0, static_cast<int>(fwd_.ops.size())); }

    // Reverse sweep over forward ops [from, to); a loop inside is reversed as a whole.
    void sweep_range(int from, int to);

    void seed_from_store(const ir::Op &op);

    void write_gradient(const ir::Op &op, ValueId g);
    void write_zero_gradient(const ir::Op &op);
};

}  // namespace tad::ad::detail
