#include "ir/ir.h"

namespace tad::ir {

std::vector<Loop> loops(const Function &f, std::string *problem) {
    std::vector<Loop> out;
    std::vector<int> open;  // indices into `out`
    auto bad = [&](size_t i, const std::string &what) {
        if (problem) *problem = "op " + std::to_string(i) + " (" + op_name(f.ops[i].kind) + "): " + what;
        return std::vector<Loop>{};
    };
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const Op &op = f.ops[i];
        switch (op.kind) {
        case OpKind::ForBegin: {
            Loop l;
            l.begin = static_cast<int>(i);
            l.parent = open.empty() ? -1 : open.back();
            open.push_back(static_cast<int>(out.size()));
            out.push_back(l);
            break;
        }
        case OpKind::LoopArg: {
            if (open.empty()) return bad(i, "outside a loop");
            Loop &l = out[open.back()];
            int prev = l.args.empty() ? l.begin : l.args.back();
            if (prev != static_cast<int>(i) - 1 || op.ival != static_cast<int64_t>(l.args.size()))
                return bad(i, "not in place after for_begin");
            l.args.push_back(static_cast<int>(i));
            break;
        }
        case OpKind::ForEnd: {
            if (open.empty()) return bad(i, "without for_begin");
            Loop &l = out[open.back()];
            if (op.operands.size() != l.args.size())
                return bad(i, "yields a different number of values than the loop carries");
            l.end = static_cast<int>(i);
            open.pop_back();
            break;
        }
        case OpKind::LoopResult: {
            if (out.empty()) return bad(i, "without a loop");
            // The loop whose for_end (or previous loop_result) is right before this op.
            Loop *l = nullptr;
            for (Loop &c : out)
                if (c.end >= 0 && (c.results.empty() ? c.end : c.results.back()) == static_cast<int>(i) - 1) l = &c;
            if (!l || op.ival != static_cast<int64_t>(l->results.size()) || l->results.size() >= l->args.size())
                return bad(i, "not in place after for_end");
            l->results.push_back(static_cast<int>(i));
            break;
        }
        default: break;
        }
    }
    if (!open.empty()) return bad(static_cast<size_t>(out[open.back()].begin), "never closed");
    for (size_t k = 0; k < out.size(); ++k)
        if (out[k].results.size() != out[k].args.size())
            return bad(static_cast<size_t>(out[k].end), "missing loop_result ops");
    return out;
}

}  // namespace tad::ir
