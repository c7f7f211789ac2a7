// The commands of the `tad` program (docs/cli.md). Each returns the exit code of a success;
// failures throw Failure or UsageError, which main turns into "tad: error: ..." and an exit code.
#pragma once

#include "args.h"

namespace tad_cli {

int cmd_generate(const Args &a);
int cmd_verify(const Args &a);
int cmd_bench(const Args &a);
int cmd_run(const Args &a);
int cmd_export(const Args &a);
int cmd_snapshots(const Args &a);
int cmd_rollback(const Args &a);
int cmd_retrieve(const Args &a);
int cmd_dataset(const Args &a);
int cmd_optimize(const Args &a);  // optimize.cpp

}  // namespace tad_cli
