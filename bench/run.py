"""Run every bench/bench_*.py and print its measurements side by side (nox -s bench)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(names: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [m for m in modules if not names or any(n in m for n in names)]
    failed = 0
    started = time.monotonic()
    for name in chosen:
        print(f"== {name}", flush=True)
        began = time.monotonic()
        try:
            measures = importlib.import_module(name).run_bench()
        # A bench whose tool fails is a failed measurement with its reason, whatever raised it (a crosslane
        # error, a tool's exit status, a missing build, a SystemExit naming what is not staged); the others still run.
        except (Exception, SystemExit) as exc:
            what = f"exit {exc.returncode}: {' '.join(map(str, exc.cmd))[:300]}" \
                if isinstance(exc, subprocess.CalledProcessError) else f"{type(exc).__name__}: {exc}"
            print(f"   FAILED measurement ({name}): {what}", flush=True)
            failed += 1
            continue
        for measure in measures:
            print("   " + measure.line(), flush=True)
        print(f"   ({name}: {time.monotonic() - began:.0f} s)", flush=True)
    print(f"{len(chosen)} benches in {(time.monotonic() - started) / 60:.1f} min")
    if failed:
        print(f"{failed} of {len(chosen)} benches failed to measure (above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
