"""How fast crosslane starts: `invoke --list` against `python3 -c pass`, and a no-op `invoke build --arch riscv64`
on the built tree against `ninja -n` on that tree (the least any up-to-date check can cost)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from common import BIN, ROOT, Measure, median_of, run_all

ROUNDS = 7
# As in a user's shell: bytecode caching on. (CI runners and some sandboxes export PYTHONDONTWRITEBYTECODE=1,
# which makes every start compile crosslane's modules again and measures that instead.)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: list[str | Path]) -> None:
    subprocess.run([str(a) for a in argv], check=True, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def built_trees(build: Path) -> list[Path]:
    return sorted(p.parent for p in build.glob("riscv64/*/build/build.ninja"))


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
    ninja_n = median_of(ROUNDS, lambda: run_all([[ninja, "-n", "-C", t] for t in trees]))
    noop = median_of(ROUNDS, lambda: run([BIN / "invoke", "build", "--arch", "riscv64"]))
    measures.append(Measure(f"no-op `invoke build --arch riscv64` vs `ninja -n` on its {len(trees)} built trees",
                            noop, ninja_n, "s", "<= 0.3 s"))
    return measures
