// The module of a stub whose torch code autograd differentiates (docs/stub-autograd.md): each launch
// is its own autograd node, whose backward is the backward of a one-launch stub.
#include <algorithm>
#include <set>
#include <sstream>

#include "emit/module_internal.h"
#include "emit/templates.h"
#include "support/error.h"
#include "support/py_literal.h"

namespace tad::emit {

namespace {

using detail::join;
using detail::py_tuple;

bool uses_tf32(const plan::Plan &p) {
    for (const plan::Kernel &k : p.kernels)
        for (const ir::Op &op : k.fn.ops)
            if (k.role == plan::Kernel::Backward && op.kind == ir::OpKind::Dot &&
                k.fn.type(op.operands[0]).elem == ir::DType::F32 && (op.name.empty() || op.name == "tf32"))
                return true;
    return false;
}

// `_Node(...)` of one launch; prints its backward kernels and launcher to `os`.
std::string node_entry(std::ostream &os, const LaunchNode &n) {
    const frontend::StubInfo &stub = n.file.stub;
    const std::string kernel = py_literal(n.kernel, PyQuotes::Double);
    if (!n.backward)
        return "_Node(" + kernel + ", None, " + py_tuple(stub.params, true) + ", " + py_tuple(n.written, true) +
               ", (), (), ())";
    os << detail::backward_kernels(n.file, *n.backward);
    const detail::Launcher l = detail::emit_launcher(n.file, *n.backward);
    // Its temporaries are the buffers of the residuals its kernel saves (driver/residuals.h), which
    // _RecordedNode keeps with the launch.
    if (!l.outputs.empty())
        fail(TAD_ERR_INTERNAL,
             "emit: the backward of " + stub.name + " reads an output, which a one-launch stub has not");
    os << l.source << "\n\n";
    std::vector<std::string> saved, snapshots;
    for (const std::string &p : stub.params)
        if (l.inputs.count(p) && std::find(n.written.begin(), n.written.end(), p) == n.written.end())
            saved.push_back(p);  // of what it writes, the backward reads the layout and the snapshots
    for (const plan::Snapshot &s : n.backward->snapshots)
        if (std::find(snapshots.begin(), snapshots.end(), s.param) == snapshots.end()) snapshots.push_back(s.param);
    return "_Node(" + kernel + ", " + l.name + ", " + py_tuple(stub.params, true) + ", " + py_tuple(n.written, true) +
           ", " + py_tuple(stub.grad_inputs, true) + ", " + py_tuple(saved, true) + ", " + py_tuple(snapshots, true) +
           ")";
}

void entry_point(std::ostream &os, const frontend::KernelFile &kf, const NodeModule &m, bool tf32) {
    const frontend::StubInfo &stub = kf.stub;
    os << "\n\nGRAD_INPUTS = " << py_tuple(stub.grad_inputs, true) << "\n";
    os << "NUM_OUTPUTS = " << m.num_outputs << "\n";
    os << "# Whether the kernels multiply float32 tiles at TF32 precision (10-bit mantissa, as float16).\n";
    os << "TF32 = " << (tf32 ? "True" : "False") << "\n";
    os << "# Stub inputs the forward updates in place and returns (autograd wants them to be non-leaf).\n";
    os << "DIRTY = " << (m.dirty.empty() ? "()" : py_tuple(m.dirty, true)) << "\n";
    os << "_ARGUMENTS = _Arguments(inspect.signature(" << detail::stub_callable(stub) << "))\n\n\n";
    os << "def forward(*args, **kwargs):\n";
    os << "    \"\"\"`" << stub.name
       << "` with a backward: same arguments and results, differentiable in GRAD_INPUTS. The stub runs\n"
          "    under autograd, each launch its own node (_NODES), so that autograd differentiates its torch "
          "code.\"\"\"\n";
    os << "    with _capturing_nodes(_NODES):\n";
    os << "        return " << detail::stub_callable(stub) << "(*_ARGUMENTS(args, kwargs))\n";
}

}  // namespace

std::string emit_node_module(const frontend::KernelFile &kf, const NodeModule &m, const std::string &jvp_unsupported) {
    std::ostringstream os;
    plan::Plan named;  // names the launched kernels in the header
    for (const LaunchNode &n : m.nodes)
        if (std::find(named.launched.begin(), named.launched.end(), n.kernel) == named.launched.end())
            named.launched.push_back(n.kernel);
    os << detail::module_head(kf, named);
    os << "\n" << template_text("module_runtime.py") << "\n\n" << template_text("launch_nodes.py") << "\n\n";
    std::set<std::string> recorded;  // a kernel launched twice in the stub's source is wrapped once
    for (const std::string &k : kf.stub.launched)
        if (recorded.insert(k).second) os << k << " = _RecordedNode(" << k << ")\n";
    os << "\n\n# ---- backward: each launch its own autograd node, its backward that of the launch alone ----\n";
    std::vector<std::string> entries;
    bool tf32 = false;
    for (const LaunchNode &n : m.nodes) {
        entries.push_back(node_entry(os, n));
        tf32 = tf32 || (n.backward && uses_tf32(*n.backward));
    }
    os << "\n\n# Per kernel and views a launch gets: its node (_Node).\n_NODES = (\n";
    for (const std::string &e : entries) os << "    " << e << ",\n";
    os << ")\n";
    entry_point(os, kf, m, tf32);
    os << detail::emit_jvp_section(kf, nullptr, jvp_unsupported);
    os << "\n\ndef jvp(*args, tangents=None, **kwargs):\n";
    os << "    \"\"\"Forward mode is not generated for this stub: raises NotImplementedError(JVP_UNSUPPORTED).\"\"\"\n";
    os << "    raise NotImplementedError(JVP_UNSUPPORTED)\n";
    return os.str();
}

}  // namespace tad::emit
