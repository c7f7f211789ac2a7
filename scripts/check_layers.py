#!/usr/bin/env python3
"""Checks the module graph of src/: every `#include "<module>/..."` goes down a floor (docs/ARCHITECTURE.md)
and is a dependency CMakeLists.txt declares (directly or through the modules it links).

    scripts/check_layers.py [REPO]     exit 0 when the graph holds, 1 with one line per violation
"""

import os
import re
import sys

# Floor of each module: a module may include only modules on lower floors (and itself).
FLOORS = {
    "support": 0,
    "ir": 1, "runtime": 1, "store": 1, "llm": 1,
    "passes": 2, "frontend": 2, "interp": 2,
    "ad": 3, "retrieve": 3,
    "plan": 4,
    "emit": 5, "schedule": 5, "aot": 5,
    "verify": 6, "flow": 6,
    "driver": 7,
    "capi": 8,
    "cli": 9,
}
# Modules CMake does not declare with tad_module(): the C ABI objects and the CLI (which links the
# shared library and reaches the core only through tad.h).
LINKS = {"capi": {"driver"}, "cli": set()}


def declared(repo):
    """module -> the modules its tad_module() line links."""
    text = open(os.path.join(repo, "CMakeLists.txt")).read()
    deps = dict(LINKS)
    for name, rest in re.findall(r"^tad_module\((\w+)([^)]*)\)", text, re.M):
        deps[name] = {d[len("tad_"):] for d in rest.split() if d.startswith("tad_")}
    return deps


def closure(deps, module, seen=None):
    seen = set() if seen is None else seen
    for d in deps.get(module, ()):
        if d not in seen:
            seen.add(d)
            closure(deps, d, seen)
    return seen


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(repo, "src")
    deps = declared(repo)
    problems = []
    modules = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for m, ds in sorted(deps.items()):
        for d in sorted(ds):
            if m in FLOORS and d in FLOORS and FLOORS[d] >= FLOORS[m]:
                problems.append(f"CMakeLists.txt: tad_{m} (floor {FLOORS[m]}) links tad_{d} (floor {FLOORS[d]}): "
                                "an arrow that does not go down")
    for m in modules:
        if m not in FLOORS:
            problems.append(f"src/{m}: not on any floor (add it to FLOORS in scripts/check_layers.py and the docs)")
            continue
        reach = closure(deps, m)
        for root, _, files in os.walk(os.path.join(src, m)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp", ".def")):
                    continue
                path = os.path.join(root, f)
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    inc = re.match(r'\s*#\s*include\s+"(\w+)/', line)
                    if not inc or inc.group(1) == m:
                        continue
                    to = inc.group(1)
                    where = f"{os.path.relpath(path, repo)}:{n}"
                    if to not in FLOORS:
                        problems.append(f"{where}: includes unknown module '{to}'")
                    elif FLOORS[to] >= FLOORS[m]:
                        problems.append(f"{where}: '{m}' (floor {FLOORS[m]}) includes '{to}' (floor {FLOORS[to]}): "
                                        "an arrow that does not go down")
                    elif to not in reach:
                        problems.append(f"{where}: '{m}' includes '{to}', which its CMake module does not link")
    for p in problems:
        print(p)
    if not problems:
        print(f"check_layers: {len(modules)} modules, every include goes down a floor")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
