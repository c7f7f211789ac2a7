// `tad`: the command-line program. It links the shared library through tad.h only, like any other
// binding, so it doubles as a check that the C ABI is enough to drive the whole pipeline.
#include <signal.h>

#include <cstring>
#include <iostream>
#include <new>

#include "args.h"
#include "commands.h"
#include "errors.h"
#include "tad.h"
#include "terminal.h"

namespace {

const char kUsage[] = R"(usage: tad [options] COMMAND [ARGS]

Commands:
  generate FILE [-o OUT] [--dims JSON] [--launch TRACE] [--explain]
                      generate a backward; prints the snapshot id (-o OUT also writes the
                      generated Python to OUT, -o - prints it instead of the id); --explain
                      also prints how each gradient is written (to stderr with -o -)
  verify FILE [--cpu] [--dims JSON] [--dtypes a,b] [--seed N] [--max-elements N] [--json]
                      generate, then check the gradients (GPU; --cpu: CPU interpreter)
  bench FILE [--dims JSON] [--dtypes a,b] [--reps N] [--json]
                      generate, verify on the GPU, then time forward and backward
  run FILE [--cpu-only] [--dims JSON] [--dtypes a,b] [--reps N] [--seed N] [--max-elements N]
                      generate, verify on the CPU, then on the GPU and bench when one is present
  optimize FILE --model M [--provider openai|anthropic] [--base-url URL] [--api-key-env VAR]
           [--iterations N] [--parallel N] [--temperature T] [--reasoning-effort low|medium|high]
           [--budget-seconds S] [--max-tokens N] [--max-cost USD --price-input USD --price-output USD]
           [--max-output-tokens N] [--request-timeout S] [--retries N] [--topk N] [--dims JSON]
           [--report FILE] [--json]
                      the compiler's backward, then rounds of a model's candidates, each verified
                      and timed; prints the report of every candidate and the best snapshot's id
                      (docs/llm.md; the key is read from $OPENAI_API_KEY / $ANTHROPIC_API_KEY)
  export FILE -o DIR [--dims JSON] [--dtypes a,b] [--json]
                      generate, then compile the backward on the GPU into DIR (cubins and
                      manifest.json) for tad_kernels_load / tad_launch_backward (docs/aot.md)
  snapshots [--json]  list the session's snapshots
  rollback ID         make snapshot ID the current candidate again
  retrieve FILE [--topk N] [--min-sim X] [--exclude A,B] [--dataset DIR] [--cache DIR] [--json]
                      the dataset entries (forward/backward pairs) closest to FILE
  dataset list|build|check [--dataset DIR] [--cache DIR] [--only A,B] [--json]
                      list the dataset; build (generate and check on the CPU) the backwards of
                      entries without a hand-written one; check: verify every entry on the GPU
                      (--record writes the results into meta/, --bench also times them)
  dataset import DIR [--dataset DIR]
                      convert sectioned fwd/bwd files of DIR into dataset entries
  help, --version

Options of every command:
  --work-dir DIR      session directory (default .tad)
  --python PATH       interpreter of the worker (default $TAD_PYTHON, else python3)
  --device N          CUDA device (default 0)
  --timeout S         limit for one worker request in seconds (default 600)
  --worker-memory MB  limit of the worker's host memory (default: none)
  -q, --quiet         no progress lines on stderr

--dims takes a JSON object ('{"M": 4, "N": 64}') or a list of them; without it the file's SWEEP
is used. --launch TRACE (generate, verify, bench, run) generates from a trace record file instead
of tracing the stub.

Exit codes: 0 ok, 1 verification mismatch, 2 usage, 3 input, 4 worker or GPU failure, 5 no GPU,
70 internal error (docs/cli.md).
)";

int dispatch(const tad_cli::Args &a) {
    using namespace tad_cli;
    if (a.command == "help") {
        std::cout << kUsage;
        return kExitOk;
    }
    if (a.command == "version") {
        std::cout << "tad " << tad_version() << '\n';
        return kExitOk;
    }
    if (a.command == "generate") return cmd_generate(a);
    if (a.command == "verify") return cmd_verify(a);
    if (a.command == "bench") return cmd_bench(a);
    if (a.command == "run") return cmd_run(a);
    if (a.command == "export") return cmd_export(a);
    if (a.command == "snapshots") return cmd_snapshots(a);
    if (a.command == "retrieve") return cmd_retrieve(a);
    if (a.command == "dataset") return cmd_dataset(a);
    if (a.command == "optimize") return cmd_optimize(a);
    return cmd_rollback(a);  // parse_args accepts no other command
}

int fail(const std::string &message, int code) {
    std::cout.flush();  // the table of what ran comes before the error
    std::cerr << "tad: error: " << tad_cli::printable(message, 8000, tad_cli::Lines::Many) << '\n';
    return code;
}

// Ctrl-C, kill and a closed terminal reach only us (the worker runs in its own process group):
// take the worker and what it started along, then die of the signal as we would have.
void die_with_workers(int sig) {
    tad_kill_workers();
    ::raise(sig);  // the handler was reset to the default on entry (SA_RESETHAND)
}

void handle_fatal_signals() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = die_with_workers;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old;
        // A signal ignored by whoever started us (nohup, a shell's background job) stays ignored.
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::sigaction(sig, &sa, nullptr);
    }
}

}  // namespace

int main(int argc, char **argv) {
    using namespace tad_cli;
    handle_fatal_signals();
    try {
        return dispatch(parse_args(argc, argv));
    } catch (const UsageError &e) {
        return fail(std::string(e.what()) + " (see 'tad help')", kExitUsage);
    } catch (const Failure &f) {
        return fail(f.message, exit_code(f.status));
    } catch (const std::bad_alloc &) {
        return fail("out of memory", kExitInternal);
    } catch (const std::exception &e) {
        return fail(e.what(), kExitInternal);
    }
}
