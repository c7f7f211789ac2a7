#include <optional>

#include "driver/optimize_options.h"
#include "frontend/kernel_file.h"
#include "frontend/parser.h"
#include "retrieve/query.h"
#include "support/fs.h"
#include "support/json.h"

namespace tad::driver {

namespace {

constexpr int kCandidates = 64;

// A dataset entry's pair when both files can be read: its backward is the sidecar's hand-written
// one or the one `tad dataset build` verified (retrieve/query.cpp); none without one.
std::optional<RetrievedPair> pair_of(JsonRef hit) {
    JsonRef b = hit.at("backward");
    if (!b.bool_or("exists", false)) return std::nullopt;
    RetrievedPair p;
    p.path = hit.at("path").str();
    p.forward_source = fs::read_file(p.path, 1 << 20);
    p.backward_source = fs::read_file(b.at("path").str(), 1 << 20);
    p.similarity = hit.at("similarity").num();
    return p;
}

}  // namespace

PairProvider retrieved_pairs() {
    return [](const std::string &path, const std::string &source, int topk) {
        retrieve::Options o;
        // The nearest entries with a backward to show: the forward itself, when it is an entry, and
        // entries whose generated backward is not built are passed over.
        o.topk = kCandidates;
        const Json report = Json::parse(retrieve::retrieve(frontend::analyze(frontend::parse_source(path, source)), o),
                                        "retrieve report");
        std::vector<RetrievedPair> out;
        JsonRef hits = report.at("results");
        for (size_t i = 0; i < hits.size() && static_cast<int>(out.size()) < topk; ++i) {
            if (fs::absolute(hits[i].at("path").str()) == fs::absolute(path)) continue;
            if (std::optional<RetrievedPair> p = pair_of(hits[i])) out.push_back(std::move(*p));
        }
        return out;
    };
}

}  // namespace tad::driver
