"""Run every bench/bench_*.py and print its measurements side by side (nox -s bench)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(names: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [m for m in modules if not names or any(n in m for n in names)]
    for name in chosen:
        print(f"== {name}", flush=True)
        for measure in importlib.import_module(name).run_bench():
            print("   " + measure.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
