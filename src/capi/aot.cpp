// The C ABI of exported backwards (include/tad.h, "Generated backwards without Python"): tad_export
// over the session, tad_kernels_* and tad_launch_backward over src/aot.
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "aot/kernels.h"
#include "capi/guard.h"
#include "driver/session.h"

struct tad_session {
    explicit tad_session(tad::driver::SessionOptions opts) : impl(std::move(opts)) {}
    tad::driver::Session impl;
};

struct tad_kernels {
    std::unique_ptr<tad::aot::Kernels> impl;
};

namespace {

using namespace tad::capi;

#define TAD_FIELD_END(type, field) (offsetof(type, field) + sizeof(type::field))
constexpr size_t kExportEnds[] = {TAD_FIELD_END(tad_export_options, dtypes)};
constexpr size_t kKernelsEnds[] = {TAD_FIELD_END(tad_kernels_options, libcuda)};
constexpr size_t kLaunchEnds[] = {TAD_FIELD_END(tad_launch_options, num_values)};
#undef TAD_FIELD_END
static_assert(std::size(kExportEnds) == TAD_EXPORT_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kKernelsEnds) == TAD_KERNELS_OPTIONS_VERSION, "one end per version");
static_assert(std::size(kLaunchEnds) == TAD_LAUNCH_OPTIONS_VERSION, "one end per version");

tad::driver::ExportOptions export_options(const tad_export_options *given, const char *fn) {
    need(given, fn, "opts");
    const tad_export_options o = read_options(given, kExportEnds, fn);
    tad::driver::ExportOptions eo;
    eo.out_dir = text_or(o.out_dir, "");
    if (eo.out_dir.empty()) invalid(fn, "opts->out_dir is NULL or empty");
    eo.dims_json = text_or(o.dims_json, "");
    eo.dtypes = text_or(o.dtypes, "");
    return eo;
}

std::string libcuda(const tad_kernels_options *given, const char *fn) {
    tad_kernels_options o{};
    if (given) o = read_options(given, kKernelsEnds, fn);
    const char *env = std::getenv("TAD_LIBCUDA");
    return text_or(o.libcuda, text_or(env, "libcuda.so.1"));
}

std::vector<int64_t> dims(const long long *p, int ndim, const char *fn, const std::string &what) {
    if (ndim > 0 && !p) invalid(fn, what + " is NULL");
    return std::vector<int64_t>(p, p + (ndim > 0 ? ndim : 0));
}

void add_tensor(tad::aot::Request &r, const tad_tensor_arg &t, const char *fn) {
    if (!t.name) invalid(fn, "a tensor argument has no name");
    const std::string name = t.name;
    if (!t.dtype) invalid(fn, "tensor " + name + " has no dtype");
    if (t.ndim < 0) invalid(fn, "tensor " + name + " has a negative ndim");
    tad::aot::TensorArg a;
    a.data = t.data;
    a.grad = t.grad;
    a.saved = t.saved;
    a.dtype = t.dtype;
    a.shape = dims(t.shape, t.ndim, fn, "the shape of tensor " + name);
    a.strides = dims(t.strides, t.ndim, fn, "the strides of tensor " + name);
    if (!r.tensors.emplace(name, a).second) invalid(fn, "tensor " + name + " is given twice");
}

void add_value(tad::aot::Request &r, const tad_value_arg &v, const char *fn) {
    if (!v.name) invalid(fn, "a value argument has no name");
    const std::string name = v.name;
    tad::aot::Value a;
    switch (v.kind) {
    case TAD_VALUE_INT: a.kind = tad::aot::Value::Int; break;
    case TAD_VALUE_FLOAT: a.kind = tad::aot::Value::Float; break;
    case TAD_VALUE_BOOL: a.kind = tad::aot::Value::Bool; break;
    case TAD_VALUE_LITERAL:
        a.kind = tad::aot::Value::Literal;
        if (!v.literal) invalid(fn, "value " + name + " is a literal with no text");
        a.literal = v.literal;
        break;
    default: invalid(fn, "value " + name + " has unknown kind " + std::to_string(v.kind));
    }
    a.i = v.kind == TAD_VALUE_BOOL ? (v.integer != 0) : v.integer;
    a.f = v.real;
    if (!r.values.emplace(name, a).second) invalid(fn, "value " + name + " is given twice");
}

tad::aot::Request request(const tad_launch_options *given, const char *fn) {
    need(given, fn, "opts");
    const tad_launch_options o = read_options(given, kLaunchEnds, fn);
    tad::aot::Request r;
    r.kernel = text_or(o.kernel, "");
    const long long grid[3] = {o.grid_x, o.grid_y, o.grid_z};
    for (size_t d = 0; d < 3; ++d) {
        if (grid[d] < 0) invalid(fn, "the grid has a negative size");
        r.grid[d] = grid[d] ? grid[d] : 1;
    }
    if (o.num_warps < 0 || o.num_stages < 0) invalid(fn, "num_warps and num_stages must not be negative");
    if (o.num_warps) r.num_warps = o.num_warps;
    if (o.num_stages) r.num_stages = o.num_stages;
    if (o.num_tensors < 0 || o.num_values < 0) invalid(fn, "num_tensors and num_values must not be negative");
    if (o.num_tensors > 0) need(o.tensors, fn, "opts->tensors");
    if (o.num_values > 0) need(o.values, fn, "opts->values");
    for (int i = 0; i < o.num_tensors; ++i) add_tensor(r, o.tensors[i], fn);
    for (int i = 0; i < o.num_values; ++i) add_value(r, o.values[i], fn);
    return r;
}

}  // namespace

extern "C" {

int tad_export_options_init(tad_export_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kExportEnds, tad_export_options TAD_EXPORT_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_kernels_options_init(tad_kernels_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kKernelsEnds, tad_kernels_options TAD_KERNELS_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_launch_options_init(tad_launch_options *opts, unsigned int version) {
    return guard(__func__, [&](const char *fn) {
        init_options(opts, version, kLaunchEnds, tad_launch_options TAD_LAUNCH_OPTIONS_INIT, fn);
        return TAD_OK;
    });
}

int tad_export(tad_session *session, const tad_export_options *opts, char **out_report) {
    return guard(__func__, [&](const char *fn) {
        clear(out_report);
        need(session, fn, "session");
        std::string report = session->impl.export_kernels(export_options(opts, fn));
        if (out_report) *out_report = c_string(report);
        return TAD_OK;
    });
}

int tad_kernels_load(const char *dir, const tad_kernels_options *opts, tad_kernels **out) {
    return guard(__func__, [&](const char *fn) {
        need(out, fn, "out");
        *out = nullptr;
        need(dir, fn, "dir");
        const std::string lib = libcuda(opts, fn);
        auto k = std::make_unique<tad_kernels>();
        try {
            k->impl = std::make_unique<tad::aot::Kernels>(dir, lib);
        } catch (const tad::Error &e) {  // every message of loading names the function
            tad::fail(e.status(), std::string(fn) + ": " + e.what());
        }
        *out = k.release();
        return TAD_OK;
    });
}

void tad_kernels_free(tad_kernels *kernels) { delete kernels; }

int tad_kernels_manifest(tad_kernels *kernels, char **out_json) {
    return guard(__func__, [&](const char *fn) {
        clear(out_json);
        need(kernels, fn, "kernels");
        need(out_json, fn, "out_json");
        *out_json = c_string(tad::aot::manifest_json(kernels->impl->manifest()).dump(true));
        return TAD_OK;
    });
}

int tad_launch_backward(tad_kernels *kernels, const tad_launch_options *opts) {
    return guard(__func__, [&](const char *fn) {
        need(kernels, fn, "kernels");
        tad::aot::Request r = request(opts, fn);
        try {
            kernels->impl->launch(r, static_cast<tad::aot::cu::Stream>(opts->stream));
        } catch (const tad::Error &e) {
            tad::fail(e.status(), std::string(fn) + ": " + e.what());
        }
        return TAD_OK;
    });
}

}  // extern "C"
