// The scripted LLM server of the tests (fake_llm_server.py) as a C++ object: started on a free port
// of 127.0.0.1 with a script written here, stopped (SIGKILL, reaped) when the object dies.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/fs.h"
#include "support/json.h"

namespace tad::test {

class FakeLlm {
public:
    // `replies`: the script's "replies" list (fake_llm_server.py's docstring). Fails the test (an
    // exception) when the server does not come up within 20 seconds.
    explicit FakeLlm(const Json &replies) {
        const std::string script = fs::join(dir_.path(), "script.json"), port = fs::join(dir_.path(), "port");
        log_ = fs::join(dir_.path(), "requests.jsonl");
        Json doc = Json::object();
        doc.set_copy("replies", replies);
        std::ofstream(script) << doc.dump();
        const std::string server = std::string(TAD_SOURCE_DIR) + "/tests/common/fake_llm_server.py";
        pid_ = fork();
        if (pid_ == 0) {
            execlp("python3", "python3", server.c_str(), script.c_str(), port.c_str(), log_.c_str(), (char *)nullptr);
            _exit(127);
        }
        for (int i = 0; i < 400 && !fs::exists(port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!fs::exists(port)) throw std::runtime_error("the fake LLM server did not start");
        port_ = std::stoi(fs::read_file(port));
    }
    ~FakeLlm() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    FakeLlm(const FakeLlm &) = delete;
    FakeLlm &operator=(const FakeLlm &) = delete;

    // "http://127.0.0.1:<port>" + suffix ("/v1" for the OpenAI protocol's base URL).
    std::string url(const std::string &suffix = "") const {
        return "http://127.0.0.1:" + std::to_string(port_) + suffix;
    }
    // The requests the server received so far, as it logged them ({"path", "headers", "body"}).
    std::vector<Json> requests() const {
        std::vector<Json> out;
        if (!fs::exists(log_)) return out;
        std::istringstream in(fs::read_file(log_));
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) out.push_back(Json::parse(line, "request log"));
        return out;
    }
    // A scratch directory living as long as the server (for text_file replies).
    const std::string &dir() const { return dir_.path(); }

private:
    fs::TempDir dir_{"tad-fake-llm-"};
    std::string log_;
    pid_t pid_ = -1;
    int port_ = 0;
};

// One reply of the script: {"text": text} plus the members of `extra` (a JSON object's text).
inline Json reply(const std::string &text, const std::string &extra = "{}") {
    Json r = Json::parse(extra, "reply");
    r.set("text", text);
    return r;
}

// The script's replies; the temporaries passed live until the copy is made.
inline Json replies(std::initializer_list<JsonRef> list) {
    Json out = Json::array();
    for (JsonRef r : list) out.push_copy(r);
    return out;
}

}  // namespace tad::test
