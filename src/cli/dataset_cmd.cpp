// `tad dataset list | build | check | import DIR` (docs/cli.md, docs/retrieval.md). The dataset's
// layout comes from tad_dataset_list; the CLI drives the per-entry sessions and writes the records.
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <vector>

#include "commands.h"
#include "errors.h"
#include "handle.h"
#include "json_util.h"
#include "retrieval.h"
#include "summary.h"
#include "table.h"

namespace tad_cli {

namespace {

const cJSON *member(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

std::string join_path(const std::string &a, const std::string &b) { return a + "/" + b; }

void write_file(const std::string &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw Failure{TAD_ERR_IO, "cannot write '" + path + "'"};
}

// mkdir -p
void make_dir(const std::string &path) {
    for (size_t i = 1; i <= path.size(); ++i)
        if (i == path.size() || path[i] == '/')
            if (::mkdir(path.substr(0, i).c_str(), 0777) != 0 && errno != EEXIST)
                throw Failure{TAD_ERR_IO, "cannot create '" + path.substr(0, i) + "': " + std::strerror(errno)};
}

void set_member(cJSON *object, const char *key, cJSON *item) {
    if (cJSON_HasObjectItem(object, key))
        cJSON_ReplaceItemInObjectCaseSensitive(object, key, item);
    else
        cJSON_AddItemToObject(object, key, item);
}

// JSON with two-space indentation (.editorconfig), for files kept in the repository.
void pretty(const cJSON *j, int depth, std::string &out) {
    const bool object = cJSON_IsObject(j);
    if (!object && !cJSON_IsArray(j)) {
        out += compact(j);
        return;
    }
    if (!j->child) {
        out += object ? "{}" : "[]";
        return;
    }
    out += object ? "{\n" : "[\n";
    for (const cJSON *c = j->child; c; c = c->next) {
        out += std::string(static_cast<size_t>(depth + 1) * 2, ' ');
        if (object) out += compact(JsonPtr(cJSON_CreateString(c->string)).get()) + ": ";
        pretty(c, depth + 1, out);
        out += c->next ? ",\n" : "\n";
    }
    out += std::string(static_cast<size_t>(depth) * 2, ' ') + (object ? "}" : "]");
}

struct Listing {
    JsonPtr json;
    std::string cache_dir;
    std::set<std::string> only;

    explicit Listing(const Args &a, const RetrieveRequest &req) : json(parse_report(dataset_list(req.opts))) {
        cache_dir = text_of(member(json.get(), "dataset"), "cache_dir");
        std::string list = a.value("--only") + ",";
        for (size_t start = 0, comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
            if (comma > start) only.insert(list.substr(start, comma - start));
    }
    template <typename F> void each(F &&f) const {
        const cJSON *e = nullptr;
        cJSON_ArrayForEach(e, member(json.get(), "entries")) {
            if (only.empty() || only.count(text_of(e, "name"))) f(e);
        }
    }
};

int list_entries(const Args &a, const Listing &l) {
    if (a.has("--json")) {
        std::cout << compact(l.json.get()) << '\n';
        return kExitOk;
    }
    Table t({"entry", "family", "backward", "lowered", "description"});
    l.each([&](const cJSON *e) {
        const cJSON *b = member(e, "backward");
        const cJSON *f = member(e, "features");
        std::string kind = text_of(b, "kind") + (cJSON_IsTrue(member(b, "exists")) ? "" : " (not built)");
        std::string lowered = cJSON_IsObject(f) ? std::to_string(cJSON_GetArraySize(member(f, "lowered"))) : "skipped";
        t.add({text_of(e, "name"), text_of(e, "family", "-"), kind, lowered, text_of(e, "description", "")});
    });
    t.print(std::cout);
    return kExitOk;
}

tad_verify_options verify_options(const Args &a, bool cpu, const std::string &dtypes) {
    tad_verify_options o = TAD_VERIFY_OPTIONS_INIT;
    o.cpu = cpu ? 1 : 0;
    o.dtypes = dtypes.empty() ? nullptr : dtypes.c_str();
    o.max_elements = a.integer("--max-elements", 0, 1, LLONG_MAX);
    return o;
}

// Generates the entry's backward and checks it on the CPU; writes backward/<name>.py when it passed
// and backward/<name>.json either way. False when it did not pass.
bool build_one(const Args &a, const Listing &l, const cJSON *e) {
    const std::string name = text_of(e, "name"), dir = join_path(l.cache_dir, "backward");
    make_dir(dir);
    cJSON *record = cJSON_CreateObject();
    JsonPtr owned(record);
    cJSON_AddStringToObject(record, "forward_hash", text_of(e, "source_hash").c_str());
    cJSON_AddStringToObject(record, "tad_version", tad_version());
    bool passed = false;
    try {
        Session s(a, join_path(join_path(l.cache_dir, "sessions"), name));
        s.load(text_of(e, "path"));
        std::string id = s.generate("", "", a.value("--loops"));
        Verified v = s.verify(verify_options(a, true, ""));
        passed = v.status == TAD_OK;
        cJSON_AddStringToObject(record, "snapshot", id.c_str());
        cJSON_AddItemToObject(record, "verify", parse_report(v.report).release());
        if (passed) write_file(join_path(dir, name + ".py"), s.source(id));
        std::cout << name << ": " << verify_line(v.report) << '\n';
        for (const std::string &line : failed_cases(v.report)) std::cout << line << '\n';
    } catch (const Failure &f) {
        cJSON_AddStringToObject(record, "error", f.message.c_str());
        std::cout << name << ": [FAIL] " << f.message << '\n';
    }
    cJSON_AddBoolToObject(record, "passed", passed);
    write_file(join_path(dir, name + ".json"), compact(record) + "\n");
    return passed;
}

int build_entries(const Args &a, const Listing &l) {
    int built = 0, failed = 0, ready = 0;
    l.each([&](const cJSON *e) {
        const cJSON *b = member(e, "backward");
        const std::string kind = text_of(b, "kind"), name = text_of(e, "name");
        if (kind != "generated") {
            std::cout << name << ": " << kind << " backward " << text_of(b, "path") << '\n';
            ++ready;
        } else if (cJSON_IsTrue(member(b, "exists"))) {
            std::cout << name << ": up to date\n";
            ++ready;
        } else {
            (build_one(a, l, e) ? built : failed) += 1;
        }
    });
    std::cout << "built " << built << ", ready " << ready << ", failed " << failed << " (backwards in " << l.cache_dir
              << "/backward)\n";
    return failed ? kExitMismatch : kExitOk;
}

std::string today() {
    char buf[16];
    std::time_t t = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

// Writes the GPU results into the entry's sidecar: "gpu" from the verify report, "timings" from
// the bench report when there is one.
void record_meta(const cJSON *e, const std::string &verify, const std::string &bench) {
    const std::string path = join_path(join_path(text_of(e, "path").substr(0, text_of(e, "path").rfind('/')), "meta"),
                                       text_of(e, "name") + ".json");
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    JsonPtr meta = parse_json(text);
    if (!cJSON_IsObject(meta.get())) meta.reset(cJSON_CreateObject());
    JsonPtr v = parse_report(verify);
    cJSON *gpu = cJSON_CreateObject();
    cJSON_AddStringToObject(gpu, "date", today().c_str());
    cJSON_AddStringToObject(gpu, "tad_version", tad_version());
    cJSON_AddStringToObject(gpu, "device", text_of(v.get(), "device").c_str());
    cJSON_AddItemToObject(gpu, "passed", cJSON_Duplicate(member(v.get(), "passed"), 1));
    cJSON_AddItemToObject(gpu, "summary", cJSON_Duplicate(member(v.get(), "summary"), 1));
    set_member(meta.get(), "gpu", gpu);
    if (!bench.empty()) set_member(meta.get(), "timings", parse_report(bench).release());
    std::string out;
    pretty(meta.get(), 0, out);
    write_file(path, out + "\n");
}

int check_entries(const Args &a, const Listing &l) {
    int passed = 0, failed = 0;
    const std::string dtypes = a.value("--dtypes");
    bool no_gpu = false;
    l.each([&](const cJSON *e) {
        if (no_gpu) return;
        const std::string name = text_of(e, "name");
        try {
            Session s(a, join_path(join_path(l.cache_dir, "sessions"), name + "-gpu"));
            s.load(text_of(e, "path"));
            s.generate("", "", a.value("--loops"));
            tad_verify_options vo = verify_options(a, false, dtypes);
            const std::string dims = a.value("--dims");  // the SWEEP's required entries, say
            vo.dims_json = dims.empty() ? nullptr : dims.c_str();
            Verified v = s.verify(vo);
            tad_bench_options bo = TAD_BENCH_OPTIONS_INIT;
            bo.dtypes = dtypes.empty() ? nullptr : dtypes.c_str();
            std::string bench = v.status == TAD_OK && a.has("--bench") ? s.bench(bo) : "";
            std::cout << name << ": " << verify_line(v.report) << (bench.empty() ? "" : "; " + bench_line(bench))
                      << '\n';
            for (const std::string &line : failed_cases(v.report)) std::cout << line << '\n';
            make_dir(join_path(l.cache_dir, "check"));
            write_file(join_path(join_path(l.cache_dir, "check"), name + ".json"),
                       "{\"verify\": " + v.report + ", \"bench\": " + (bench.empty() ? "null" : bench) + "}\n");
            if (a.has("--record")) record_meta(e, v.report, bench);
            (v.status == TAD_OK ? passed : failed) += 1;
        } catch (const Failure &f) {
            if (f.status == TAD_ERR_NO_GPU) {
                std::cout << "[SKIP] no GPU: " << f.message << '\n';
                no_gpu = true;
                return;
            }
            std::cout << name << ": [FAIL] " << f.message << '\n';
            ++failed;
        }
    });
    if (no_gpu) return kExitNoGpu;
    std::cout << "passed " << passed << ", failed " << failed << '\n';
    return failed ? kExitMismatch : kExitOk;
}

int import_entries(const Args &a, const RetrieveRequest &req) {
    if (a.positional.size() < 2) throw UsageError("'dataset import' needs DIR");
    std::string report = dataset_import(a.positional[1], req.dataset);
    if (a.has("--json")) {
        std::cout << report << '\n';
    } else {
        JsonPtr r = parse_report(report);
        const cJSON *x = nullptr;
        cJSON_ArrayForEach(x, member(r.get(), "imported")) {
            std::cout << "imported " << text_of(x, "source") << " -> " << text_of(x, "entry") << " (stub "
                      << text_of(x, "stub") << ")\n";
            const cJSON *n = nullptr;
            cJSON_ArrayForEach(n, member(x, "notes")) std::cout << "  note: " << n->valuestring << '\n';
        }
        cJSON_ArrayForEach(x, member(r.get(), "skipped")) std::cout << "skipped: " << text_of(x, "reason") << '\n';
    }
    JsonPtr r = parse_report(report);
    return cJSON_GetArraySize(member(r.get(), "skipped")) ? kExitInput : kExitOk;
}

}  // namespace

int cmd_dataset(const Args &a) {
    const std::string sub = a.positional.at(0);
    RetrieveRequest req(a);
    if (sub == "import") return import_entries(a, req);
    if (sub != "list" && sub != "build" && sub != "check")
        throw UsageError("unknown dataset command '" + sub + "' (list, build, check, import DIR)");
    if (a.positional.size() > 1) throw UsageError("unexpected argument '" + a.positional[1] + "'");
    Listing l(a, req);
    if (sub == "list") return list_entries(a, l);
    if (sub == "build") return build_entries(a, l);
    return check_entries(a, l);
}

}  // namespace tad_cli
