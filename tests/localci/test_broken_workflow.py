"""The repository's own workflow, broken on purpose, run by act through `invoke actions`: the check fails naming
the job and the step. Slow tier (a plan, and for the artifact a canary build on each side); it needs the pinned
actions staged (CROSSLANE_GIT_MIRROR, README: Continuous integration) and skips, saying so, when they are not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crosslane.config import Config, GitSource
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite
from crosslane.localci import check, pins
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Row, Scope, Verdict
from crosslane.sources import pinned

pytestmark = [pytest.mark.slow, pytest.mark.spawns]


@pytest.fixture
def broken_clone(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not all(pinned.git_mirror(pinned_spec(p)) for p in pins.pins(repo / check.WORKFLOW) if "build" in p.jobs):
        pytest.skip("the workflow's actions are not staged: set CROSSLANE_GIT_MIRROR to mirrors of them")
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    return clone


def pinned_spec(pin: pins.ActionPin) -> GitSource:
    return GitSource(url=pin.url, commit=pin.commit)


def commit_edit(clone: Path, old: str, new: str) -> None:
    workflow = clone / check.WORKFLOW
    text = workflow.read_text()
    assert old in text
    workflow.write_text(text.replace(old, new))
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "break"],
                   check=True)


def failed(cfg: Config, clone: Path, *legs: str) -> list[Row]:
    try:
        rows = check.run(Context(cfg, Runner(Log())), legs, clone)
    except MissingPrerequisite as exc:
        pytest.skip(f"cannot run act here: {exc.one_line()}")
    return [r for r in rows if r.verdict is Verdict.FAIL]


def test_an_output_the_plan_no_longer_sets_fails_the_build_job(cfg: Config, broken_clone: Path) -> None:
    commit_edit(broken_clone, "      build: ${{ steps.plan.outputs.build }}\n", "")
    rows = failed(cfg, broken_clone, "control")
    assert [(r.subject, r.arch) for r in rows][:1] == [("build", Scope("control"))], rows
    assert "strategy.matrix expanded to no leg" in rows[0].reason


def test_a_renamed_artifact_fails_the_smoke_at_its_step(cfg: Config, broken_clone: Path) -> None:
    commit_edit(broken_clone, "          name: build-${{ matrix.arch }}-${{ matrix.component }}\n",
                "          name: pack-${{ matrix.arch }}-${{ matrix.component }}\n")
    rows = failed(cfg, broken_clone, "control", "chain")
    smoke = [r for r in rows if r.subject == "smoke"]
    assert smoke and smoke[0].arch == Scope("chain"), rows
    assert "step 'Main python -m pip install --quiet .' failed" in smoke[0].reason
