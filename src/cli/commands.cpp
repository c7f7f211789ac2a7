#include "commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>

#include "errors.h"
#include "handle.h"
#include "json_util.h"
#include "summary.h"

namespace tad_cli {

namespace {

// --dims takes one dims object or a non-empty list of them. Generation traces the stub with the
// first (so that a file without a SWEEP needs --dims only once) and the rest for the constexpr
// values the kernels are specialized on.
struct Dims {
    std::string first;  // "" without --dims: the library uses the first SWEEP entry
    std::string list;  // "" without --dims: the whole SWEEP
};

Dims dims_option(const Args &a) {
    if (!a.has("--dims")) return {};
    JsonPtr j = parse_json(a.value("--dims"));
    if (cJSON_IsObject(j.get())) {
        std::string one = compact(j.get());
        return {one, "[" + one + "]"};
    }
    bool all_objects = cJSON_IsArray(j.get()) && cJSON_GetArraySize(j.get()) > 0;
    const cJSON *d = nullptr;
    cJSON_ArrayForEach(d, j.get()) all_objects = all_objects && cJSON_IsObject(d);
    if (!all_objects)
        throw UsageError(
            "--dims: expected a JSON object such as '{\"M\": 4, \"N\": 64}' or a "
            "non-empty list of them");
    return {compact(cJSON_GetArrayItem(j.get(), 0)), compact(j.get())};
}

// A trace record file (--launch) is read whole: refuse at once what would never end or could not fit.
const long long kMaxLaunchBytes = 256LL << 20;

std::string read_text(const std::string &path, const std::string &what) {
    const auto refuse = [&](const std::string &why) {
        return Failure{TAD_ERR_IO, what + ": cannot read '" + path + "': " + why};
    };
    // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw refuse(std::strerror(errno));
    struct stat st;
    std::string text, why;
    if (::fstat(fd, &st) != 0)
        why = std::strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    const auto over = [](long long size) {
        return std::to_string(size) + " bytes, over the limit of " + std::to_string(kMaxLaunchBytes);
    };
    if (why.empty() && st.st_size > kMaxLaunchBytes) why = over(st.st_size);
    char buf[1 << 16];
    while (why.empty()) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) why = std::strerror(errno);
        if (n <= 0) break;
        text.append(buf, static_cast<size_t>(n));
        if (text.size() > static_cast<size_t>(kMaxLaunchBytes)) why = over(static_cast<long long>(text.size()));
    }
    ::close(fd);
    if (!why.empty()) throw refuse(why);
    return text;
}

void write_text(const std::string &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw Failure{TAD_ERR_IO, "cannot write '" + path + "'"};
}

// Every command that needs a candidate makes a fresh one: load FILE, generate; returns its id.
std::string prepare(Session &s, const Args &a, const Dims &dims) {
    s.load(a.positional.at(0));
    std::string launch = a.has("--launch") ? read_text(a.value("--launch"), "--launch") : "";
    return s.generate(dims.list, launch, a.value("--loops"));
}

// The verify and bench options of one command line; the strings live as long as this object.
struct Request {
    Request(const Args &a, const Dims &d) : dims(d.list), dtypes(a.value("--dtypes")) {
        verify.dims_json = bench.dims_json = dims.empty() ? nullptr : dims.c_str();
        verify.dtypes = bench.dtypes = dtypes.empty() ? nullptr : dtypes.c_str();
        verify.seed = static_cast<unsigned>(a.integer("--seed", 0, 0, UINT_MAX));
        verify.max_elements = a.integer("--max-elements", 0, 1, LLONG_MAX);
        bench.reps = static_cast<int>(a.integer("--reps", 0, 1, INT_MAX));
    }
    tad_verify_options on(bool cpu) const {
        tad_verify_options o = verify;
        o.cpu = cpu ? 1 : 0;
        return o;
    }

    std::string dims, dtypes;
    tad_verify_options verify = TAD_VERIFY_OPTIONS_INIT;
    tad_bench_options bench = TAD_BENCH_OPTIONS_INIT;
};

}  // namespace

int cmd_generate(const Args &a) {
    Dims dims = dims_option(a);
    Session s(a);
    std::string id = prepare(s, a, dims);
    std::string out = a.value("--output");
    // With the source on stdout, the explanation goes to stderr.
    std::ostream &explain = out == "-" ? std::cerr : std::cout;
    if (out == "-") std::cout << s.source(id);
    if (!out.empty() && out != "-") write_text(out, s.source(id));
    if (out != "-") std::cout << id << '\n';
    if (a.has("--explain")) explain << s.explain(id);
    return kExitOk;
}

int cmd_verify(const Args &a) {
    Dims dims = dims_option(a);
    Request req(a, dims);
    Session s(a);
    prepare(s, a, dims);
    Verified v = s.verify(req.on(a.has("--cpu")));
    if (a.has("--json")) {
        std::cout << v.report << '\n';
    } else {
        Summary summary;
        summary.add_verify(v.report);
        summary.print(std::cout);
        std::cout << verify_line(v.report) << '\n';
    }
    if (v.status != TAD_OK) throw Failure{v.status, v.message};
    return kExitOk;
}

// Bench needs a candidate that passed verification, so the GPU verify runs first on the same dims.
int cmd_bench(const Args &a) {
    Dims dims = dims_option(a);
    Request req(a, dims);
    Session s(a);
    prepare(s, a, dims);
    Verified v = s.verify(req.on(false));
    Summary summary;
    summary.add_verify(v.report);
    std::string report = v.status == TAD_OK ? s.bench(req.bench) : "";
    if (a.has("--json")) {
        std::cout << (report.empty() ? v.report : report) << '\n';
    } else {
        if (!report.empty()) summary.add_bench(report);
        summary.print(std::cout);
        std::cout << verify_line(v.report) << '\n';
        if (!report.empty()) std::cout << bench_line(report) << '\n';
    }
    if (v.status != TAD_OK) throw Failure{v.status, v.message};
    return kExitOk;
}

namespace {

// The GPU half of `tad run`: verify, then bench if that passed. A missing GPU is a skip, not a
// failure.
Verified gpu_steps(Session &s, const Request &req, Summary &summary, std::vector<std::string> &lines) {
    Verified v{TAD_OK, "", ""};
    try {
        v = s.verify(req.on(false));
    } catch (const Failure &f) {
        if (f.status != TAD_ERR_NO_GPU) throw;
        lines.push_back("[SKIP] no GPU: " + f.message);
        return v;
    }
    summary.add_verify(v.report);
    lines.push_back(verify_line(v.report));
    if (v.status != TAD_OK) return v;
    std::string report = s.bench(req.bench);
    summary.add_bench(report);
    lines.push_back(bench_line(report));
    return v;
}

}  // namespace

// generate, verify on the CPU interpreter, then on the GPU and bench. The table shows whatever ran,
// also when a later step fails.
int cmd_run(const Args &a) {
    Dims dims = dims_option(a);
    Request req(a, dims);
    Session s(a);
    prepare(s, a, dims);
    Summary summary;
    std::vector<std::string> lines;
    auto print = [&] {
        summary.print(std::cout);
        for (const std::string &l : lines) std::cout << l << '\n';
    };
    Verified result{TAD_OK, "", ""};
    try {
        result = s.verify(req.on(true));
        summary.add_verify(result.report);
        lines.push_back(verify_line(result.report));
        if (result.status == TAD_OK && !a.has("--cpu-only")) result = gpu_steps(s, req, summary, lines);
    } catch (const Failure &) {
        print();
        throw;
    }
    print();
    if (result.status != TAD_OK) throw Failure{result.status, result.message};
    return kExitOk;
}

int cmd_snapshots(const Args &a) {
    Session s(a);
    std::string list = s.snapshot_list();
    if (a.has("--json"))
        std::cout << list << '\n';
    else
        print_snapshots(list, std::cout);
    return kExitOk;
}

int cmd_rollback(const Args &a) {
    Session s(a);
    s.rollback(a.positional.at(0));
    std::cout << "current snapshot: " << a.positional.at(0) << '\n';
    return kExitOk;
}

}  // namespace tad_cli

namespace tad_cli {

// generate, then tad_export into -o DIR at --dims (default: the SWEEP) and --dtypes.
int cmd_export(const Args &a) {
    if (!a.has("--output")) throw UsageError("'export' needs -o DIR");
    Dims dims = dims_option(a);
    Session s(a);
    prepare(s, a, dims);
    const std::string out = a.value("--output"), dtypes = a.value("--dtypes");
    tad_export_options o = TAD_EXPORT_OPTIONS_INIT;
    o.out_dir = out.c_str();
    o.dims_json = dims.list.empty() ? nullptr : dims.list.c_str();
    o.dtypes = dtypes.empty() ? nullptr : dtypes.c_str();
    const std::string report = s.export_kernels(o);
    if (a.has("--json")) {
        std::cout << report << '\n';
        return kExitOk;
    }
    JsonPtr r = parse_json(report);
    int cubins = 0, kernels = 0;
    const cJSON *k = nullptr;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(r.get(), "kernels")) {
        ++kernels;
        cubins += cJSON_GetObjectItemCaseSensitive(k, "cubins")->valueint;
    }
    std::cout << "exported " << cubins << " cubins of " << kernels << " kernels to "
              << cJSON_GetObjectItemCaseSensitive(r.get(), "manifest")->valuestring << '\n';
    return kExitOk;
}

}  // namespace tad_cli
