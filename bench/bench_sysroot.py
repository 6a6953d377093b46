"""The riscv64 sysroot: a cached call, and a cold build vs `debootstrap --foreign` of the same packages."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from common import ROOT, Measure, invoke, median_of, run, timed

from crosslane import config
from crosslane.archs import Arch


def run_bench() -> list[Measure]:
    cfg = config.load(ROOT / "versions.toml")
    spec = cfg.sysroot
    packages = ",".join(spec.packages_for(Arch.RISCV64))
    invoke("sysroot", "--arch", "riscv64")
    cached = median_of(3, lambda: invoke("sysroot", "--arch", "riscv64"))
    results = [Measure("sysroot cached call vs a python3 -c pass startup", cached,
                       median_of(3, lambda: run([sys.executable, "-c", "pass"])), "s", "cached call <= 0.5 s")]
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-sysroot-") as tmp:
        cold = timed(lambda: invoke("sysroot", "--arch", "riscv64", env={"CROSSLANE_CACHE": tmp}))
        if os.geteuid() != 0 or shutil.which("debootstrap") is None:
            print("sysroot cold vs debootstrap: skipped (debootstrap needs root and the debootstrap package)")
            return results
        target = Path(tmp) / "debootstrap"
        keyring = ["--keyring", spec.keyring]
        # Debian 12's debootstrap has no script named after a suite newer than it (forky): the testing suites
        # all take sid's, as debootstrap's own trixie script is a link to it.
        scripts = Path("/usr/share/debootstrap/scripts")
        script = [] if (scripts / spec.suite).exists() else [str(scripts / "sid")]
        foreign = timed(lambda: run(["debootstrap", "--foreign", "--arch", "riscv64", "--variant=minbase",
                                     f"--include={packages}", *keyring, spec.suite, target, spec.mirror, *script]))
    results.append(Measure("sysroot cold build: crosslane vs debootstrap --foreign (minbase + same packages)",
                           cold, foreign, "s", "report"))
    return results
