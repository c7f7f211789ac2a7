// Retrieval measured (docs/retrieval.md, "Measured"): family recall@1 and @4 by leave-one-out over a
// dataset, and the latency of one query against N synthetic entries. Not a test: it prints numbers.
//
//   build/tad_retrieve_bench [--dataset DIR] [--entries N] [--queries Q] [--kind flat|hnsw]
//                            [--weights IR,AST,IDENT,COUNT]
//
// Leave-one-out: for each entry with a family, the index is rebuilt without it (its IDF too), the
// entry is the query, and a hit counts when an entry of the same family is first (@1) or among the
// first four (@4). Synthetic entries are the dataset's features perturbed (features dropped at
// random, weights scaled, random identifier tokens added), so that their statistics stay those of
// real kernels; latency is timed per query for the embedding and for the FAISS search apart.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "retrieve/dataset.h"
#include "retrieve/index.h"
#include "retrieve/query.h"
#include "support/error.h"
#include "support/fs.h"

using namespace tad;
using namespace tad::retrieve;

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of this thread: what a query costs whatever else the machine runs (wall time is also
// printed; on a shared machine it includes waiting for a core).
double thread_cpu_micros() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double micros(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Args {
    std::string dataset = default_dataset_dir();
    long entries = 10000, queries = 1000;
    std::string kind = "auto";
    Weights weights;
};

Args parse(int argc, char **argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--dataset"))
            a.dataset = argv[i + 1];
        else if (!std::strcmp(argv[i], "--entries"))
            a.entries = std::atol(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--queries"))
            a.queries = std::atol(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--kind"))
            a.kind = argv[i + 1];
        else if (!std::strcmp(argv[i], "--weights"))
            std::sscanf(argv[i + 1], "%lf,%lf,%lf,%lf", &a.weights.w[0], &a.weights.w[1], &a.weights.w[2],
                        &a.weights.w[3]);
    }
    return a;
}

struct Percentiles {
    double p50, p90, p99, mean;
};

Percentiles percentiles(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    auto at = [&](double q) {
        return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
    };
    return {at(0.5), at(0.9), at(0.99), sum / static_cast<double>(v.size())};
}

void leave_one_out(const std::vector<IndexedEntry> &all, const Weights &w) {
    std::map<std::string, int> family_size;
    for (const auto &e : all) family_size[e.family] += 1;
    int n = 0, at1 = 0, at4 = 0, m = 0, m1 = 0, m4 = 0;
    std::printf("leave-one-out over %zu entries\n%-24s %-12s %-24s %s\n", all.size(), "entry", "family", "top 1",
                "same family in top 4");
    for (size_t i = 0; i < all.size(); ++i) {
        if (all[i].family.empty()) continue;
        std::vector<IndexedEntry> rest;
        for (size_t j = 0; j < all.size(); ++j)
            if (j != i) rest.push_back(all[j]);
        Index idx = Index::build(rest, VectorIndex::Kind::Flat, w);
        auto hits = idx.search(all[i].features, 4, [](size_t) { return false; });
        bool first = !hits.empty() && idx.entries()[hits[0].entry].family == all[i].family;
        int same = 0;
        for (const auto &h : hits) same += idx.entries()[h.entry].family == all[i].family ? 1 : 0;
        ++n;
        at1 += first;
        at4 += same > 0;
        if (family_size[all[i].family] > 1) {
            ++m;
            m1 += first;
            m4 += same > 0;
        }
        std::printf("%-24s %-12s %-24s %d\n", all[i].name.c_str(), all[i].family.c_str(),
                    hits.empty() ? "-" : idx.entries()[hits[0].entry].name.c_str(), same);
    }
    std::printf("recall@1 %d/%d = %.3f, recall@4 %d/%d = %.3f (all entries)\n", at1, n, 1.0 * at1 / n, at4, n,
                1.0 * at4 / n);
    std::printf("recall@1 %d/%d = %.3f, recall@4 %d/%d = %.3f (entries whose family has another member)\n", m1, m,
                1.0 * m1 / m, m4, m, 1.0 * m4 / m);
}

Features perturbed(const Features &base, std::mt19937 &rng) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Features f;
    for (int g = 0; g < kGroups; ++g)
        for (const auto &[name, raw] : base.groups[g])
            if (g == static_cast<int>(Group::Count) || u(rng) > 0.3) f.groups[g][name] = raw * (0.5 + 1.5 * u(rng));
    for (int t = 0; t < 5; ++t) f.group(Group::Ident)["id:syn" + std::to_string(rng() % 5000)] += 1;
    return f;
}

void latency(const std::vector<IndexedEntry> &all, const Args &a) {
    std::mt19937 rng(12345);
    std::vector<IndexedEntry> synthetic;
    for (long i = 0; i < a.entries; ++i) {
        const IndexedEntry &b = all[static_cast<size_t>(i) % all.size()];
        synthetic.push_back({b.name + "#" + std::to_string(i), b.path, b.family, perturbed(b.features, rng)});
    }
    Clock::time_point t0 = Clock::now();
    Index idx = a.kind == "auto"
                    ? Index::build(synthetic)
                    : Index::build(synthetic, a.kind == "hnsw" ? VectorIndex::Kind::Hnsw : VectorIndex::Kind::Flat);
    const double build_ms = micros(t0, Clock::now()) / 1000;
    // The exact answer for each query, to measure what HNSW misses.
    std::unique_ptr<Index> exact;
    if (idx.vectors().kind() == VectorIndex::Kind::Hnsw)
        exact = std::make_unique<Index>(Index::build(synthetic, VectorIndex::Kind::Flat));
    std::vector<double> embed_us, search_us, cpu_us;
    int agree = 0, found = 0, wanted = 0;
    for (long q = 0; q < a.queries; ++q) {
        const IndexedEntry &b = all[static_cast<size_t>(q) % all.size()];
        Features f = perturbed(b.features, rng);
        const double c0 = thread_cpu_micros();
        Clock::time_point t1 = Clock::now();
        std::vector<float> v = embed(f, idx.idf(), idx.weights());
        Clock::time_point t2 = Clock::now();
        auto hits = idx.search_vector(v, 4, 0, nullptr);
        Clock::time_point t3 = Clock::now();
        cpu_us.push_back(thread_cpu_micros() - c0);
        embed_us.push_back(micros(t1, t2));
        search_us.push_back(micros(t2, t3));
        agree += !hits.empty() && idx.entries()[hits[0].entry].family == b.family;
        if (!exact) continue;
        for (const auto &t : exact->search_vector(v, 4, 0, nullptr)) {
            ++wanted;
            for (const auto &h : hits) found += h.entry == t.entry;
        }
    }
    Percentiles e = percentiles(embed_us), s = percentiles(search_us), c = percentiles(cpu_us);
    std::printf("\n%ld synthetic entries, %s index (built in %.1f ms), %ld queries, top 4\n", a.entries,
                VectorIndex::kind_name(idx.vectors().kind()), build_ms, a.queries);
    std::printf("embed  us: p50 %.1f  p90 %.1f  p99 %.1f  mean %.1f\n", e.p50, e.p90, e.p99, e.mean);
    std::printf("search us: p50 %.1f  p90 %.1f  p99 %.1f  mean %.1f\n", s.p50, s.p90, s.p99, s.mean);
    std::printf("both, thread CPU us: p50 %.1f  p90 %.1f  p99 %.1f  mean %.1f\n", c.p50, c.p90, c.p99, c.mean);
    std::printf("top 1 of the query's family: %d/%ld\n", agree, a.queries);
    if (exact) std::printf("HNSW top 4 against the exact top 4: %d/%d = %.3f\n", found, wanted, 1.0 * found / wanted);
}

// Features of a real query file (parse, analyse, lower, walk), the part of a query before the index.
void feature_time(const std::string &path) {
    std::vector<double> us;
    for (int i = 0; i < 20; ++i) {
        Clock::time_point t0 = Clock::now();
        Features f = extract(frontend::analyze(frontend::parse_file(path)));
        us.push_back(micros(t0, Clock::now()));
    }
    Percentiles p = percentiles(us);
    std::printf("\nfeatures of %s: p50 %.0f us, mean %.0f us\n", path.c_str(), p.p50, p.mean);
}

}  // namespace

int main(int argc, char **argv) {
    try {
        Args a = parse(argc, argv);
        fs::TempDir cache("tad-retrieve-bench-");
        Index idx = Index::open(open_dataset(a.dataset), cache.path());
        for (const auto &s : idx.skipped()) std::printf("skipped %s: %s\n", s.path.c_str(), s.reason.c_str());
        leave_one_out(idx.entries(), a.weights);
        if (a.entries > 0) latency(idx.entries(), a);
        feature_time(fs::join(a.dataset, "../examples/layernorm.py"));
        return 0;
    } catch (const Error &e) {
        std::fprintf(stderr, "tad_retrieve_bench: %s\n", e.what());
        return 1;
    }
}
