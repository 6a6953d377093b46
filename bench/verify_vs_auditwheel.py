"""Benchmark: crosslane's wheel gates vs `auditwheel show` on the same PyPI wheel, in one run; prints the ratio.

    python bench/verify_vs_auditwheel.py [--wheel PATH] [--repeat N]

Without --wheel it downloads onnxruntime-genai 0.18.0 (cp313, manylinux_2_28_aarch64; a 35 MB .so inside)
into build/bench/. auditwheel comes from the `bench` extra (pip install -e '.[bench]'). Each side is timed
best-of-N: `invoke verify` and `auditwheel show` as processes (same start-up costs), and the verify
function in-process. No assertion: the numbers are printed for a human (goal: verify ≥ 5x faster).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from crosslane import config, sysroot
from crosslane.archs import Arch
from crosslane.errors import CrosslaneError, MissingPrerequisite
from crosslane.log import Log
from crosslane.paths import build_root
from crosslane.runner import Runner
from crosslane.verify import target_python_version, verify

WHEEL = ("onnxruntime-genai==0.18.0", "manylinux_2_28_aarch64", "3.13")
ARCH = Arch.ARM64


def download(runner: Runner, folder: Path) -> Path:
    requirement, platform, python = WHEEL
    found = sorted(folder.glob("onnxruntime_genai-0.18.0-*.whl"))
    if not found:
        runner.run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--platform", platform,
                    "--python-version", python, "--no-deps", "-d", folder, requirement], timeout=900)
        found = sorted(folder.glob("onnxruntime_genai-0.18.0-*.whl"))
    if not found:
        raise MissingPrerequisite(f"pip did not produce the {requirement} wheel in {folder}")
    return found[0]


def best_of(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


@dataclass(frozen=True)
class Timings:
    wheel: Path
    sysroot: Path | None
    auditwheel_show: float
    verify_cli: float
    verify_in_process: float


def measure(wheel: Path | None = None, repeat: int = 3) -> Timings:
    """Best-of-*repeat* timings of both tools on one wheel, in this one run."""
    runner = Runner(Log())
    cfg = config.load()
    wheel = wheel or download(runner, build_root(cfg.root) / "bench")
    auditwheel = runner.which("auditwheel", fix="pip install -e '.[bench]'")
    invoke = runner.which("invoke", fix="pip install -e .")
    found = sysroot.find(cfg.sysroot, ARCH)
    sysroot_path = found.path if found else None
    python_version = target_python_version(sysroot_path, ARCH)
    in_process = best_of(repeat, lambda: verify(ARCH, [wheel], sysroot_path=sysroot_path,
                                                python_version=python_version))
    verify_cli = best_of(repeat, lambda: runner.run([invoke, "verify", "--arch", ARCH.value, "--path", wheel],
                                                    cwd=cfg.root, quiet=True, timeout=600))
    show = best_of(repeat, lambda: runner.run([auditwheel, "show", wheel], quiet=True, timeout=600))
    return Timings(wheel, sysroot_path, show, verify_cli, in_process)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="an aarch64 wheel (default: download onnxruntime-genai 0.18.0)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        t = measure(args.wheel, args.repeat)
    except CrosslaneError as exc:
        Log().error(exc.one_line())
        return exc.exit_code
    size = t.wheel.stat().st_size / 1e6
    print(f"wheel: {t.wheel.name} ({size:.1f} MB); best of {args.repeat}; "
          f"DT_NEEDED {'against ' + str(t.sysroot) if t.sysroot else 'skipped (no arm64 sysroot)'}")
    print(f"  auditwheel show (process)     {t.auditwheel_show:8.3f} s")
    print(f"  invoke verify   (process)     {t.verify_cli:8.3f} s   "
          f"ratio auditwheel/verify = {t.auditwheel_show / t.verify_cli:5.2f}x")
    print(f"  crosslane.verify (in-process) {t.verify_in_process:8.3f} s   "
          f"ratio auditwheel/verify = {t.auditwheel_show / t.verify_in_process:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
