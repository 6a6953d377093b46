"""How fast crosslane starts: `invoke --list` against `python3 -c pass`, and a no-op `invoke build --arch riscv64`
on the built tree against `ninja -n` on that tree (the least any up-to-date check can cost)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import BIN, ROOT, Measure, median_of, run_all, timed

ROUNDS = 7
# As in a user's shell: bytecode caching on. (CI runners and some sandboxes export PYTHONDONTWRITEBYTECODE=1,
# which makes every start compile crosslane's modules again and measures that instead.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str | Path]) -> None:
    subprocess.run([str(a) for a in argv], check=True, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def built_trees(build: Path) -> list[Path]:
    """Every ninja tree a riscv64 no-op checks: each component's, and each wheel build's (one per CPython)."""
    return sorted(p.parent for pattern in ("riscv64/*/build/build.ninja", "riscv64/*/wheels/*/build/build.ninja")
                  for p in build.glob(pattern))


def profile_lines(argv: list[str | Path], top: int = 12) -> list[str]:
    """The no-op's own profile: crosslane's functions by cumulative time (where a no-op's time goes)."""
    import pstats
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".prof") as out:
        run([sys.executable, "-m", "cProfile", "-o", out.name, *argv])
        stats = pstats.Stats(out.name)
    rows = sorted(((v[3], k) for k, v in stats.stats.items()  # type: ignore[attr-defined]
                   if "/crosslane/" in k[0] and "importlib" not in k[0]), reverse=True)[:top]
    return [f"     {cumulative:7.3f}s  {Path(file).name}:{line}({name})" for cumulative, (file, line, name) in rows]


def run_bench() -> list[Measure]:
    python = median_of(ROUNDS, lambda: run([sys.executable, "-c", "pass"]))
    listing = median_of(ROUNDS, lambda: run([BIN / "invoke", "--list"]))
    measures = [Measure("`invoke --list` vs `python3 -c pass`", listing, python, "s", "<= 0.2 s")]
    trees = built_trees(ROOT / "build")
    if not trees:
        print("   (no built riscv64 tree under build/: run nox -s build-riscv64 first for the no-op figure)")
        return measures
    from crosslane import config
    from crosslane.host import buildtools

    ninja = buildtools.tools_dir(config.load(ROOT / "versions.toml").tools) / "bin" / "ninja"
    if not ninja.is_file():
        print("   (no pinned ninja in the cache: invoke setup first)")
        return measures
    build: list[str | Path] = [BIN / "invoke", "build", "--arch", "riscv64"]
    run(build)  # settles anything the last change left to do; the rounds below are no-ops
    # Side by side: each round times ninja -n on every tree, then the no-op (a slower spell of the machine falls
    # on both, not on whichever ran in it); the medians are compared.
    ninja_times, noop_times = [], []
    for _ in range(ROUNDS * 2 + 1):
        ninja_times.append(timed(lambda: run_all([[ninja, "-n", "-C", t] for t in trees])))
        noop_times.append(timed(lambda: run(build)))
    ninja_n, noop = statistics.median(ninja_times), statistics.median(noop_times)
    measures.append(Measure(f"no-op `invoke build --arch riscv64` vs `ninja -n` on its {len(trees)} built trees",
                            noop, ninja_n, "s", "the no-op <= 0.5 s"))
    # What a Python task runner cannot go below: its interpreter and invoke starting (invoke --list).
    measures.append(Measure("no-op's work beyond invoke's start-up (no-op - `invoke --list`) vs `ninja -n`",
                            max(noop - listing, 0.0), ninja_n, "s", "(the part crosslane controls)"))
    print("   no-op profile (crosslane functions, cumulative):")
    for line in profile_lines(build):
        print(line)
    return measures
