// The NaN of a masked-off Load lane without `other`, with the load's source location in its
// payload (interp.h). x86 arithmetic and libm pass a NaN operand's payload on, so a lane that
// reaches an output usually still says which load it came from; a diagnostic, never a result.
#include <cstdint>
#include <cstring>

#include "interp/interp.h"

namespace tad::interp {

namespace {

constexpr uint64_t kQuietNaN = 0x7ff8000000000000ULL;
constexpr uint64_t kTag = 0x5bULL << 44;  // bits 44..50: marks tad's payload
constexpr uint64_t kTagMask = 0x7fULL << 44;

}  // namespace

double undefined_lane(const ir::SrcLoc &loc) {
    const uint64_t line = static_cast<uint64_t>(loc.line) & 0xfffffffULL;  // 28 bits
    const uint64_t col = static_cast<uint64_t>(loc.col) & 0xffffULL;
    const uint64_t bits = kQuietNaN | kTag | (line << 16) | col;
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

bool undefined_origin(double x, ir::SrcLoc *loc) {
    if (x == x) return false;
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & kTagMask) != kTag) return false;
    loc->line = static_cast<int>((bits >> 16) & 0xfffffffULL);
    loc->col = static_cast<int>(bits & 0xffffULL);
    return loc->line > 0;
}

}  // namespace tad::interp
