"""Summarises the sessions bench/run_all.sh wrote into OUT_DIR as markdown: verification per kernel
and dtype, timings per case, the kernels that failed, and how each backward writes its gradients.

Usage: python3 bench/report.py OUT_DIR [NAME...]
OUT_DIR holds per kernel NAME/ (the tad session, docs/store.md), NAME.log (tad's output) and
NAME.exit (its exit status); without NAMEs every session in OUT_DIR is reported.
"""
import json
import os
import re
import sys

NOT_SHAPE = ("dtype", "required", "device")  # dims members that are no shape parameters


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def load_json(path):
    """The JSON at path; None when it is missing or damaged (a damaged report reads as absent)."""
    text = read(path)
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


class Kernel:
    """What one run left behind: the current snapshot's reports and backward, tad's log and exit."""

    def __init__(self, out, name):
        self.name = name
        session = os.path.join(out, name)
        current = (read(os.path.join(session, "current")) or "").strip()
        snap = os.path.join(session, "snapshots", current)
        self.generated = bool(current) and os.path.isdir(snap)
        self.verify = (self.generated and load_json(os.path.join(snap, "verify.json"))) or {}
        self.bench = (self.generated and load_json(os.path.join(snap, "bench.json"))) or {}
        self.backward = (self.generated and read(os.path.join(snap, "backward.py"))) or ""
        self.log = read(os.path.join(out, name + ".log")) or ""
        code = (read(os.path.join(out, name + ".exit")) or "").strip()
        self.exit = int(code) if code.lstrip("-").isdigit() else None


def dims_label(dims):
    return " ".join(f"{k}={v}" for k, v in dims.items() if k not in NOT_SHAPE)


def sci(v):
    return "NaN" if v is None else f"{v:.2e}"


def ms(v):
    return "-" if v is None else f"{v:.4f}"


def first_line(text):
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def verification_rows(k):
    """One row per dtype: cases passed / ran (skipped ones apart), worst error per gradient."""
    by_dtype = {}
    for r in k.verify.get("results", []):
        label = r["dtype"] + (" (cpu)" if k.verify.get("mode") == "cpu" else "")
        d = by_dtype.setdefault(label, {"passed": 0, "ran": 0, "skipped": 0, "abs": {}, "rel": 0.0})
        if r.get("status") == "skipped":
            d["skipped"] += 1
            continue
        d["ran"] += 1
        d["passed"] += r.get("status") == "pass"
        for g in r.get("grads", []):
            # null is an error that is no number (NaN): it outranks every number.
            worst = d["abs"].get(g["name"], 0.0)
            d["abs"][g["name"]] = None if None in (worst, g.get("max_abs_err")) else max(
                worst, g["max_abs_err"])
            d["rel"] = None if None in (d["rel"], g.get("max_rel_err")) else max(
                d["rel"], g["max_rel_err"])
    rows = []
    for dtype, d in by_dtype.items():
        shapes = f"{d['passed']}/{d['ran']}" + (f" ({d['skipped']} skipped)" if d["skipped"] else "")
        errs = ", ".join(f"{name} {sci(v)}" for name, v in d["abs"].items()) or "-"
        rel = sci(d["rel"]) if d["abs"] else "-"  # no gradient measured: every case raised
        rows.append(f"| {k.name} | {dtype} | {shapes} | {errs} | {rel} |")
    return rows


def timing_rows(k):
    rows = []
    for b in k.bench.get("results", []):
        ratio = "-"
        if b.get("ref_bwd_ms") and b.get("bwd_ms"):
            ratio = f"{b['ref_bwd_ms'] / b['bwd_ms']:.2f}x"
        if b.get("status", "ok") != "ok":
            ratio = b["status"]
        gbps = "-" if b.get("bwd_gbps") is None else f"{b['bwd_gbps']:.0f}"
        rows.append(f"| {k.name} | {b['dtype']} | {dims_label(b['dims'])} | {ms(b.get('fwd_ms'))} | "
                    f"{ms(b.get('bwd_ms'))} | {ms(b.get('ref_bwd_ms'))} | {ratio} | {gbps} |")
    return rows


def failure(k):
    """Why the kernel failed, in one line; None when it did not."""
    for r in k.verify.get("results", []):
        if r.get("status") in ("fail", "error"):
            case = f"verify {dims_label(r['dims'])} {r['dtype']}"
            if r.get("message"):
                return f"{case}: {first_line(r['message'])}"
            bad = [f"{g['name']} {sci(g.get('max_rel_err'))}" for g in r.get("grads", [])
                   if not g.get("ok")]
            bad += [f"output {o['index']} {sci(o.get('max_rel_err'))}" for o in r.get("outputs", [])
                    if not o.get("ok")]
            tol = f" (rtol {r['rtol']:g})" if r.get("rtol") is not None else ""
            return f"{case}: max rel err {', '.join(bad) or '?'}{tol}"
    for line in k.log.splitlines():
        if line.startswith("tad: error: "):
            return line[len("tad: error: "):]
    for b in k.bench.get("results", []):
        if b.get("status") == "error":
            return f"bench {dims_label(b['dims'])} {b['dtype']}: {first_line(b.get('message'))}"
    if k.exit:
        return f"tad exited with {k.exit} (see {k.name}.log)"
    if k.exit is None and not k.generated:
        return f"no candidate and no exit status (see {k.name}.log)"
    return None


# generated backward.py documents each backward kernel's gradient writes in its docstring, e.g.
# """Reverse mode of _ln_fwd. dB: relaxed atomic adds. dX: plain stores (disjoint per program).""",
# and a taped loop by a sizing kernel, """Tape elements each program of _ln_fwd_bwd needs: ...""".
REVERSE_DOC = re.compile(r'"""Reverse mode of (\w+)(.*?)"""')
WRITE = re.compile(r"\bd(\w+): (plain stores|relaxed atomic adds)")
TAPE_DOC = re.compile(r'"""Tape elements each program of (\w+) needs')


def writes_row(k):
    kinds = {}  # forward kernel parameter -> write kinds over every specialization of the backward
    for _, doc in REVERSE_DOC.findall(k.backward):
        for param, how in WRITE.findall(doc):
            kinds.setdefault(param, set()).add("store" if how == "plain stores" else "atomic")
    if not kinds:
        return None
    stores = sorted(p for p, s in kinds.items() if s == {"store"})
    atomics = sorted(p for p, s in kinds.items() if s == {"atomic"})
    both = sorted(p for p, s in kinds.items() if len(s) > 1)
    tapes = sorted(set(TAPE_DOC.findall(k.backward)))
    return (f"| {k.name} | {', '.join(stores) or '-'} | {', '.join(atomics) or '-'} | "
            f"{', '.join(both) or '-'} | {', '.join(tapes) or 'no'} |")


def main(out, names):
    names = names or sorted(n for n in os.listdir(out) if os.path.isdir(os.path.join(out, n)))
    kernels = [Kernel(out, n) for n in names]
    devices = sorted({k.bench["device"] for k in kernels if k.bench.get("device")})
    print(f"Device: {', '.join(devices) or 'none (no bench ran)'}\n")

    print("## Verification\n")
    print("Per dtype over the SWEEP: cases passed / run, and the largest errors over them "
          "(relative: max|g - r| / max|r|). (cpu): the CPU interpreter in float64; without a GPU, "
          "`tad run` stops there.\n")
    print("| kernel | dtype | shapes passed/total | max abs err per gradient | max rel err |")
    print("|---|---|---|---|---|")
    for k in kernels:
        print("\n".join(verification_rows(k) or [f"| {k.name} | - | not verified | - | - |"]))

    print("\n## Timing\n")
    print("Medians in ms; ref/generated above 1: the generated backward is faster than PyTorch's "
          "eager backward of reference().\n")
    print("| kernel | dtype | dims | fwd ms | generated bwd ms | PyTorch reference bwd ms | "
          "ref/generated | bwd GB/s |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [row for k in kernels for row in timing_rows(k)]
    print("\n".join(rows) if rows else "| (no bench ran) | | | | | | | |")

    print("\n## Failures\n")
    failed = [(k.name, failure(k)) for k in kernels]
    failed = [f"- {name}: {why}" for name, why in failed if why]
    print("\n".join(failed) if failed else "none")

    print("\n## Gradient writes\n")
    print("From the kernel docstrings of each generated backward.py (the reports carry no write "
          "kinds): gradients of forward-kernel parameters written with plain stores, with relaxed "
          "atomic adds, or with both (in variants the launcher picks between at run time); tape: the "
          "backward kernels that keep loop state in a tape.\n")
    print("| kernel | plain stores | atomic adds | both | tape |")
    print("|---|---|---|---|---|")
    rows = [writes_row(k) or f"| {k.name} | no backward | | | |" for k in kernels]
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/out", sys.argv[2:])
