"""Test tiers: unit tests spawn nothing; tests marked cross/qemu/network/slow run the real tools."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner

REPO = Path(__file__).resolve().parent.parent
SPAWNING_MARKERS = {"cross", "qemu", "network", "slow", "spawns"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A hostile case's class (its `hostile` mark) travels with its report, for the summary below."""
    for item in items:
        mark = item.get_closest_marker("hostile")
        if mark is not None:
            item.user_properties.append(("hostile", str(mark.args[0])))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per class of hostile input that ran (`nox -s reliability`): its cases and how they ended."""
    counts: dict[str, Counter[str]] = {}
    for outcome in ("passed", "failed", "skipped", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            label = dict(getattr(report, "user_properties", ())).get("hostile")
            if label is not None and (report.when == "call" or outcome != "passed"):
                counts.setdefault(str(label), Counter())[outcome] += 1
    if not counts:
        return
    total = sum(sum(c.values()) for c in counts.values())
    terminalreporter.write_sep("-", f"hostile input: {total} cases in {len(counts)} classes")
    for label in sorted(counts):
        c = counts[label]
        terminalreporter.write_line(f"{label}: {sum(c.values())} cases, {c['passed']} passed, {c['failed']} failed, "
                                    f"{c['error']} errors, {c['skipped']} skipped")


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    for argv in (["clang-19", "--version"], ["riscv64-linux-gnu-gcc", "--version"],
                 ["aarch64-linux-gnu-gcc", "--version"], ["qemu-riscv64-static", "--version"]):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.splitlines()
            lines.append(f"{argv[0]}: {out[0] if out else '?'}")
        except (OSError, subprocess.TimeoutExpired):
            lines.append(f"{argv[0]}: not found")
    return lines


# What a GitHub runner exports and crosslane reacts to (::error:: annotations, step summaries, no progress
# redraw). The suite runs as it would on a developer's machine; tests of those paths set them themselves.
ACTIONS_ENV = ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ENV", "CI")


@pytest.fixture(scope="session", autouse=True)
def _not_inside_github_actions() -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    for name in ACTIONS_ENV:
        patch.delenv(name, raising=False)
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def _no_subprocess_in_unit_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests must not spawn: a test that needs a process says so with a marker."""
    if SPAWNING_MARKERS & {m.name for m in request.node.iter_markers()}:
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"unit test spawned a process: {args[:1]}; mark it (e.g. @pytest.mark.spawns)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def cfg() -> config_mod.Config:
    return config_mod.load(REPO / "versions.toml")


@pytest.fixture(scope="session")
def session_build_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("build")
    mp = pytest.MonkeyPatch()
    mp.setenv("CROSSLANE_BUILD_DIR", str(path))
    yield path
    mp.undo()


@pytest.fixture(scope="session")
def sysroots(cfg: config_mod.Config) -> dict[Arch, Path]:
    """Real Debian sysroots for every arch (cached under the XDG cache; built on first use)."""
    runner = Runner(Log())
    ctx = Context(cfg, runner)
    return {arch: ctx.ensure_sysroot(arch).path for arch in cfg.arches}
