#include "driver/parallel_requests.h"

#include <chrono>

namespace tad::driver {

ParallelRequests::ParallelRequests(llm::Client &client, const llm::Prompt &prompt, int n, const std::string &purpose,
                                   llm::Clock::time_point deadline) {
    pending_ = n;
    llm::CallLimits limits{deadline, &cancel_};
    for (int i = 1; i <= n; ++i) {
        std::string what = purpose + " " + std::to_string(i) + "/" + std::to_string(n);
        threads_.emplace_back([this, &client, prompt, what, limits, i] {
            llm::Exchange ex;
            try {
                ex = client.complete(prompt, what, limits);
            } catch (const std::exception &e) {  // the log's disk, out of memory: the reply is lost
                ex.status = TAD_ERR_IO;
                ex.error = e.what();
            }
            std::lock_guard<std::mutex> lock(mu_);
            done_.emplace_back(i, std::move(ex));
            cv_.notify_all();
        });
    }
}

ParallelRequests::~ParallelRequests() {
    cancel_ = true;
    for (std::thread &t : threads_) t.join();
}

std::optional<std::pair<int, llm::Exchange>> ParallelRequests::next(const std::function<void(int)> &waiting,
                                                                    double every_s) {
    std::unique_lock<std::mutex> lock(mu_);
    while (done_.empty() && pending_ > 0) {
        if (cv_.wait_for(lock, std::chrono::duration<double>(every_s)) == std::cv_status::timeout && done_.empty()) {
            const int pending = pending_;
            lock.unlock();
            waiting(pending);
            lock.lock();
        }
    }
    if (done_.empty()) return std::nullopt;
    std::pair<int, llm::Exchange> out = std::move(done_.front());
    done_.erase(done_.begin());
    --pending_;
    return out;
}

}  // namespace tad::driver
