#include "verify/interpret.h"

#include <array>
#include <list>
#include <map>
#include <utility>
#include <vector>

#include "frontend/lower.h"
#include "frontend/parser.h"
#include "support/error.h"

namespace tad::verify {

namespace {

// A whole-stub check runs the same few files' kernels hundreds of times (finite differences call the
// stub again and again): the last files parsed on this thread are kept.
const ast::File &parsed(const std::string &path, const std::string &source) {
    constexpr size_t kKept = 8;
    thread_local std::list<std::pair<std::string, ast::File>> cache;  // (path + '\0' + source), newest first
    std::string key = path + '\0' + source;
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->first == key) {
            cache.splice(cache.begin(), cache, it);
            return cache.front().second;
        }
    cache.emplace_front(std::move(key), frontend::parse_source(path, source));
    if (cache.size() > kKept) cache.pop_back();
    return cache.front().second;
}

std::array<int64_t, 3> grid_of(JsonRef launch) {
    std::array<int64_t, 3> g{1, 1, 1};
    JsonRef grid = launch.at("grid");
    for (size_t i = 0; i < grid.size() && i < 3; ++i) g[i] = grid[i].integer();
    return g;
}

bool has_descriptor(JsonRef args) {
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].str_or("kind", "") == "tensor_desc") return true;
    return false;
}

// Every argument's value by parameter name: tensors from their buffer and offset, scalars (and a
// descriptor's shape, strides and block) from their bindings.
std::map<std::string, interp::ArgValue> values_of(JsonRef args, const std::vector<frontend::ArgBinding> &bindings) {
    std::map<std::string, interp::ArgValue> out;
    for (size_t i = 0; i < args.size(); ++i) {
        JsonRef a = args[i];
        std::string kind = a.at("kind").str();
        if (kind == "tensor" || kind == "tensor_desc")
            out[a.at("name").str()] =
                interp::ArgValue::pointer(static_cast<int>(a.at("ref").at("buffer").integer()), a.int_or("offset", 0));
    }
    for (const frontend::ArgBinding &b : bindings) {
        if (b.kind == frontend::ArgBinding::Tensor) continue;
        out[b.name] =
            b.kind == frontend::ArgBinding::Float ? interp::ArgValue::real(b.fval) : interp::ArgValue::integer(b.ival);
    }
    return out;
}

}  // namespace

void interpret(const std::string &path, const std::string &source, JsonRef launch, interp::Memory &mem) {
    const ast::File &file = parsed(path, source);
    JsonRef args = launch.at("args");
    std::vector<frontend::ArgBinding> bindings = frontend::launch_bindings(path, args, true);
    ir::Function fn = frontend::lower_kernel(file, launch.at("kernel").str(), bindings, has_descriptor(args));
    std::map<std::string, interp::ArgValue> values = values_of(args, bindings);
    std::vector<interp::ArgValue> in;
    for (const ir::Param &p : fn.params) {
        auto it = values.find(p.name);
        if (it == values.end())
            fail(TAD_ERR_INVALID_ARGUMENT, path + ": the launch of '" + fn.name + "' has no argument '" + p.name + "'");
        in.push_back(it->second);
    }
    interp::run(fn, in, grid_of(launch), mem);
}

}  // namespace tad::verify
