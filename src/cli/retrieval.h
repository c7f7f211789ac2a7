// The retrieval options of a command line (--topk, --min-sim, --exclude, --dataset, --cache) as a
// tad_retrieve_options whose strings live as long as this object.
#pragma once

#include <string>

#include "args.h"
#include "tad.h"

namespace tad_cli {

struct RetrieveRequest {
    explicit RetrieveRequest(const Args &a);
    RetrieveRequest(const RetrieveRequest &) = delete;
    RetrieveRequest &operator=(const RetrieveRequest &) = delete;

    std::string exclude, dataset, cache;
    tad_retrieve_options opts = TAD_RETRIEVE_OPTIONS_INIT;
};

}  // namespace tad_cli
