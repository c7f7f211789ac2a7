"""Summarises the sessions written by bench/run_examples.sh: one row per kernel and dtype with the
shapes that passed verification, the largest error per gradient, and the median timings."""
import json
import os
import sys


def current_snapshot(session):
    """The session's current snapshot directory, or None when nothing was generated."""
    try:
        with open(os.path.join(session, "current")) as f:
            return os.path.join(session, "snapshots", f.read().strip())
    except FileNotFoundError:
        return None


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def dims_label(dims):
    return " ".join(f"{k}={v}" for k, v in dims.items() if k not in ("dtype", "required", "device"))


def main(out):
    rows, devices = [], set()
    for name in sorted(os.listdir(out)):
        session = os.path.join(out, name)
        if not os.path.isdir(session):
            continue
        snap = current_snapshot(session)
        if snap is None:
            rows.append(f"| {name} | - | no candidate (see {name}.log) | | | | | |")
            continue
        verify = load(os.path.join(snap, "verify.json")) or {}
        bench = load(os.path.join(snap, "bench.json")) or {}
        by_dtype = {}
        for r in verify.get("results", []):
            d = by_dtype.setdefault(r["dtype"], {"passed": 0, "total": 0, "errs": {}})
            d["total"] += 1
            d["passed"] += r["status"] == "pass"
            for g in r.get("grads", []):
                if g.get("max_abs_err") is not None:
                    d["errs"][g["name"]] = max(d["errs"].get(g["name"], 0.0), g["max_abs_err"])
        if bench.get("device"):
            devices.add(bench["device"])
        timings = {(dims_label(b["dims"]), b["dtype"]): b for b in bench.get("results", [])}
        for dtype, d in by_dtype.items():
            errs = ", ".join(f"{k} {v:.2e}" for k, v in d["errs"].items())
            rows.append(f"| {name} | {dtype} | {d['passed']}/{d['total']} | {errs} | | | | |")
            for (label, bdtype), b in timings.items():
                if bdtype != dtype:
                    continue
                fmt = lambda v: "-" if v is None else f"{v:.4f}"
                ratio = "-"
                if b.get("ref_bwd_ms") and b.get("bwd_ms"):
                    ratio = f"{b['ref_bwd_ms'] / b['bwd_ms']:.2f}x"
                gbps = "-" if b.get("bwd_gbps") is None else f"{b['bwd_gbps']:.0f}"
                rows.append(f"| | | {label} | | {fmt(b.get('fwd_ms'))} | {fmt(b.get('bwd_ms'))} | "
                            f"{fmt(b.get('ref_bwd_ms'))} | {ratio} / {gbps} GB/s |")
    print(f"Device: {', '.join(sorted(devices)) or 'none (no bench ran)'}\n")
    print("| kernel | dtype | shapes passed / total (or dims) | max abs err per gradient | fwd ms | "
          "generated bwd ms | PyTorch ref bwd ms | ref/generated, bwd GB/s |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/out")
