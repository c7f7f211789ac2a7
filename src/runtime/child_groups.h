// The process groups of the children this process started and has not reaped yet, kept where a
// signal handler can reach them: a host killed by SIGINT/SIGTERM/SIGHUP kills its workers first.
#pragma once

#include <sys/types.h>

namespace tad {

// Remembers `pgid` (a child that leads its own group). A full table (256 live children) only
// loses the signal-handler and exit() paths for that child; its Process still kills it.
void register_group(pid_t pgid) noexcept;
// Forgets `pgid`; called before the child is reaped, while its group id cannot be reused.
void unregister_group(pid_t pgid) noexcept;
// SIGKILL to every group this process registered (a forked copy of the table in a child process
// is ignored). Async-signal-safe. Also runs at exit(), for hosts that exit without destructors.
void kill_all_groups() noexcept;

}  // namespace tad
