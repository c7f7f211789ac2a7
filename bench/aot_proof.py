"""The Python side of the AOT proof (bench/aot_gpu.sh, docs/aot.md): for LayerNorm or softmax at
some dims and dtypes, writes the inputs the C and Rust programs (examples/aot) hand to
tad_launch_backward and the gradients they must reproduce, and times the Python launcher.

    python3 bench/aot_proof.py BUILD SESSION FORWARD CASES DIMS_JSON DTYPES
    python3 bench/aot_proof.py report OUT      the Markdown table of bench/aot_gpu.sh's results

BUILD: the build directory (its python/ holds the worker scripts); SESSION: the work directory
`tad export` used (its current snapshot's backward.py is the module); FORWARD: examples/layernorm.py
or examples/softmax.py; CASES: where each case gets a directory; DIMS_JSON: a list of dims; DTYPES:
comma-separated. Per case it writes meta.txt (the launch: sizes, constexprs, num_warps, eps), the
forward launch's tensors (*.bin, raw bytes as the GPU holds them), the incoming gradient dy.bin,
and two references per gradient:
  <g>.mod    the generated module's gradient, as torch.autograd computes it;
  <g>.ref    the same module with its partial-row sums (_row_sums) taken in row order, as the
             executor's tad_row_sum takes them: torch's sum uses its own order, so a gradient
             summed over re-gridded programs can differ from .mod in the last bits, never from .ref.
and prints one JSON line per case: the Python launcher's time per backward call.
"""

import json
import os
import sys

import torch


def load(build, session, forward):
    sys.path.insert(0, os.path.join(build, "python"))
    import tad_userfile

    tad_userfile.install_tad_shim()
    current = open(os.path.join(session, "current")).read().strip()
    generated = tad_userfile.load_module(os.path.join(session, "snapshots", current, "backward.py"))
    return tad_userfile, tad_userfile.load_module(forward), generated


def in_order_row_sums(*partials):
    """_row_sums with each partial's rows added in order, accumulated in float32 (float64 for
    float64) and rounded once to the rows' dtype: what tad_row_sum computes."""
    out = []
    for p in partials:
        acc = torch.zeros(p.shape[1:], dtype=torch.float64 if p.dtype == torch.float64 else torch.float32,
                          device=p.device)
        for r in range(p.shape[0]):
            acc += p[r].to(acc.dtype)
        out.append(acc.to(p.dtype))
    return out


def module_grads(generated, args, kwargs, names, dy):
    leaves = [args[i].detach().clone().requires_grad_() for i in range(len(names))]
    out = generated.forward(*leaves, *args[len(names):], **kwargs)
    grads = torch.autograd.grad(out, leaves, dy, retain_graph=True)
    return out, leaves, grads


def write(path, t):
    """The tensor's bytes in row-major order (ctypes: no numpy needed)."""
    import ctypes

    host = t.detach().contiguous().cpu()
    with open(path, "wb") as f:
        f.write(ctypes.string_at(host.data_ptr(), host.numel() * host.element_size()))


def forward_launch(fwd, example, args, kwargs):
    """The stub's one launch, made here as the stub makes it, with the tensors it writes: what a
    framework that ran the forward kernel itself hands to tad_launch_backward."""
    x = args[0]
    M, N = x.shape
    block = 1 << (N - 1).bit_length()
    if example == "layernorm":
        w, b = args[1], args[2]
        eps = kwargs.get("eps", 1e-5)
        y = torch.empty_like(x)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        warps = min(max(block // 256, 1), 8)
        fwd._layernorm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, eps, BLOCK_SIZE=block, num_warps=warps)
        return y, {"x": x, "w": w, "b": b, "y": y, "mean": mean, "rstd": rstd}, \
            {"M": M, "N": N, "eps": repr(eps), "block": block, "num_warps": warps}
    y = torch.empty_like(x)
    warps = 4 if block <= 2048 else 8
    fwd._softmax_fwd[(M,)](x, y, x.stride(0), y.stride(0), N, BLOCK_SIZE=block, num_warps=warps)
    return y, {"x": x, "y": y}, {"M": M, "N": N, "block": block, "num_warps": warps}


def case(userfile, fwd, generated, example, dims, dtype, root):
    name = f"{example}-" + "-".join(f"{k}{v}" for k, v in dims.items()) + f"-{dtype}"
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    args, kwargs = userfile.make_args(fwd, {**dims, "dtype": dtype, "device": "cuda"})
    args = list(args)
    names = ["x", "w", "b"] if example == "layernorm" else ["x"]
    y, tensors, meta = forward_launch(fwd, example, args, kwargs)
    dy = torch.randn_like(y)
    out, leaves, grads = module_grads(generated, args, kwargs, names, dy)
    if not torch.equal(out, y):
        raise RuntimeError(f"{name}: the module's forward differs from the stub's launch")
    saved = generated._row_sums
    generated._row_sums = in_order_row_sums
    try:
        _, _, ordered = module_grads(generated, args, kwargs, names, dy)
    finally:
        generated._row_sums = saved
    for k, t in tensors.items():
        write(os.path.join(d, f"{k}.bin"), t)
    write(os.path.join(d, "dy.bin"), dy)
    for n, g, r in zip(names, grads, ordered):
        write(os.path.join(d, f"d{n}.mod"), g)
        write(os.path.join(d, f"d{n}.ref"), r)
    with open(os.path.join(d, "meta.txt"), "w") as f:
        f.write(f"example {example}\ndtype {dtype}\n")
        for k, v in meta.items():
            f.write(f"{k} {v}\n")
    from host_overhead import per_call_us  # bench/: the host's time per call, the GPU drained at the end

    out = generated.forward(*leaves, *args[len(names):], **kwargs)
    us = per_call_us(lambda: torch.autograd.grad(out, leaves, dy, retain_graph=True), calls=1000, runs=5)
    return {"case": name, "example": example, "dtype": dtype, "dims": dims,
            "python_backward_us": us, "differs_in_order": [not torch.equal(g, r) for g, r in zip(grads, ordered)]}


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def report(out):
    """One row per case: bitwise agreement of each program with the in-order references, the largest
    difference from the module's own gradients, and the time per backward call."""
    python = {r["case"]: r for ex in ("layernorm", "softmax") for r in read_jsonl(os.path.join(out, ex, "python.jsonl"))}
    programs = {p: {r["case"]: r for r in read_jsonl(os.path.join(out, f"{p}.jsonl"))} for p in ("c", "rust")}
    lines = ["# Exported backwards from C and Rust (bench/aot_gpu.sh)", "",
             "mismatches: gradient elements whose bytes differ from the generated module's with its partial rows "
             "summed in row order (.ref); vs module: the largest difference from the module as torch runs it "
             "(torch's sum takes its own order); times per backward call, the stream drained once after 1000 "
             "calls (enqueue: the host's time to enqueue one).", "",
             "| case | C mismatches | Rust mismatches | max abs vs module | C us/call | C enqueue us | "
             "Rust us/call | Python us/call | rows summed differ in torch's order |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in sorted(python):
        c, r, p = programs["c"].get(name), programs["rust"].get(name), python[name]
        cell = lambda x, k, f="{}": "-" if x is None else f.format(x[k])  # noqa: E731
        lines.append(f"| {name} | {cell(c, 'mismatches')} | {cell(r, 'mismatches')} | "
                     f"{cell(c, 'max_abs_vs_module', '{:.3g}')} | {cell(c, 'per_call_us', '{:.1f}')} | "
                     f"{cell(c, 'enqueue_us', '{:.1f}')} | {cell(r, 'per_call_us', '{:.1f}')} | "
                     f"{p['python_backward_us']:.1f} | {p['differs_in_order']} |")
    if not programs["rust"]:
        lines += ["", "The Rust program gave no results (no binary: bench/aot_carry.sh builds it where cargo is; or it "
                      "failed: rust.log)."]
    print("\n".join(lines))


def main():
    if sys.argv[1] == "report":
        return report(sys.argv[2])
    build, session, forward, root, dims_json, dtypes = sys.argv[1:7]
    userfile, fwd, generated = load(build, session, forward)
    example = os.path.splitext(os.path.basename(forward))[0]
    for dims in json.loads(dims_json):
        for dtype in dtypes.split(","):
            print(json.dumps(case(userfile, fwd, generated, example, dims, dtype, root)), flush=True)


if __name__ == "__main__":
    main()
