#include "retrieve/embed.h"

#include <algorithm>
#include <cmath>

namespace tad::retrieve {

namespace {

// One group's slice before scaling: its entries, and the norm they have.
struct Slice {
    std::vector<double> v;
    double norm = 0;
};

int count_slot(const std::string &name) {
    const auto &names = count_names();
    auto it = std::find(names.begin(), names.end(), name.substr(6));  // after "count:"
    return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

int slot(Group g, const std::string &name) {
    if (g == Group::Count) return count_slot(name);
    return static_cast<int>(fnv1a(name) % static_cast<uint64_t>(kGroupWidth[static_cast<int>(g)]));
}

Slice slice(const Features &f, Group g, const Idf &idf) {
    Slice s;
    s.v.assign(static_cast<size_t>(kGroupWidth[static_cast<int>(g)]), 0.0);
    for (const auto &[name, raw] : f.group(g)) {
        int i = slot(g, name);
        if (i >= 0) s.v[static_cast<size_t>(i)] += feature_weight(g, name, raw, idf);
    }
    for (double x : s.v) s.norm += x * x;
    s.norm = std::sqrt(s.norm);
    return s;
}

// sqrt(w_g / sum of the weights of the groups that have features), per group; 0 for an empty one.
std::array<double, kGroups> scales(const std::array<Slice, kGroups> &slices, const Weights &w) {
    double total = 0;
    for (int g = 0; g < kGroups; ++g)
        if (slices[g].norm > 0) total += w.w[g];
    std::array<double, kGroups> out{};
    for (int g = 0; g < kGroups; ++g)
        if (slices[g].norm > 0 && total > 0) out[g] = std::sqrt(w.w[g] / total) / slices[g].norm;
    return out;
}

std::array<Slice, kGroups> slices(const Features &f, const Idf &idf) {
    std::array<Slice, kGroups> s;
    for (int g = 0; g < kGroups; ++g) s[g] = slice(f, static_cast<Group>(g), idf);
    return s;
}

}  // namespace

void Idf::add(const Features &f) {
    ++docs;
    for (const auto &group : f.groups)
        for (const auto &[name, raw] : group)
            if (raw > 0) ++df[name];
}

double Idf::of(const std::string &token) const {
    auto it = df.find(token);
    const double d = it == df.end() ? 0.0 : static_cast<double>(it->second);
    return std::log((1.0 + static_cast<double>(docs)) / (1.0 + d)) + 1.0;
}

uint64_t fnv1a(const std::string &s) {
    uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

double feature_weight(Group g, const std::string &name, double raw, const Idf &idf) {
    if (raw <= 0) return 0;
    const double tf = g == Group::Count ? std::log1p(raw) : 1.0 + std::log(raw);
    return kIdfGroups[static_cast<int>(g)] ? tf * idf.of(name) : tf;
}

int group_offset(Group g) {
    int off = 0;
    for (int i = 0; i < static_cast<int>(g); ++i) off += kGroupWidth[i];
    return off;
}

std::vector<float> embed(const Features &f, const Idf &idf, const Weights &w) {
    const std::array<Slice, kGroups> s = slices(f, idf);
    const std::array<double, kGroups> k = scales(s, w);
    std::vector<float> out(static_cast<size_t>(kDim), 0.0f);
    for (int g = 0; g < kGroups; ++g) {
        const size_t off = static_cast<size_t>(group_offset(static_cast<Group>(g)));
        for (size_t i = 0; i < s[g].v.size(); ++i) out[off + i] = static_cast<float>(s[g].v[i] * k[g]);
    }
    return out;
}

Explanation explain(const Features &query, const Features &entry, const Idf &idf, const Weights &w, size_t most) {
    const std::array<Slice, kGroups> qs = slices(query, idf), es = slices(entry, idf);
    const std::array<double, kGroups> qk = scales(qs, w), ek = scales(es, w);
    Explanation out;
    for (int g = 0; g < kGroups; ++g) {
        double dot = 0;
        for (size_t i = 0; i < qs[g].v.size(); ++i) dot += qs[g].v[i] * es[g].v[i];
        out.cosine[g] = qs[g].norm > 0 && es[g].norm > 0 ? dot / (qs[g].norm * es[g].norm) : 0.0;
        const Group group = static_cast<Group>(g);
        for (const auto &[name, raw] : query.group(group)) {
            auto it = entry.group(group).find(name);
            if (it == entry.group(group).end()) continue;
            const double c =
                feature_weight(group, name, raw, idf) * qk[g] * feature_weight(group, name, it->second, idf) * ek[g];
            if (c > 0) out.matched.push_back({name, group, c});
        }
    }
    std::stable_sort(out.matched.begin(), out.matched.end(),
                     [](const Match &a, const Match &b) { return a.contribution > b.contribution; });
    if (out.matched.size() > most) out.matched.resize(most);
    return out;
}

}  // namespace tad::retrieve
