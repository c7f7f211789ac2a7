// `tad retrieve FILE`: the dataset entries closest to a forward file (docs/cli.md).
#include <iostream>

#include "commands.h"
#include "errors.h"
#include "handle.h"
#include "json_util.h"
#include "retrieval.h"
#include "table.h"

namespace tad_cli {

RetrieveRequest::RetrieveRequest(const Args &a) : dataset(a.value("--dataset")), cache(a.value("--cache")) {
    for (char c : a.value("--exclude")) exclude += c == ',' ? '\n' : c;
    opts.topk = static_cast<int>(a.integer("--topk", 0, 1, 1000));
    opts.min_sim = a.real("--min-sim", 0.0, -1.0, 1.0);
    opts.exclude = exclude.empty() ? nullptr : exclude.c_str();
    opts.dataset_dir = dataset.empty() ? nullptr : dataset.c_str();
    opts.cache_dir = cache.empty() ? nullptr : cache.c_str();
}

namespace {

// "ir:mul>reduce_sum, id:rstd, count:reductions": the first three features that matched.
std::string matched(const cJSON *result) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(result, "why"), "matched");
    std::string out;
    int n = 0;
    const cJSON *m = nullptr;
    cJSON_ArrayForEach(m, list) {
        if (n++ == 3) break;
        out += (out.empty() ? "" : ", ") + text_of(m, "feature");
    }
    return out;
}

std::string backward_cell(const cJSON *result) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(result, "backward");
    const std::string kind = text_of(b, "kind", "-");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "exists")))
        return kind == "generated" ? "generated (not built)" : kind + " (missing)";
    return kind;
}

void print_results(const cJSON *r, std::ostream &out) {
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(r, "dataset");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(ds, "entries");
    out << "dataset: " << text_of(ds, "dir") << " ("
        << (cJSON_IsNumber(entries) ? std::to_string(static_cast<long long>(entries->valuedouble)) : "?")
        << " entries, " << text_of(ds, "index") << " index"
        << (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ds, "rebuilt")) ? ", rebuilt" : "") << ")\n";
    Table t({"rank", "similarity", "family", "entry", "backward", "matched"});
    const cJSON *res = nullptr;
    cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(r, "results")) {
        t.add({std::to_string(static_cast<long long>(number_of(res, "rank").value_or(0))),
               fmt_sim(number_of(res, "similarity").value_or(0)), text_of(res, "family", "-"), text_of(res, "name"),
               backward_cell(res), matched(res)});
    }
    if (t.empty())
        out << "no entry is similar enough\n";
    else
        t.print(out);
    const cJSON *note = nullptr;
    cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "query"),
                                                              "notes")) if (cJSON_IsString(note)) out
        << "note: " << note->valuestring << '\n';
}

}  // namespace

int cmd_retrieve(const Args &a) {
    RetrieveRequest req(a);
    Session s(a);
    s.load(a.positional.at(0));
    std::string report = s.retrieve(req.opts);
    if (a.has("--json")) {
        std::cout << report << '\n';
        return kExitOk;
    }
    JsonPtr r = parse_report(report);
    print_results(r.get(), std::cout);
    return kExitOk;
}

}  // namespace tad_cli
