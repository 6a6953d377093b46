"""The workflow's rules (policy/workflow.py): the repository's workflow keeps them, the workflow of a54ad75 (before
an Actions engine ran it) breaks each of the five, and each rule is shown both ways on a small workflow."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from crosslane.policy import workflow
from crosslane.report import Verdict
from crosslane_helpers import REPO

RULES = ("cache-per-leg", "group-per-event", "not-cancelled", "root-decides", "own-artifacts")
BEFORE = "a54ad7588774ce62797cdb97ec6fe4d0141858d3"  # the workflow as it was before these rules


def parsed(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


def test_the_repositorys_workflow_keeps_every_rule() -> None:
    found = workflow.defects(parsed((REPO / ".github/workflows/ci.yml").read_text()))
    assert found == [], "\n".join(f"{d.where()}: {d.rule}: {d.message}" for d in found)
    [row] = workflow.lint(REPO)
    assert row.verdict is Verdict.PASS


@pytest.mark.spawns
def test_the_workflow_before_the_rules_breaks_each_of_them() -> None:
    shown = subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE}:.github/workflows/ci.yml"],
                           capture_output=True, text=True, check=False)
    if shown.returncode != 0:
        pytest.skip(f"this clone lacks the commit {BEFORE[:12]} (a shallow clone)")
    found = workflow.defects(parsed(shown.stdout))
    assert {d.rule for d in found} == set(RULES)
    where = {(d.rule, d.job) for d in found}
    assert {("cache-per-leg", "build"), ("cache-per-leg", "upstream"), ("group-per-event", "*"),
            ("not-cancelled", "smoke"), ("not-cancelled", "upstream"), ("not-cancelled", "report"),
            ("root-decides", "build"), ("root-decides", "report"), ("own-artifacts", "smoke"),
            ("own-artifacts", "upstream"), ("own-artifacts", "report")} <= where


LEG = """
name: t
on: push
concurrency:
  group: ci-${{ github.workflow }}-${{ github.event_name }}-${{ github.ref }}
jobs:
  build:
    runs-on: ubuntu-24.04
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.build) }}
    if: ${{ !cancelled() }}
    steps:
      - uses: actions/cache@0000000000000000000000000000000000000000
        with:
          path: .ccache
          key: ccache-${{ matrix.arch }}-${{ matrix.component }}
      - uses: actions/download-artifact@0000000000000000000000000000000000000000
        with:
          pattern: build-${{ matrix.arch }}-*
      - run: .ci/as-root "$(command -v invoke)" build --component "${{ matrix.component }}"
"""


@pytest.mark.parametrize(("change", "rule"), [
    (("key: ccache-${{ matrix.arch }}-${{ matrix.component }}", "key: ccache-${{ matrix.arch }}"), "cache-per-leg"),
    (("${{ github.event_name }}-", ""), "group-per-event"),
    (("if: ${{ !cancelled() }}", "if: always()"), "not-cancelled"),
    ((".ci/as-root", "sudo --preserve-env=PATH"), "root-decides"),
    ((' build --component "${{ matrix.component }}"', " build || true"), "root-decides"),
    (("pattern: build-${{ matrix.arch }}-*", "pattern: build-*"), "own-artifacts"),
    (("          pattern: build-${{ matrix.arch }}-*\n", "          path: downloaded\n"), "own-artifacts"),
], ids=["shared-cache-key", "one-group", "always", "sudo", "or-true", "every-pack", "every-artifact"])
def test_each_rule_names_the_job_and_the_step(change: tuple[str, str], rule: str, tmp_path: Path) -> None:
    assert workflow.defects(parsed(LEG)) == []
    broken = LEG.replace(*change)
    assert broken != LEG
    [found] = workflow.defects(parsed(broken))
    assert found.rule == rule and found.job in ("build", "*")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text(broken)
    [row] = workflow.lint(tmp_path)
    assert row.verdict is Verdict.FAIL and f"{rule}:" in row.reason and ".github/workflows/ci.yml" in row.reason


def test_a_workflow_that_is_not_yaml_is_one_failed_row(tmp_path: Path) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text("jobs: [\n")
    [row] = workflow.lint(tmp_path)
    assert row.verdict is Verdict.FAIL and "not a readable workflow" in row.reason
