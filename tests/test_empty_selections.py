"""Selections that select nothing, each a real `invoke` process on the project's versions.toml: a `--build` given to
a plan that builds no wheel, or holding no pattern, and a `--component` that names no component (the empty name) are
refused with exit 2 and one line, as cibuildwheel refuses a build selection of nothing and as `--case` already is,
never a run of nothing that exits 0. (`invoke matrix --component ''` stays "every component": the workflow passes
its optional input so.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostilekit import Sandbox

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
