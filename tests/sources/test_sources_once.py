"""`invoke sources` fetches each distinct pin once: variants of one project (extends, source_of) share the project's
cache entries, for their own source, their FetchContent dependencies and their test builds' ones, and a build of any
variant then finds every one of them staged (CROSSLANE_OFFLINE=1, no mirror)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from crosslane import config
from crosslane.archs import Arch
from crosslane.recipes import cmake
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane.sources import pinned
from crosslane_helpers import context, git, versions_header

URL = "https://example.invalid/acme/widget"


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A bare mirror of acme/widget (CROSSLANE_GIT_MIRROR's layout) with two commits, and a cache of the test's own."""
    work = tmp_path / "upstream"
    work.mkdir()
    git(work, "init", "-q")
    commits = []
    for text in ("int a;\n", "int b;\n"):
        (work / "a.c").write_text(text)
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", text)
        commits.append(git(work, "rev-parse", "HEAD"))
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(tmp_path / "mirrors" / "acme+widget" / "repo")],
                   check=True)
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", str(tmp_path / "mirrors" / "{owner}+{name}" / "repo"))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    return commits[0], commits[1]


def variants(tmp_path: Path, first: str, second: str) -> config.Config:
    """widget and two variants of it (one differs only in its riscv64 toolchain, one in its cmake_args); one pin of
    the project, one of a FetchContent dependency, one its test build reads."""
    text = f"""
[components.widget]
source = {{ kind = "git", url = "{URL}", commit = "{first}" }}
arches = ["riscv64"]
recipe = "cmake"
[components.widget.fetchcontent.gadget]
source = {{ kind = "git", url = "{URL}", commit = "{second}" }}
[components.widget.tests]
kind = "ctest"
timeout = 60
[components.widget.tests.fetchcontent.googletest]
source = {{ kind = "git", url = "{URL}", commit = "{first}" }}

[components.widget-clang]
extends = "widget"
toolchain = {{ riscv64 = "clang" }}

[components.widget-fast]
extends = "widget"
cmake_args = ["-DFAST=ON"]
"""
    path = tmp_path / "versions.toml"
    path.write_text(versions_header(riscv64_toolchain="gcc") + text)
    return config.load(path)


@pytest.mark.spawns
def test_each_distinct_pin_is_fetched_once_for_every_variant(tmp_path: Path, mirror: tuple[str, str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = variants(tmp_path, *mirror)
    ctx, log = context(cfg)
    rows = pipeline.stage_sources(ctx, Arch.RISCV64, [])
    fetches = [line for line in log.getvalue().splitlines() if line.strip().startswith("fetching ")]
    # three distinct pins (widget's source, gadget, googletest), not three per variant
    assert len(fetches) == 3, fetches
    assert [(r.component, r.subject, r.verdict) for r in rows] == [
        ("widget", "main", Verdict.PASS), ("widget", "gadget", Verdict.PASS), ("widget", "googletest", Verdict.PASS)]

    monkeypatch.delenv("CROSSLANE_GIT_MIRROR")
    monkeypatch.setenv("CROSSLANE_OFFLINE", "1")
    for name in ("widget", "widget-clang", "widget-fast"):
        component = cfg.components[name]
        own = pinned.fetch(ctx.runner, component, cfg.sysroot, arch="riscv64")
        assert own.served_by.endswith("(cached)"), (name, own.served_by)
        assert component.tests is not None
        test_build = dataclasses.replace(component, fetchcontent={**component.fetchcontent,
                                                                  **component.tests.fetchcontent})
        _, found, _ = cmake.fetchcontent_args(ctx, test_build, Arch.RISCV64)
        assert [(r.subject, r.reason.endswith("(cached)")) for r in found] == [("gadget", True),
                                                                               ("googletest", True)], name
