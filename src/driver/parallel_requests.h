// The requests of one round, sent at once on their own threads; their replies handed to the
// session's thread in the order they arrive (the progress callback and the worker stay on it).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "llm/client.h"

namespace tad::driver {

class ParallelRequests {
public:
    // Starts `n` requests of `prompt`, each with the purpose "<purpose> <i>/<n>".
    ParallelRequests(llm::Client &client, const llm::Prompt &prompt, int n, const std::string &purpose,
                     llm::Clock::time_point deadline);
    // Cancels what is still out and waits for the threads.
    ~ParallelRequests();
    ParallelRequests(const ParallelRequests &) = delete;
    ParallelRequests &operator=(const ParallelRequests &) = delete;

    // The next exchange to end, with its 1-based index; none when all have been handed out. While
    // waiting, calls `waiting(pending)` every `every_s` seconds (it may throw to stop waiting).
    std::optional<std::pair<int, llm::Exchange>> next(const std::function<void(int)> &waiting, double every_s);
    // The requests still out end with TAD_ERR_CANCELLED.
    void cancel() { cancel_ = true; }

private:
    std::atomic<bool> cancel_{false};
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::pair<int, llm::Exchange>> done_;
    int pending_ = 0;
    std::vector<std::thread> threads_;
};

}  // namespace tad::driver
