"""`invoke verify` vs `auditwheel show` on the PyPI onnxruntime-genai 0.18.0 aarch64 wheel (a 35 MB .so inside).

auditwheel is a dependency (the manylinux repair). Both run as the processes a user starts, alternately, best of 5,
with bytecode caching as a user has it (PYTHONDONTWRITEBYTECODE unset; one warm-up run each first); crosslane's
verify in-process beside them. Goal: the `invoke verify` process within 1.0x `auditwheel show`, RECORD
verified and every other gate run too.

The floor line says whether crosslane's own code can meet that goal at all: a process that only imports invoke
(the entry point every task has) plus the in-process verify (no tasks.py, no config load, no crosslane import
cost), against the same `auditwheel show`. Above 1.0, no start-up work inside crosslane closes the gap: what
remains is invoke's import and the work both tools do (the one zlib inflate of every member).

The decoupled line is a real process doing what `invoke verify` would do if the CLI loaded each task's modules on
demand: import invoke and only verify's own module graph, load versions.toml, find the sysroot, verify. No CLI
split can start less than that, so above 1.0 it shows the goal is out of reach for any such split.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import Measure, best_of, timed

from crosslane import config
from crosslane.archs import Arch
from crosslane.errors import MissingPrerequisite
from crosslane.files.paths import build_root
from crosslane.gates.verify import target_python_version, verify
from crosslane.guest import sysroot
from crosslane.log import Log
from crosslane.process.runner import Runner

# What `invoke verify --arch arm64 --path W` runs, with nothing else of crosslane imported (argv[1]: the wheel).
DECOUPLED = """\
import sys
from pathlib import Path

import invoke.main  # noqa: F401  (every task's entry point)

from crosslane import config
from crosslane.archs import Arch
from crosslane.gates.verify import target_python_version, verify
from crosslane.guest import sysroot

found = sysroot.find(config.load().sysroot, Arch.ARM64)
path = found.path if found else None
rows = verify(Arch.ARM64, [Path(sys.argv[1])], sysroot_path=path,
              python_version=target_python_version(path, Arch.ARM64))
sys.exit(1 if any(row.verdict == "FAIL" for row in rows) else 0)
"""

WHEEL = ("onnxruntime-genai==0.18.0", "manylinux_2_28_aarch64", "3.13")
ARCH = WHEEL_ARCH = Arch.ARM64


def wheel_for_bench() -> Path:
    """The bench's wheel, downloaded once into the build folder."""
    return download(Runner(Log()), build_root(config.load().root) / "bench")


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


@dataclass(frozen=True)
class Timings:
    wheel: Path
    sysroot: Path | None
    auditwheel_show: float
    verify_cli: float
    verify_in_process: float
    invoke_import: float
    decoupled: float

    @property
    def floor(self) -> float:
        """What an `invoke verify` with nothing of crosslane to import would take."""
        return self.invoke_import + self.verify_in_process


def measure(wheel: Path | None = None, repeat: int = 5) -> Timings:
    """Best-of-*repeat* timings of both tools on one wheel, in this one run, the two processes alternating."""
    runner = Runner(Log())
    cfg = config.load()
    wheel = wheel or wheel_for_bench()
    auditwheel = runner.which("auditwheel", fix="pip install -e .")
    invoke = runner.which("invoke", fix="pip install -e .")
    found = sysroot.find(cfg.sysroot, ARCH)
    sysroot_path = found.path if found else None
    python_version = target_python_version(sysroot_path, ARCH)
    in_process = best_of(repeat, lambda: verify(ARCH, [wheel], sysroot_path=sysroot_path,
                                                python_version=python_version))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    verify_argv = [invoke, "verify", "--arch", ARCH.value, "--path", str(wheel)]
    show_argv = [auditwheel, "show", str(wheel)]
    invoke_argv = [sys.executable, "-c", "import invoke.main"]
    decoupled_argv = [sys.executable, "-c", DECOUPLED, str(wheel)]
    # warm-up: bytecode written, the wheel in the page cache
    for argv in (verify_argv, show_argv, invoke_argv, decoupled_argv):
        subprocess.run(argv, cwd=cfg.root, env=env, check=True, capture_output=True, timeout=600)
    verify_times, show_times, invoke_times, decoupled_times = [], [], [], []
    for _ in range(repeat):
        invoke_times.append(timed(lambda: subprocess.run(invoke_argv, env=env, check=True, capture_output=True,
                                                         timeout=600)))
        verify_times.append(timed(lambda: subprocess.run(verify_argv, cwd=cfg.root, env=env, check=True,
                                                         capture_output=True, timeout=600)))
        show_times.append(timed(lambda: subprocess.run(show_argv, env=env, check=True, capture_output=True,
                                                       timeout=600)))
        decoupled_times.append(timed(lambda: subprocess.run(decoupled_argv, cwd=cfg.root, env=env, check=True,
                                                            capture_output=True, timeout=600)))
    return Timings(wheel, sysroot_path, min(show_times), min(verify_times), in_process, min(invoke_times),
                   min(decoupled_times))


def run_bench() -> list[Measure]:
    if shutil.which("auditwheel") is None:
        print("verify vs auditwheel: skipped (auditwheel not installed; nox -s bench installs it)")
        return []
    t = measure()
    return [Measure("invoke verify vs auditwheel show, processes (onnxruntime-genai 0.18.0 aarch64)",
                    t.verify_cli, t.auditwheel_show, "s", "ratio <= 1.0"),
            Measure("crosslane.verify in-process vs auditwheel show process", t.verify_in_process,
                    t.auditwheel_show, "s", "(no goal: the start-up the processes share)"),
            Measure("floor: invoke's import as a process + crosslane.verify in-process vs auditwheel show process",
                    t.floor, t.auditwheel_show, "s", "(no goal: above 1.0 no crosslane code meets the verify goal)"),
            Measure("decoupled: a process importing invoke and only verify's modules, loading the config, verifying, "
                    "vs auditwheel show process", t.decoupled, t.auditwheel_show, "s",
                    "(no goal: above 1.0 no CLI split meets the verify goal)")]
