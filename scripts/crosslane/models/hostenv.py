"""A host venv holding exactly a list of pinned requirements, made once and found again by their digest."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from crosslane.errors import MissingPrerequisite
from crosslane.files import atomic, locks
from crosslane.files.paths import cache_dir
from crosslane.process.runner import Runner
from crosslane.sources import pinned

READY = "crosslane-ready.json"
INSTALL_TIMEOUT = 1800.0


def digest(requirements: Sequence[str], python: str) -> str:
    text = json.dumps({"python": python, "requirements": sorted(requirements)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def ready(venv: Path, key: str) -> bool:
    try:
        return bool(json.loads((venv / READY).read_text())["key"] == key) and python_of(venv).exists()
    except (OSError, ValueError, KeyError, TypeError):
        return False


class _PipProgress:
    """pip's own lines, thinned: every download with its size, numbered, and the final summary."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.downloads = 0

    def __call__(self, line: str) -> None:
        text = line.strip()
        if text.startswith("Downloading "):
            self.downloads += 1
            self.runner.log.info(f"    [{self.downloads}] {text[:160]}")
        elif text.startswith("Successfully installed"):
            self.runner.log.info(f"    installed {len(text.split()) - 2} distributions")
        else:
            self.runner.log.debug(text)


def ensure(runner: Runner, requirements: Sequence[str], root: Path, *, offline: bool) -> Path:
    """The python of a venv under *root* holding *requirements*; made (pip, from the index pip is set up
    for) when missing. The ready marker is written last, so an interrupted install is redone, not trusted."""
    # Keyed by the interpreter installation underneath (not the venv crosslane itself runs in): `nox -s …`
    # and `invoke …` from a dev venv share one host venv, and so the paths a build records stay the same.
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    key = digest(requirements, f"{sys.base_prefix} {version}")
    venv = root / key[:16]
    if ready(venv, key):
        return python_of(venv)
    if runner.dry_run:  # a dry run writes nothing: say what would be made
        runner.log.info(f"    would make the host venv {venv} ({len(requirements)} pinned requirements)")
        return python_of(venv)
    if offline:
        raise MissingPrerequisite(f"the host venv for {', '.join(requirements)} is not made and "
                                  "CROSSLANE_OFFLINE=1 forbids installing it",
                                  fix="run once with network access to PyPI (the venv is cached by its pins)")
    # One maker at a time (a smoke beside a build may want the venv a build is making): the waiter finds it ready.
    with locks.hold(venv.with_name(f".{venv.name}.lock"), f"the host venv {venv.name}", runner.log, wait=True):
        if not ready(venv, key):
            _make(runner, venv, requirements, key)
    return python_of(venv)


def _make(runner: Runner, venv: Path, requirements: Sequence[str], key: str) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    runner.log.step(f"host venv {venv.name}: {len(requirements)} pinned requirements (once; cached)")
    runner.run([sys.executable, "-m", "venv", venv])
    runner.run([python_of(venv), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                "--progress-bar", "off", "--", *requirements], timeout=INSTALL_TIMEOUT, on_line=_PipProgress(runner))
    atomic.write_text(venv / READY, json.dumps({"key": key, "requirements": list(requirements)}, indent=1))


def python_for(runner: Runner, requirements: Sequence[str]) -> Path:
    """The host venv for *requirements* in crosslane's cache, installing only where CROSSLANE_OFFLINE allows."""

    return ensure(runner, requirements, cache_dir() / "hostenvs", offline=pinned.offline())
