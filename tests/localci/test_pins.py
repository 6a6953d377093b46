"""The actions a workflow pins, read from the repository's own workflow and from broken ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.errors import ConfigError
from crosslane.localci import pins


def test_the_repository_workflow_pins_each_action_once_with_its_version(repo: Path) -> None:
    found = {p.repo: p for p in pins.pins(repo / ".github/workflows/ci.yml")}
    assert {"actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact",
            "actions/download-artifact"} <= set(found)
    checkout = found["actions/checkout"]
    assert checkout.commit == "11bd71901bbe5b1630ceea73d27597364c9af683" and checkout.tag == "v4.2.2"
    assert {"lint", "tests", "plan", "build", "report"} <= set(checkout.jobs)
    # cache/restore is the cache repository at the same commit: one pin, used by the jobs of both spellings
    assert {"build", "smoke", "upstream"} <= set(found["actions/cache"].jobs)
    assert checkout.reference == "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
    assert checkout.url == "https://github.com/actions/checkout"


def workflow(tmp_path: Path, uses: str) -> Path:
    path = tmp_path / "ci.yml"
    path.write_text(f"on: push\njobs:\n  one:\n    runs-on: x\n    steps:\n      - uses: ./local\n"
                    f"      - run: echo\n      - uses: {uses}\n")
    return path


@pytest.mark.parametrize(("uses", "said"), [
    ("actions/checkout@v4", "names a ref, not a commit"),
    ("docker://alpine:3", "not an action repository pinned by commit"),
    ("nonsense", "not an action repository pinned by commit"),
    ("acme/tool/../../../etc@" + "a" * 40, "has a '.' or '..' component"),
    ("../..@" + "a" * 40, "has a '.' or '..' component"),
])
def test_a_pin_that_can_move_is_an_error_naming_the_step(tmp_path: Path, uses: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said) as raised:
        pins.pins(workflow(tmp_path, uses))
    assert "jobs.one.steps[2].uses" in raised.value.message


def test_local_actions_are_not_pins_and_a_comment_without_version_is_no_tag(tmp_path: Path) -> None:
    found = pins.pins(workflow(tmp_path, "acme/tool/sub@" + "a" * 40 + "  # latest"))
    assert [(p.repo, p.tag, p.jobs) for p in found] == [("acme/tool", None, ("one",))]


def test_a_workflow_that_is_no_yaml_or_has_no_jobs_is_one_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("jobs: [\n")
    with pytest.raises(ConfigError, match="not YAML"):
        pins.pins(bad)
    bad.write_text("on: push\n")
    with pytest.raises(ConfigError, match="no jobs"):
        pins.pins(bad)


def test_a_reusable_workflow_a_commented_out_pin_and_two_versions_for_one_commit(tmp_path: Path) -> None:
    sha = "b" * 40
    path = tmp_path / "ci.yml"
    path.write_text(f"on: push\njobs:\n  one:\n    runs-on: x\n    steps:\n"
                    f"      # - uses: acme/tool@{sha} # v9.9.9\n      - uses: acme/tool@{sha} # v1.2.3\n")
    assert [p.tag for p in pins.pins(path)] == ["v1.2.3"]  # the comment line is no pin
    path.write_text(path.read_text() + f"  two:\n    runs-on: x\n    steps:\n      - uses: acme/tool@{sha} # v2.0.0\n")
    with pytest.raises(ConfigError, match=r"commented as v1\.2\.3 and as v2\.0\.0"):
        pins.pins(path)
    path.write_text(f"on: push\njobs:\n  call:\n    uses: acme/flows/.github/workflows/x.yml@{sha}\n")
    with pytest.raises(ConfigError, match=r"jobs\.call\.uses: a reusable workflow"):
        pins.pins(path)
