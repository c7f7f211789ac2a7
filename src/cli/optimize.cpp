// `tad optimize FILE`: tad_generate with backend "llm" (docs/llm.md), then its report.
#include <climits>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "errors.h"
#include "handle.h"

namespace tad_cli {

namespace {

// The strings the options point into live as long as this object.
struct OptimizeRequest {
    explicit OptimizeRequest(const Args &a)
        : provider(a.value("--provider")),
          model(a.value("--model")),
          base_url(a.value("--base-url")),
          key_env(a.value("--api-key-env")),
          effort(a.value("--reasoning-effort")),
          dims(a.value("--dims")),
          loops(a.value("--loops")) {
        if (model.empty()) throw UsageError("optimize needs --model");
        opts.backend = "llm";
        opts.provider = c_str(provider);
        opts.model = model.c_str();
        opts.base_url = c_str(base_url);
        opts.api_key_env = c_str(key_env);
        opts.reasoning_effort = c_str(effort);
        opts.dims_json = c_str(dims);
        opts.loops = c_str(loops);
        opts.max_iterations = static_cast<int>(a.integer("--iterations", 0, 1, 1000));
        opts.parallel = static_cast<int>(a.integer("--parallel", 0, 1, 16));
        opts.temperature = a.real("--temperature", 0, 0, 2);
        opts.wall_clock_s = a.seconds("--budget-seconds", 0);
        opts.max_tokens = a.integer("--max-tokens", 0, 1, LLONG_MAX);
        opts.max_cost_usd = a.real("--max-cost", 0, 0, 1e9);
        opts.usd_per_mtok_input = a.real("--price-input", 0, 0, 1e9);
        opts.usd_per_mtok_output = a.real("--price-output", 0, 0, 1e9);
        opts.max_output_tokens = a.integer("--max-output-tokens", 0, 1, LLONG_MAX);
        opts.request_timeout_s = a.seconds("--request-timeout", 0);
        const long long retries = a.integer("--retries", 4, 0, 100);
        opts.max_retries = retries == 0 ? -1 : static_cast<int>(retries);
        const long long topk = a.integer("--topk", 4, 0, 100);
        opts.topk = topk == 0 ? -1 : static_cast<int>(topk);
    }

    static const char *c_str(const std::string &s) { return s.empty() ? nullptr : s.c_str(); }

    std::string provider, model, base_url, key_env, effort, dims, loops;
    tad_generate_options opts = TAD_GENERATE_OPTIONS_INIT;
};

}  // namespace

// The report goes to stdout (Markdown, or JSON with --json) and to --report FILE, also when the run
// failed after it started; then the best snapshot's id, or the error.
int cmd_optimize(const Args &a) {
    OptimizeRequest req(a);
    Session s(a);
    s.load(a.positional.at(0));
    std::string id;
    Failure failed{TAD_OK, ""};
    try {
        id = s.generate(req.opts);
    } catch (const Failure &f) {
        failed = f;
    }
    const std::string report = s.optimize_report(a.has("--json") ? "json" : "markdown");
    if (!report.empty()) std::cout << report << (a.has("--json") ? "\n" : "");
    if (a.has("--report") && !report.empty()) {
        std::ofstream out(a.value("--report"), std::ios::binary);
        out << s.optimize_report("markdown");
        if (!out.flush()) throw Failure{TAD_ERR_IO, "cannot write '" + a.value("--report") + "'"};
    }
    if (failed.status != TAD_OK) throw failed;
    if (!a.has("--json")) std::cout << "\nbest: " << id << '\n';
    return kExitOk;
}

}  // namespace tad_cli
