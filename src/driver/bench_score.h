// How the optimizer compares two bench reports (docs/reports.md) of one forward: per case (dims
// and dtype) the backward's median time, compared on the cases both ran.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "support/json.h"

namespace tad::driver {

// "<dims as JSON> <dtype>" -> bwd_ms, for the results with status "ok" and a bwd_ms.
std::map<std::string, double> case_times(JsonRef bench);

// The geometric mean of the times; none for no times.
std::optional<double> geomean(const std::map<std::string, double> &times);

// The geometric mean over the cases `best` ran of best time / candidate time (> 1: the candidate is
// faster). None, with `why`, when the candidate did not run one of those cases ("it did not run
// the case <case>") or neither ran any ("no case ran").
std::optional<double> speedup_over(const std::map<std::string, double> &best,
                                   const std::map<std::string, double> &candidate, std::string *why);

// The bench results as a Markdown table (dims, dtype, fwd ms, bwd ms, reference bwd ms, status),
// for the prompt.
std::string bench_table(JsonRef bench);

}  // namespace tad::driver
