#include "driver/trace_request.h"

namespace tad::driver {

Json trace_request(const std::string &file, const frontend::StubInfo &stub, JsonRef dims, bool with_data, bool meta) {
    Json args = Json::object();
    args.set("file", file);
    args.set("stub", stub.name);
    args.set_copy("dims", dims);
    args.set_bool("with_data", with_data);
    if (meta) args.set_bool("meta", true);
    JsonRef grad_inputs = args.set_array("grad_inputs");
    for (const std::string &g : stub.grad_inputs) grad_inputs.push(g);
    return args;
}

}  // namespace tad::driver
