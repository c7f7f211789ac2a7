// What the optimizer's tests share: a forward file in a scratch directory, a session on it through
// the C ABI (the worker on Debian's CPU torch), the scripted server's options, and readers of the
// run's report, snapshots and logs.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../common/fake_llm.h"
#include "support/fs.h"
#include "support/json.h"
#include "tad.h"

namespace tad::test {

inline const char kPython[] = "/usr/bin/python3";
inline const char kKey[] = "sk-test-optimize-0123456789abcdef";
inline const char kKeyEnv[] = "TAD_TEST_LLM_KEY";

inline bool torch_available() {
    static const bool ok = std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
    return ok;
}

#define REQUIRE_TORCH()                \
    if (!tad::test::torch_available()) \
    GTEST_SKIP() << "[SKIP] " << tad::test::kPython << " cannot import torch (apt-get install python3-torch)"

// A file of the source tree, e.g. "tests/optimize/data/square.py".
inline std::string source_file(const std::string &path) {
    return fs::read_file(std::string(TAD_SOURCE_DIR) + "/" + path);
}

// y = x * x over a 1-D tensor, SWEEP n=100: the CPU tier checks it in seconds.
inline std::string square_forward() { return source_file("tests/optimize/data/square.py"); }

// The lines of the compiler's backward kernel of square_forward() that the scripted replies change.
inline constexpr char kGradLine[] = "    dx = t2 + t2\n";
inline constexpr char kGradContext[] = "    t2 = dY * x\n    dx = t2 + t2\n    tl.store(DX + offs, dx, mask=t0)\n";

inline std::string replaced(std::string text, const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    if (at == std::string::npos) throw std::runtime_error("the module lacks '" + from + "'");
    return text.replace(at, from.size(), to);
}

inline std::string fenced(const std::string &lang, const std::string &code) {
    return "Here is the new version.\n\n```" + lang + "\n" + code + "```\n";
}

// A session of the C ABI on a forward file written to a scratch directory.
class OptimizeRun {
public:
    explicit OptimizeRun(const std::string &forward_text, const std::string &name = "square.py",
                         std::string python = kPython)
        : python_(std::move(python)) {
        forward_ = fs::join(dir_.path(), name);
        std::ofstream(forward_) << forward_text;
        work_ = fs::join(dir_.path(), "work");
        tad_session_options o = TAD_SESSION_OPTIONS_INIT;
        o.work_dir = work_.c_str();
        o.python = python_.c_str();
        o.progress = [](const char *stage, const char *message, double, void *self) {
            auto *run = static_cast<OptimizeRun *>(self);
            run->stages.push_back(std::string(stage) + ": " + message);
            return !run->cancel_when.empty() && run->stages.back() == run->cancel_when ? 1 : 0;
        };
        o.progress_payload = this;
        if (tad_session_new(&o, &s_) != TAD_OK) throw std::runtime_error(tad_error_last());
        if (tad_load_forward(s_, forward_.c_str(), nullptr) != TAD_OK) throw std::runtime_error(tad_error_last());
        setenv(kKeyEnv, kKey, 1);
        // Retrieval reads the run's own dataset (empty unless a test adds entries: add_entry).
        dataset_ = fs::join(dir_.path(), "dataset");
        fs::make_dirs(fs::join(dataset_, "meta"));
        setenv("TAD_DATASET", dataset_.c_str(), 1);
    }

    // A dataset entry NAME.py with `forward`, and where `backward` is given, a hand-written
    // backward its sidecar names.
    void add_entry(const std::string &name, const std::string &forward, const std::string &backward = "") {
        std::ofstream(fs::join(dataset_, name + ".py")) << forward;
        std::string meta = "{\"family\": \"elementwise\"";
        if (!backward.empty()) {
            std::ofstream(fs::join(dataset_, name + "_bwd.txt")) << backward;
            meta += ", \"backward\": \"" + name + "_bwd.txt\", \"backward_kind\": \"hand-written\"";
        }
        std::ofstream(fs::join(fs::join(dataset_, "meta"), name + ".json")) << meta << "}\n";
    }
    const std::string &dataset_dir() const { return dataset_; }
    ~OptimizeRun() { tad_session_free(s_); }
    OptimizeRun(const OptimizeRun &) = delete;
    OptimizeRun &operator=(const OptimizeRun &) = delete;

    // The compiler's module of the forward, from a session of its own (so this one's directory
    // stays as it was): what the scripted replies start from.
    std::string compiler_module() const {
        tad_session_options o = TAD_SESSION_OPTIONS_INIT;
        const std::string work = fs::join(dir_.path(), "scratch");
        o.work_dir = work.c_str();
        o.python = python_.c_str();
        tad_session *s = nullptr;
        char *id = nullptr, *source = nullptr;
        tad_session_new(&o, &s);
        if (tad_load_forward(s, forward_.c_str(), nullptr) != TAD_OK || tad_generate(s, nullptr, &id) != TAD_OK ||
            tad_candidate_source(s, id, &source) != TAD_OK)
            throw std::runtime_error(tad_error_last());
        std::string out = source;
        tad_string_free(id);
        tad_string_free(source);
        tad_session_free(s);
        return out;
    }

    // tad_generate with backend "llm" against `server`: one round of one candidate on the OpenAI
    // protocol unless `tweak` says otherwise. The best id through `id`.
    int optimize(const FakeLlm &server, const std::function<void(tad_generate_options &)> &tweak = {},
                 std::string *id = nullptr) {
        const std::string base = server.url("/v1"), anthropic_base = server.url();
        tad_generate_options g;
        tad_generate_options_init(&g, TAD_GENERATE_OPTIONS_VERSION);
        g.backend = "llm";
        g.model = "fake-model";
        g.base_url = base.c_str();
        g.api_key_env = kKeyEnv;
        g.max_iterations = 1;
        g.request_timeout_s = 20;
        if (tweak) tweak(g);
        if (g.provider && std::string(g.provider) == "anthropic") g.base_url = anthropic_base.c_str();
        char *out = nullptr;
        const int status = tad_generate(s_, &g, &out);
        if (out && id) *id = out;
        tad_string_free(out);
        return status;
    }

    Json report() const {
        char *out = nullptr;
        if (tad_optimize_report(s_, "json", &out) != TAD_OK) throw std::runtime_error(tad_error_last());
        Json j = Json::parse(out, "optimize report");
        tad_string_free(out);
        return j;
    }

    std::string markdown() const {
        char *out = nullptr;
        if (tad_optimize_report(s_, nullptr, &out) != TAD_OK) throw std::runtime_error(tad_error_last());
        std::string text = out;
        tad_string_free(out);
        return text;
    }

    // The snapshot list (docs/reports.md) as JSON.
    Json snapshots() const {
        char *out = nullptr;
        tad_snapshot_list(s_, &out);
        Json j = Json::parse(out, "snapshots");
        tad_string_free(out);
        return j;
    }

    JsonRef snapshot(const Json &list, const std::string &id) const {
        for (size_t i = 0; i < list.size(); ++i)
            if (list[i].at("id").str() == id) return list[i];
        return JsonRef();
    }

    // The work directory's current snapshot ("" for none).
    std::string current() const {
        const std::string path = fs::join(work_, "current");
        if (!fs::exists(path)) return "";
        std::string id = fs::read_file(path);
        return id.substr(0, id.find('\n'));
    }

    // Every file the session wrote, concatenated: for the test that the key is in none of them.
    std::string all_written() const {
        std::string out;
        std::function<void(const std::string &)> walk = [&](const std::string &d) {
            for (const std::string &n : fs::list_dir(d)) {
                const std::string p = fs::join(d, n);
                if (fs::is_directory(p))
                    walk(p);
                else
                    out += fs::read_file(p);
            }
        };
        walk(work_);
        return out;
    }

    tad_session *session() const { return s_; }
    const std::string &work_dir() const { return work_; }
    const std::string &forward_path() const { return forward_; }

    std::vector<std::string> stages;
    std::string cancel_when;  // "<stage>: <message>" of the progress line that cancels

private:
    std::string python_;
    fs::TempDir dir_{"tad-optimize-"};
    std::string forward_, work_, dataset_;
    tad_session *s_ = nullptr;
};

}  // namespace tad::test
