"""The ExecuTorch lane for real (slow tier: a cold runner build is ~6 minutes on 2 cores).

Skipped, naming the command, when the pinned sources (ExecuTorch and its submodules) are not staged.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane.sources import pinned
from crosslane_helpers import pinned_source

pytestmark = [pytest.mark.slow, pytest.mark.cross, pytest.mark.qemu, pytest.mark.network]
COMPONENT = "executorch-portable"


def test_the_portable_runner_passes_the_default_cases(cfg: Config, sysroots: dict[Arch, Path],
                                                      session_build_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if pinned.cached(COMPONENT, pinned_source(cfg.components[COMPONENT])) is None:
        pytest.skip(f"not staged: {COMPONENT}; stage it: invoke sources --arch riscv64 --component {COMPONENT}")
    monkeypatch.setenv(pinned.OFFLINE_ENV, "1")
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    rows = pipeline.build_components(ctx, Arch.RISCV64, [COMPONENT])
    assert not [r for r in rows if r.verdict is Verdict.FAIL], rows
    runner = session_build_dir / "riscv64" / COMPONENT / "install" / "bin" / "executor_runner"
    assert runner.read_bytes()[:4] == b"\x7fELF"
    monkeypatch.delenv(pinned.OFFLINE_ENV)  # the host venv and exports may need PyPI once
    smoked = pipeline.smoke_components(ctx, Arch.RISCV64, [COMPONENT])
    runs = [r for r in smoked if "@" in r.label]
    assert runs and all(r.verdict is Verdict.PASS for r in runs), smoked
    assert any(r.label == "add-portable@novector" and "Test_result: PASS" in r.reason for r in runs)
