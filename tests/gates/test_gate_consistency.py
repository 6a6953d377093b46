"""Consistency lint on fixture files in tmp_path, and on the real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgkit import make
from crosslane import config
from crosslane.errors import ConfigError
from crosslane.policy import consistency
from crosslane.report import Verdict

WORKFLOW = """\
name: ci
jobs:
  build:
    strategy:
      matrix:
        arch: [amd64, arm64]
    steps:
      - run: pip install cmake==3.30.0 ninja==1.13.0
      - run: echo lanes.genai.riscv64.enabled = false
  smoke:
    strategy:
      matrix:
        arch:
          - amd64
          - arm64
          - riscv64
"""
README = """\
# x
Needs clang-18 and lld-19.

| component | amd64 | arm64 | riscv64 |
|---|---|---|---|
| genai | yes | yes | no |
| canary | yes | yes | yes |
"""
NOXFILE = 'ARCHES = ["amd64", "arm64", "riscv64"]\nsession.install("onnxruntime-genai==0.8.1")\n'


def write(root: Path) -> None:
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    (root / "README.md").write_text(README)
    (root / "noxfile.py").write_text(NOXFILE)


def messages(root: Path, cfg: config.Config) -> list[str]:
    return [r.reason for r in consistency.lint(cfg, root) if r.verdict is Verdict.FAIL]


def test_every_disagreement_names_file_line_found_and_expected(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    write(tmp_path)
    found = messages(tmp_path, cfg)
    assert found == [
        (".github/workflows/ci.yml:6: found arch list [amd64, arm64], versions.toml says [amd64, arm64, riscv64] "
         "([arches.*])"),
        ".github/workflows/ci.yml:8: found cmake==3.30.0, versions.toml says cmake 3.31.6 (tools.cmake)",
        (".github/workflows/ci.yml:9: found lanes.genai.riscv64.enabled = false, versions.toml says enabled = true "
         "(lanes.genai.riscv64)"),
        "README.md:2: found clang-18, versions.toml says clang-19 (toolchains.clang.version)",
        ("README.md:6: found genai on riscv64: 'no', versions.toml says on (components.genai.arches / "
         "lanes.genai.riscv64)"),
        ("noxfile.py:2: found onnxruntime-genai==0.8.1, versions.toml says onnxruntime-genai==0.9.0 "
         "(components.genai.source)"),
    ]


def test_lane_off_makes_the_same_files_agree_on_toggles(tmp_path: Path) -> None:
    cfg = make(tmp_path, "[lanes.genai.riscv64]\nenabled = false\n")
    write(tmp_path)
    found = messages(tmp_path, cfg)
    assert not any("lanes.genai.riscv64" in m for m in found)


def test_allowlist_silences_with_reason_and_stale_entries_fail(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    write(tmp_path)
    (tmp_path / consistency.ALLOWLIST).write_text(
        '[[allow]]\nfile = "README.md"\nvalue = "clang-18"\nreason = "documents the old toolchain"\n'
        '[[allow]]\nfile = "noxfile.py"\nvalue = "ninja==1.0"\nreason = "gone"\n')
    found = messages(tmp_path, cfg)
    assert not any(m.startswith("README.md:2") for m in found)
    assert any("stale allow entry file='noxfile.py' value='ninja==1.0'" in m for m in found)


def test_allowlist_needs_a_reason(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    (tmp_path / consistency.ALLOWLIST).write_text('[[allow]]\nfile = "README.md"\nvalue = "x"\nreason = " "\n')
    with pytest.raises(ConfigError, match="reason: empty"):
        consistency.lint(cfg, tmp_path)


def test_agreeing_files_pass(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    (tmp_path / "README.md").write_text("clang-19\n| cmake | 3.31.6 |\n`CMAKE_VERSION=3.31.6`\n")
    rows = consistency.lint(cfg, tmp_path)
    assert [r.verdict for r in rows] == [Verdict.PASS]


def test_the_real_repository_is_consistent(repo: Path, cfg: config.Config) -> None:
    rows = consistency.lint(cfg, repo)
    assert [r for r in rows if r.verdict is Verdict.FAIL] == []
