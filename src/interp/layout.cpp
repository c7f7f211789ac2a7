#include "interp/tile.h"

namespace tad::interp {

int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

bool broadcast_strides(const Shape &from, const Shape &to, std::vector<int64_t> *strides) {
    if (from.size() > to.size()) return false;
    strides->assign(to.size(), 0);
    int64_t stride = 1;
    for (size_t k = 1; k <= from.size(); ++k) {
        const int64_t f = from[from.size() - k];
        const size_t t = to.size() - k;
        if (f == to[t])
            (*strides)[t] = stride;
        else if (f != 1)
            return false;
        stride *= f;
    }
    return true;
}

template <class T>
void gather(const std::vector<T> &in, const Shape &to, const std::vector<int64_t> &strides, std::vector<T> &out) {
    const int64_t n = numel(to);
    out.resize(static_cast<size_t>(n));
    if (to.empty()) {
        out[0] = in[0];
        return;
    }
    if (n == 0) return;
    // Rows of the last dim are contiguous in `out`; each row's start in `in` comes from the row's
    // index, decomposed over the outer dims (no per-call scratch, so small tiles stay cheap).
    const size_t last = to.size() - 1;
    const int64_t row = to[last], step = strides[last];
    for (int64_t r = 0; r < n / row; ++r) {
        int64_t rest = r, base = 0;
        for (size_t d = last; d-- > 0;) {
            base += (rest % to[d]) * strides[d];
            rest /= to[d];
        }
        T *dst = out.data() + r * row;
        for (int64_t i = 0; i < row; ++i) dst[i] = in[static_cast<size_t>(base + i * step)];
    }
}

template void gather(const std::vector<double> &, const Shape &, const std::vector<int64_t> &, std::vector<double> &);
template void gather(const std::vector<int32_t> &, const Shape &, const std::vector<int64_t> &, std::vector<int32_t> &);
template void gather(const std::vector<int64_t> &, const Shape &, const std::vector<int64_t> &, std::vector<int64_t> &);

namespace {
// A shape viewed as [outer, n, inner] around `axis` (-1: all of it is the middle dim n).
struct Around {
    int64_t outer = 1, n = 1, inner = 1;
    Around(const Shape &s, int axis) {
        if (axis < 0) {
            n = numel(s);
            return;
        }
        n = s[axis];
        for (int d = 0; d < axis; ++d) outer *= s[d];
        for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
    }
    size_t at(int64_t o, int64_t k, int64_t i) const { return static_cast<size_t>((o * n + k) * inner + i); }
};

// `in` viewed as [outer, n, inner]; reduces the middle dim into out[outer, inner].
template <class F>
void reduce_middle(const std::vector<double> &in, const Around &v, double init, F combine, std::vector<double> &out) {
    out.assign(static_cast<size_t>(v.outer * v.inner), init);
    for (int64_t o = 0; o < v.outer; ++o) {
        double *dst = out.data() + o * v.inner;
        for (int64_t k = 0; k < v.n; ++k) {
            const double *src = in.data() + v.at(o, k, 0);
            for (int64_t i = 0; i < v.inner; ++i) dst[i] = combine(dst[i], src[i]);
        }
    }
}
}  // namespace

void reduce(ir::OpKind k, const std::vector<double> &in, const Shape &s, int axis, std::vector<double> &out) {
    const Around v(s, axis);
    const double inf = std::numeric_limits<double>::infinity();
    // Max / Min take a NaN operand over anything (interp.h: undefined lanes stay visible).
    switch (k) {
    case ir::OpKind::ReduceSum:
        return reduce_middle(
            in, v, 0.0, [](double a, double b) { return a + b; }, out);
    case ir::OpKind::ReduceMax:
        return reduce_middle(
            in, v, -inf, [](double a, double b) { return b > a || b != b ? b : a; }, out);
    default:  // ReduceMin: run() calls this for the three reductions only
        return reduce_middle(
            in, v, inf, [](double a, double b) { return b < a || b != b ? b : a; }, out);
    }
}

void arg_extremum(ir::OpKind k, const std::vector<double> &in, const Shape &s, int axis, std::vector<double> &out) {
    const Around v(s, axis);
    const bool max = k == ir::OpKind::Argmax;
    out.resize(static_cast<size_t>(v.outer * v.inner));
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
            int64_t best = 0;
            bool undefined = false;
            for (int64_t j = 0; j < v.n; ++j) {
                const double x = in[v.at(o, j, i)], b = in[v.at(o, best, i)];
                undefined = undefined || x != x;
                if (max ? x > b : x < b) best = j;  // strictly: ties keep the first index
            }
            out[static_cast<size_t>(o * v.inner + i)] =
                undefined ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(best);
        }
}

void cumsum(const std::vector<double> &in, const Shape &s, int axis, bool reverse, std::vector<double> &out) {
    const Around v(s, axis);
    out.resize(in.size());
    for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
            double sum = 0;
            for (int64_t j = 0; j < v.n; ++j) {
                const size_t at = v.at(o, reverse ? v.n - 1 - j : j, i);
                out[at] = sum += in[at];
            }
        }
}

}  // namespace tad::interp
