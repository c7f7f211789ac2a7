#include "interp/interp.h"
#include "support/error.h"

namespace tad::interp {

int Memory::add(Buffer b) {
    buffers.push_back(std::move(b));
    return static_cast<int>(buffers.size()) - 1;
}

Buffer &Memory::at(int id) {
    if (id < 0 || id >= static_cast<int>(buffers.size()))
        throw Error(TAD_ERR_INVALID_ARGUMENT, "interp: no buffer " + std::to_string(id) + " (memory holds " +
                                                  std::to_string(buffers.size()) + ")");
    return buffers[id];
}

}  // namespace tad::interp
