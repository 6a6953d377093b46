"""Selections that select nothing, each a real `invoke` process on the project's versions.toml: a `--build` given to
a plan that builds no wheel, or holding no pattern, and a `--component` that names no component (the empty name) are
refused with exit 2 and one line, as cibuildwheel refuses a build selection of nothing and as `--case` already is,
never a run of nothing that exits 0. (`invoke matrix --component ''` stays "every component": the workflow passes
its optional input so.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostilekit import Sandbox, invoke

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("selections of nothing")]


@pytest.mark.parametrize(("args", "words"), [
    (("build", "--arch", "riscv64", "--component", "canary", "--build", "cp99-*", "--dry-run"),
     "--build cp99-*: the plan builds no wheel (canary)"),
    (("all", "--arch", "riscv64", "--component", "canary", "--build", "cp314-*", "--dry-run"),
     "--build cp314-*: the plan builds no wheel (canary)"),
    (("upstream-tests", "--arch", "riscv64", "--component", "cpuinfo", "--build", "cp314-*", "--dry-run"),
     "--build cp314-*: the plan builds no wheel (cpuinfo)"),
    (("build", "--arch", "riscv64", "--component", "onnxruntime-genai", "--build", " ", "--dry-run"),
     "--build ' ': no build identifier pattern"),
], ids=["build", "all", "upstream-tests", "blank-pattern"])
def test_a_build_selection_that_can_match_nothing_is_refused(tmp_path: Path, args: tuple[str, ...],
                                                             words: str) -> None:
    Sandbox(tmp_path).refused(2, words, *args)


@pytest.mark.parametrize("args", [
    ("build", "--arch", "riscv64", "--component", "", "--dry-run"),
    ("all", "--arch", "riscv64", "--component", "", "--dry-run"),
    ("smoke", "--arch", "riscv64", "--component", ""),
    ("upstream-tests", "--arch", "riscv64", "--component", "", "--dry-run"),
], ids=["build", "all", "smoke", "upstream-tests"])
def test_an_empty_component_name_is_refused(tmp_path: Path, args: tuple[str, ...]) -> None:
    Sandbox(tmp_path).refused(2, "unknown component ''", *args)


@pytest.mark.cross
@pytest.mark.parametrize("selection", [("--build", "cp99-*"), ()], ids=["option", "environment"])
@pytest.mark.parametrize("command", ["build", "all"])
def test_a_build_selection_of_nothing_is_refused(tmp_path: Path, sysroots: object, selection: tuple[str, ...],
                                                 command: str) -> None:
    env = {"CROSSLANE_BUILD_DIR": str(tmp_path / "build"), **({} if selection else {"CROSSLANE_BUILD": "cp99-*"})}
    done = invoke(command, "--arch", "riscv64", "--component", "onnxruntime-genai", "--dry-run", *selection,
                  env=env)
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "no build identifier matches cp99-*" in done.errors[0], done.out
    assert "Traceback" not in done.out


def test_a_case_that_is_no_model_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    done = box.refused(2, "--case bogus: not a model of any [cases.*] matrix", "smoke", "--arch", "riscv64",
                       "--component", "executorch-portable", "--case", "bogus")
    assert "did you mean" in done.errors[0] or "known" in done.errors[0]


@pytest.mark.parametrize(("args", "words"), [
    (("smoke", "--arch", "riscv64", "--cpu", "--json", "x.json"), "invoke smoke: Flag '--cpu' needed value"),
    (("build", "--arch", "riscv64", "--no-such-flag"), "invoke build: No idea what '--no-such-flag' is"),
], ids=["flag-without-value", "unknown-flag"])
def test_invokes_own_argument_errors_are_one_crosslane_line(args: tuple[str, ...], words: str) -> None:
    done = invoke(*args, env={})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and words in done.errors[0] and "see invoke --help" in done.errors[0], done.out
    assert done.out.strip() == done.errors[0] and "Traceback" not in done.out
