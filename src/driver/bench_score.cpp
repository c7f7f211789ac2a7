#include "driver/bench_score.h"

#include <cmath>
#include <cstdio>

namespace tad::driver {

namespace {

std::string case_key(JsonRef r) { return r.at("dims").dump() + " " + r.str_or("dtype", ""); }

std::string ms(JsonRef r, const char *key) {
    JsonRef v = r.get(key);
    if (!v.is_number()) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v.num());
    return buf;
}

}  // namespace

std::map<std::string, double> case_times(JsonRef bench) {
    std::map<std::string, double> out;
    JsonRef results = bench.get("results");
    for (size_t i = 0; results.is_array() && i < results.size(); ++i) {
        JsonRef r = results[i];
        if (r.str_or("status", "") == "ok" && r.get("bwd_ms").is_number() && r.get("bwd_ms").num() > 0)
            out[case_key(r)] = r.get("bwd_ms").num();
    }
    return out;
}

std::optional<double> geomean(const std::map<std::string, double> &times) {
    if (times.empty()) return std::nullopt;
    double log_sum = 0;
    for (const auto &[k, t] : times) log_sum += std::log(t);
    return std::exp(log_sum / double(times.size()));
}

std::optional<double> speedup_over(const std::map<std::string, double> &best,
                                   const std::map<std::string, double> &candidate, std::string *why) {
    double log_sum = 0;
    for (const auto &[k, t] : best) {
        auto it = candidate.find(k);
        if (it == candidate.end()) {
            if (why) *why = "it did not run the case " + k;
            return std::nullopt;
        }
        log_sum += std::log(t / it->second);
    }
    if (best.empty()) {
        if (why) *why = "no case ran";
        return std::nullopt;
    }
    return std::exp(log_sum / double(best.size()));
}

std::string bench_table(JsonRef bench) {
    std::string out = "| dims | dtype | fwd ms | bwd ms | reference bwd ms | status |\n|---|---|---|---|---|---|\n";
    JsonRef results = bench.get("results");
    for (size_t i = 0; results.is_array() && i < results.size(); ++i) {
        JsonRef r = results[i];
        out += "| " + r.at("dims").dump() + " | " + r.str_or("dtype", "") + " | " + ms(r, "fwd_ms") + " | " +
               ms(r, "bwd_ms") + " | " + ms(r, "ref_bwd_ms") + " | " + r.str_or("status", "") + " |\n";
    }
    return out;
}

}  // namespace tad::driver
