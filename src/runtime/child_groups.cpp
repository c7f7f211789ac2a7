#include "runtime/child_groups.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace tad {

namespace {

// Each slot holds (owner pid << 32 | pgid), 0 when free. The owner tells a table inherited through
// fork() from our own: a forked child that exits must not kill its parent's workers.
const int kSlots = 256;
std::atomic<uint64_t> slots[kSlots];
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the table is read in signal handlers");

uint64_t entry(pid_t pgid) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(::getpid())) << 32) | static_cast<uint32_t>(pgid);
}

void kill_at_exit() { kill_all_groups(); }

}  // namespace

void register_group(pid_t pgid) noexcept {
    static const bool at_exit = std::atexit(kill_at_exit) == 0;
    (void)at_exit;
    uint64_t value = entry(pgid);
    for (std::atomic<uint64_t> &slot : slots) {
        uint64_t free = 0;
        if (slot.compare_exchange_strong(free, value)) return;
    }
}

void unregister_group(pid_t pgid) noexcept {
    uint64_t value = entry(pgid);
    for (std::atomic<uint64_t> &slot : slots) {
        uint64_t expected = value;
        if (slot.compare_exchange_strong(expected, 0)) return;
    }
}

void kill_all_groups() noexcept {
    auto self = static_cast<uint32_t>(::getpid());
    for (std::atomic<uint64_t> &slot : slots) {
        uint64_t value = slot.load();
        if (value != 0 && (value >> 32) == self) ::kill(-static_cast<pid_t>(value & 0xffffffffu), SIGKILL);
    }
}

}  // namespace tad
