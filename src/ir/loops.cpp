#include "ir/ir.h"

namespace tad::ir {

namespace {

// Collects the loops in one pass over the ops; each step returns "" or what is malformed.
class LoopScan {
public:
    explicit LoopScan(const Function &f) : f_(f) {}

    std::string step(size_t i) {
        switch (f_.ops[i].kind) {
        case OpKind::ForBegin: return begin(i);
        case OpKind::LoopArg: return arg(i);
        case OpKind::ForEnd: return end(i);
        case OpKind::LoopResult: return result(i);
        default: return "";
        }
    }

    // "" when every loop is closed and has its results; else the problem, with the op it is at.
    std::string finish(size_t *at) {
        if (!open_.empty()) {
            *at = static_cast<size_t>(out_[open_.back()].begin);
            return "never closed";
        }
        for (const Loop &l : out_)
            if (l.results.size() != l.args.size()) {
                *at = static_cast<size_t>(l.end);
                return "missing loop_result ops";
            }
        return "";
    }

    std::vector<Loop> take() { return std::move(out_); }

private:
    const Function &f_;
    std::vector<Loop> out_;
    std::vector<int> open_;  // indices into out_

    std::string begin(size_t i) {
        Loop l;
        l.begin = static_cast<int>(i);
        l.parent = open_.empty() ? -1 : open_.back();
        open_.push_back(static_cast<int>(out_.size()));
        out_.push_back(l);
        return "";
    }

    std::string arg(size_t i) {
        if (open_.empty()) return "outside a loop";
        Loop &l = out_[open_.back()];
        const int prev = l.args.empty() ? l.begin : l.args.back();
        if (prev != static_cast<int>(i) - 1 || f_.ops[i].ival != static_cast<int64_t>(l.args.size()))
            return "not in place after for_begin";
        l.args.push_back(static_cast<int>(i));
        return "";
    }

    std::string end(size_t i) {
        if (open_.empty()) return "without for_begin";
        Loop &l = out_[open_.back()];
        if (f_.ops[i].operands.size() != l.args.size())
            return "yields a different number of values than the loop carries";
        l.end = static_cast<int>(i);
        open_.pop_back();
        return "";
    }

    // The loop whose for_end (or previous loop_result) is right before op i, or null.
    Loop *closed_before(size_t i) {
        Loop *found = nullptr;
        for (Loop &c : out_)
            if (c.end >= 0 && c.last() == static_cast<int>(i) - 1) found = &c;
        return found;
    }

    std::string result(size_t i) {
        if (out_.empty()) return "without a loop";
        Loop *l = closed_before(i);
        if (!l || f_.ops[i].ival != static_cast<int64_t>(l->results.size()) || l->results.size() >= l->args.size())
            return "not in place after for_end";
        l->results.push_back(static_cast<int>(i));
        return "";
    }
};

}  // namespace

std::vector<Loop> loops(const Function &f, std::string *problem) {
    LoopScan scan(f);
    size_t at = 0;
    std::string what;
    for (size_t i = 0; i < f.ops.size() && what.empty(); ++i) {
        what = scan.step(i);
        at = i;
    }
    if (what.empty()) what = scan.finish(&at);
    if (what.empty()) return scan.take();
    if (problem) *problem = "op " + std::to_string(at) + " (" + op_name(f.ops[at].kind) + "): " + what;
    return {};
}

std::vector<std::vector<int>> users(const Function &f) {
    std::vector<std::vector<int>> out(f.values.size());
    for (size_t i = 0; i < f.ops.size(); ++i)
        for (ValueId o : f.ops[i].operands) out[static_cast<size_t>(o)].push_back(static_cast<int>(i));
    return out;
}

}  // namespace tad::ir
