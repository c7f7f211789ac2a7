// The text form of a plan: one line per allocation, kernel run and result, in execution order.
#include <sstream>

#include "plan/plan.h"
#include "support/text.h"

namespace tad::plan {

namespace {

std::string tensor(const TensorRef &t) {
    static const char *const kinds[] = {"input", "output", "temp"};
    return std::string(kinds[t.kind]) + " " + std::to_string(t.index);
}

std::string key(const Key &k) {
    std::string s;
    for (const auto &[name, value] : k) s += (s.empty() ? "" : ", ") + name + "=" + value;
    return s;
}

// "(stride, size) pairs (1, V), (stride_row, num_programs(0)) where V >= 4".
std::string cover(const passes::Coverage &c) {
    std::string s = "(stride, size) pairs";
    for (size_t i = 0; i < c.digits.size(); ++i)
        s += (i ? ", (" : " (") + c.digits[i].first.str() + ", " + c.digits[i].second.str() + ")";
    for (size_t i = 0; i < c.guards.size(); ++i) s += (i ? " and " : " where ") + c.guards[i].str();
    return s;
}

std::string init(const Alloc &a) {
    switch (a.init) {
    case Init::Absent: return "absent";
    case Init::Cotangent: return "cotangent of output " + std::to_string(a.index);
    case Init::Incoming: return "incoming gradient of output " + std::to_string(a.index);
    case Init::Accumulator: return "accumulator";
    case Init::Zeros: return a.wide ? "zeros, float32" : "zeros";
    case Init::Partials: return "the sum of its partial rows";
    case Init::Covered:
        return std::string(a.wide ? "float32, " : "") + "uninitialised when laid out as " + cover(*a.cover) +
               (a.run >= 0 ? " on run " + std::to_string(a.run) + "'s grid and arguments" : "") + ", else zeros";
    case Init::Tangent:
        if (a.index < 0) return "zero tangent";
        return "tangent of grad input " + std::to_string(a.index) + (a.written ? ", copied" : "");
    case Init::ZeroTangent: return "zeros";
    }
    return "?";
}

// "axis 0", "axes 0, 2".
std::string axes(const std::vector<int> &v) {
    std::vector<std::string> s;
    for (int a : v) s.push_back(std::to_string(a));
    return (v.size() == 1 ? "axis " : "axes ") + join(s);
}

std::string arg(const Arg &a) {
    switch (a.kind) {
    case Arg::Scalar: return "scalar " + a.name;
    case Arg::Tensor: return tensor(a.tensor) + " (" + a.name + ")";
    case Arg::Saved: return tensor(a.tensor) + " (" + a.name + ") saved before launch " + std::to_string(a.before);
    case Arg::Shadow: return "shadow of " + tensor(a.tensor);
    case Arg::Tape: return "tape";
    case Arg::TapeStride: return "tape stride";
    case Arg::TapeNeed: return "tape need";
    case Arg::GridSize: return "grid size along axis " + std::to_string(a.axis);
    case Arg::Hits: return "hits";
    case Arg::Stash: return "stash " + a.name;
    case Arg::Partial: return "partial buffer of the shadow of " + tensor(a.tensor);
    case Arg::PartialStride: return "row length of the partial buffer of " + tensor(a.tensor);
    }
    return "?";
}

class Printer {
public:
    explicit Printer(const Plan &p) : p_(p) {}

    std::string run() {
        os_ << (p_.mode == Mode::Backward ? "backward" : "tangent") << " plan\n";
        kernels();
        os_ << "prologue:\n";
        for (const Alloc &a : p_.prologue) alloc(a, "  ");
        for (const Step &s : p_.steps) step(s);
        os_ << "results:\n";
        for (size_t i = 0; i < p_.results.size(); ++i) {
            const Result &r = p_.results[i];
            os_ << "  " << (p_.mode == Mode::Backward ? "input " : "output ") << i << ": "
                << (r.present ? "shadow of " + tensor(r.tensor) : "none") << "\n";
        }
        for (const Snapshot &s : p_.snapshots)
            os_ << "save before launch " << s.before << ": launch " << s.launch << " " << s.param << "\n";
        return os_.str();
    }

private:
    const Plan &p_;
    std::ostringstream os_;

    void kernels() {
        static const char *const roles[] = {"backward", "tape sizing", "tangent"};
        for (size_t i = 0; i < p_.kernels.size(); ++i) {
            const Kernel &k = p_.kernels[i];
            os_ << "kernel #" << i << " " << k.fn.name << ": " << roles[k.role] << " of " << k.forward;
            if (!k.key.empty()) os_ << " for " << key(k.key);
            if (!k.sized.empty()) os_ << ", sizes " << k.sized;
            for (const auto &[param, w] : k.writes)
                os_ << "; " << param << ": " << (w.kind == passes::GradWrite::Store ? "stores" : "atomics");
            if (k.regrid) {
                os_ << "; re-gridded along " << axes(k.regrid->axes) << ", G = " << join(k.regrid->grid_params);
                for (const std::string &g : k.regrid->accumulated) os_ << "; " << g << " summed per program";
            }
            os_ << "\n";
        }
    }

    void alloc(const Alloc &a, const std::string &indent) {
        os_ << indent << "shadow of " << tensor(a.tensor) << ": " << init(a) << "\n";
    }

    void run(const Run &r, const std::string &what, const std::string &indent) {
        const ir::Function &fn = p_.kernels.at(static_cast<size_t>(r.kernel)).fn;
        os_ << indent << what << " #" << r.kernel << " " << fn.name;
        if (!r.regrid_axes.empty()) os_ << " re-gridded along " << axes(r.regrid_axes);
        if (r.transposed_axis >= 0) os_ << " transposed: axis " << r.transposed_axis << " of size " << r.trips.str();
        if (!r.widening.name.empty()) os_ << ", " << r.widening.name << " x" << r.widening.width;
        for (const passes::FreeTile &t : r.tiles)
            os_ << ", " << t.name << (t.axis < 0 ? " over G" : " along axis " + std::to_string(t.axis)) << " -> "
                << (t.target > 0 ? std::to_string(t.target) : "as recorded");
        os_ << "\n";
        for (size_t i = 0; i < r.args.size(); ++i)
            os_ << indent << "  " << fn.params[i].name << " = " << arg(r.args[i]) << "\n";
        for (size_t i = 0; i < r.partials.size(); ++i) {
            const bool covered = i < r.partial_covers.size() && r.partial_covers[i];
            os_ << indent << "sum the partial buffer's rows into the shadow of " << tensor(r.partials[i])
                << (covered ? " (rows uninitialised when laid out as " + cover(*r.partial_covers[i]) + ")" : "")
                << "\n";
        }
    }

    void step(const Step &s) {
        os_ << "launch " << s.launch << " (" << s.kernel << "):\n";
        for (const Case &c : s.cases) {
            std::string indent = "  ";
            if (!c.key.empty()) {
                os_ << "  when " << key(c.key) << ":\n";
                indent = "    ";
            }
            for (const Precondition &p : c.preconditions) {
                std::string cond = p.mapped ? "programs map onto the box of a branch" : "";
                for (const Guard &g : p.guards) cond += (cond.empty() ? "" : " and ") + g.str();
                os_ << indent << "require " << cond << "\n";
            }
            for (const Branch &b : c.branches) branch(b, c.branches.size() > 1, indent);
        }
    }

    // A branch, under its condition when the case has several.
    void branch(const Branch &b, bool conditional, const std::string &indent) {
        std::string in = indent;
        if (conditional) {
            std::string cond = b.remap ? "programs map onto a box of " + b.remap->str() : "";
            for (const Guard &g : b.guards) cond += (cond.empty() ? "" : " and ") + g.str();
            os_ << indent << (cond.empty() ? "otherwise" : "if " + cond) << ":\n";
            in += "  ";
        }
        if (b.sizing) run(*b.sizing, "size tape", in);
        for (const StashBuffer &s : b.stashes)
            os_ << in << "stash " << s.param << ": " << (s.dims.empty() ? "1" : join(s.dims, " * ")) << " per program"
                << (s.like ? ", typed like " + tensor(*s.like) : std::string()) << "\n";
        for (const Alloc &a : b.allocs) alloc(a, in);
        for (const Run &r : b.runs) run(r, "run", in);
    }
};

}  // namespace

std::string print(const Plan &p) { return Printer(p).run(); }

}  // namespace tad::plan
