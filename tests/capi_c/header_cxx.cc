// tad.h compiled as C++ with -pedantic -Werror (a .cc, so the tests' *.cpp glob leaves it alone):
// the INIT macros must be valid aggregate initialisers there too, and the options structs must
// stay plain C data.
#include "tad.h"

#include <cstring>
#include <type_traits>

static_assert(std::is_standard_layout<tad_session_options>::value, "C layout");
static_assert(std::is_trivially_copyable<tad_verify_options>::value, "C layout");
static_assert(std::is_trivially_copyable<tad_retrieve_options>::value, "C layout");

int main() {
    tad_session_options s = TAD_SESSION_OPTIONS_INIT;
    tad_generate_options g = TAD_GENERATE_OPTIONS_INIT;
    tad_verify_options v = TAD_VERIFY_OPTIONS_INIT;
    tad_bench_options b = TAD_BENCH_OPTIONS_INIT;
    tad_retrieve_options r = TAD_RETRIEVE_OPTIONS_INIT;
    bool ok = s.version == TAD_SESSION_OPTIONS_VERSION && g.version == TAD_GENERATE_OPTIONS_VERSION &&
              v.version == TAD_VERIFY_OPTIONS_VERSION && b.version == TAD_BENCH_OPTIONS_VERSION &&
              r.version == TAD_RETRIEVE_OPTIONS_VERSION && std::strcmp(tad_status_name(TAD_OK), "TAD_OK") == 0;
    return ok ? 0 : 1;
}
