"""How long `import unison` takes, against `import torch` alone and another checkout of unison.

Each measurement is a fresh interpreter (`python -c "import X"`), timed from outside; the rows
are interleaved so that machine noise hits every row alike. Prints a Markdown table of medians.
Both source trees are byte-compiled first, as `pip install` does: with PYTHONDONTWRITEBYTECODE
set and no `__pycache__`, every import would compile the sources again and the table would
measure the compiler (0.4 s for unison), not the import.

    python benchmarks/import_time.py --repeats 15 --before /tmp/unison-before/src
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parents[1]


def once(code: str, src: str | None) -> float:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--before", help="src/ folder of another checkout to compare with")
    args = parser.parse_args()
    rows = {"import torch": ("import torch", None), "import unison (this tree)": ("import unison", str(HERE / "src"))}
    if args.before:
        rows["import unison (--before)"] = ("import unison", args.before)
    for _name, (_code, src) in rows.items():
        if src:
            subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL)
    grpc_loaded = {}
    for name, (_code, src) in rows.items():
        if src:
            check = "import unison, sys; print('grpc' in sys.modules)"
            env = dict(os.environ, PYTHONPATH=src)
            grpc_loaded[name] = subprocess.run(
                [sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name, (code, src) in rows.items():
            times[name].append(once(code, src))
    torch_median = statistics.median(times["import torch"])
    print(f"`python benchmarks/import_time.py {' '.join(sys.argv[1:])}`, {args.repeats} interleaved repeats\n")
    print("| what | median s | min-max s | minus `import torch` | grpc loaded |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, values in times.items():
        median = statistics.median(values)
        extra = "" if name == "import torch" else f"{median - torch_median:+.3f}"
        print(
            f"| {name} | {median:.3f} | {min(values):.3f}-{max(values):.3f} | {extra} | {grpc_loaded.get(name, '')} |"
        )


if __name__ == "__main__":
    main()
