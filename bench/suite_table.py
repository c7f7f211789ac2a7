"""The bench suite's report from its JSON records, standard library only: a Markdown table and a
PNG of generated / hand-written backward time per case (bench/png_chart.py).

A record (one per case, one JSON line in results.jsonl, written by bench/suite.py):
    {"kernel", "dims", "dtype", "flops" (backward, or null), "bytes" (the copy's read + write),
     "variants": {NAME: {"ms", "check", "error"}}, "error" (only where the case failed as a whole)}
with NAME one of VARIANTS; "ms" is null where the variant was not timed (its error or failed
check says why).
"""
import json
import os

import png_chart

VARIANTS = ("generated", "hand-written", "eager", "compile", "copy")
COLUMNS = ("kernel", "dims", "dtype", "generated ms", "hand-written ms", "eager ms", "compile ms",
           "copy ms", "gen / hand", "gen / compile", "copy / gen", "TFLOP/s gen / hand", "notes")


def ms(record, name):
    return record["variants"].get(name, {}).get("ms")


def ratio(a, b):
    return a / b if a is not None and b else None


def case_label(record):
    dims = "x".join(str(v) for k, v in record["dims"].items() if k != "causal")
    causal = " causal" if record["dims"].get("causal") else ""
    return f"{record['kernel']} {dims}{causal} {record['dtype'].replace('float', 'fp')}"


def _num(value, digits=4):
    return "-" if value is None else f"{value:.{digits}f}"


def _x(value):
    return "-" if value is None else f"{value:.2f}x"


def _tflops(record, name):
    t = ms(record, name)
    if not record.get("flops") or not t:
        return None
    return record["flops"] / (t * 1e-3) / 1e12


def _notes(record):
    """The case's or its variants' errors and failed gradient checks, briefly."""
    notes = [f"case: {record['error']}"] if record.get("error") else []
    for name in VARIANTS:
        v = record["variants"].get(name)
        if v is None:
            continue
        if v.get("error"):
            notes.append(f"{name}: {v['error']}")
        elif v.get("check") not in (None, "ok"):
            notes.append(f"{name}: {v['check']}")
    return "; ".join(notes).replace("|", "/")


def row(record):
    gen, hand = ms(record, "generated"), ms(record, "hand-written")
    tf_gen, tf_hand = _tflops(record, "generated"), _tflops(record, "hand-written")
    tflops = "-"
    if tf_gen is not None or tf_hand is not None:
        tflops = f"{_num(tf_gen, 0)} / {_num(tf_hand, 0)}"
    dims = ", ".join(f"{k}={v}" for k, v in record["dims"].items())
    return [record["kernel"], dims, record["dtype"], _num(gen), _num(hand),
            _num(ms(record, "eager")), _num(ms(record, "compile")), _num(ms(record, "copy")),
            _x(ratio(gen, hand)), _x(ratio(gen, ms(record, "compile"))),
            _num(ratio(ms(record, "copy"), gen), 2), tflops, _notes(record)]


def markdown(records):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(r)) + " |" for r in records]
    return "\n".join(lines) + "\n"


def read_records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_report(records, out_dir):
    """Writes table.md and ratio.png under out_dir; returns the table."""
    table = markdown(records)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    labels = [case_label(r) for r in records]
    values = [ratio(ms(r, "generated"), ms(r, "hand-written")) for r in records]
    png_chart.bar_chart(os.path.join(out_dir, "ratio.png"), labels, values,
                        "generated / hand-written backward time (log scale; < 1: generated faster)")
    return table
