// The skeleton of a pass that rewrites loop-carried values (lift_reductions.h, factor_sums.h): it
// looks at every carried value of every loop (find), and where it found some to rewrite (found()
// > 0, which also records the count in the result), rebuilds the function (rebuild); otherwise the
// result holds the input unchanged.
#pragma once

#include <utility>
#include <vector>

#include "ir/ir.h"
#include "passes/passes.h"

namespace tad::passes {

template <class Result>  // a struct with `ir::Function fn`
class CarriedRewrite {
public:
    explicit CarriedRewrite(const ir::Function &f) : f_(f), users_(ir::users(f)), b_(out_.fn) {}
    CarriedRewrite(const CarriedRewrite &) = delete;
    CarriedRewrite &operator=(const CarriedRewrite &) = delete;
    virtual ~CarriedRewrite() = default;

    Result run() {
        for (const ir::Loop &l : ir::loops(f_))
            for (size_t k = 0; k < l.args.size(); ++k) find(l, k);
        if (found() == 0)
            out_.fn = f_;
        else
            rebuild();
        return std::move(out_);
    }

protected:
    virtual void find(const ir::Loop &l, size_t k) = 0;
    virtual int found() = 0;
    virtual void rebuild() = 0;

    bool only_user(ir::ValueId v, int op) const { return passes::only_user(users_, v, op); }

    const ir::Function &f_;
    std::vector<std::vector<int>> users_;
    Result out_;
    ir::Builder b_;
};

}  // namespace tad::passes
