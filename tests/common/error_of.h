// The status and message of the tad::Error a callable throws; {TAD_OK, "no error"} if none.
#pragma once

#include <string>
#include <utility>

#include "support/error.h"

namespace tad::testing {

template <class Fn> std::pair<int, std::string> error_of(Fn fn) {
    try {
        fn();
    } catch (const tad::Error &e) {
        return {e.status(), e.what()};
    }
    return {TAD_OK, "no error"};
}

}  // namespace tad::testing
