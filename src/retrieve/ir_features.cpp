// The ir group of features.h: op n-grams along the dataflow of each launched kernel, lowered with
// guessed bindings.
#include <algorithm>
#include <set>

#include "frontend/lower.h"
#include "retrieve/features.h"
#include "retrieve/guess.h"
#include "support/error.h"

namespace tad::retrieve {

namespace {

// Ops that only move, widen or retype a value: n-grams look through them to what made it.
bool transparent(ir::OpKind k) {
    return k == ir::OpKind::Broadcast || k == ir::OpKind::ExpandDims || k == ir::OpKind::Cast ||
           k == ir::OpKind::Reshape || k == ir::OpKind::Trans;
}

bool leaf(ir::OpKind k) { return k == ir::OpKind::Param || k == ir::OpKind::Const; }

// The op that computed `v`, through transparent ops; -1 for a parameter or a constant.
int producer(const ir::Function &f, ir::ValueId v) {
    for (int guard = 0; guard < 64; ++guard) {
        const int d = f.values.at(static_cast<size_t>(v)).def_op;
        if (d < 0) return -1;
        const ir::Op &op = f.ops[static_cast<size_t>(d)];
        if (leaf(op.kind)) return -1;
        if (!transparent(op.kind) || op.operands.empty()) return d;
        v = op.operands[0];
    }
    return -1;
}

// At most the first two producers of an op, without repeats.
std::vector<int> producers(const ir::Function &f, const ir::Op &op) {
    std::vector<int> out;
    for (ir::ValueId v : op.operands) {
        int p = producer(f, v);
        if (p >= 0 && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
        if (out.size() == 2) break;
    }
    return out;
}

void add_function(const ir::Function &f, std::map<std::string, double> &g) {
    int depth = 0;
    for (const ir::Op &op : f.ops) {
        if (op.kind == ir::OpKind::ForEnd) --depth;
        if (leaf(op.kind) || op.kind == ir::OpKind::ForEnd || op.kind == ir::OpKind::LoopResult) continue;
        const std::string me = ir::op_name(op.kind);
        g["ir:" + me] += 1;
        if (depth > 0) g["ir:loop/" + me] += 1;
        if (op.kind == ir::OpKind::ForBegin) ++depth;
        if (transparent(op.kind)) continue;
        for (int p : producers(f, op)) {
            const ir::Op &src = f.ops[static_cast<size_t>(p)];
            const std::string mid = ir::op_name(src.kind);
            g["ir:" + mid + ">" + me] += 1;
            for (int pp : producers(f, src))
                g["ir:" + std::string(ir::op_name(f.ops[static_cast<size_t>(pp)].kind)) + ">" + mid + ">" + me] += 1;
        }
    }
}

std::string first_line(const std::string &s) { return s.substr(0, s.find('\n')); }

}  // namespace

void add_ir_features(const frontend::KernelFile &kf, Features &out) {
    std::set<const ast::Node *> done;
    for (const auto &name : kf.stub.launched) {
        if (!done.insert(kf.jit(name).get()).second) continue;
        try {
            ir::Function f = frontend::lower_kernel(kf, name, guess_bindings(kf, name));
            add_function(f, out.group(Group::Ir));
            out.lowered.push_back(name);
        } catch (const Error &e) {
            out.notes.push_back(name + ": not lowered: " + first_line(e.what()));
        }
    }
}

}  // namespace tad::retrieve
