"""Build reports: the schema, what is asserted apart from what was measured, and `invoke report-diff`, on two
real canary builds whose source pin differs (seconds each) and on hand-made reports for every other kind."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.reports import build as buildreport
from crosslane.reports import diff as reportdiff
from crosslane.run import pipeline

ARCH = Arch.RISCV64


def report_of(cfg: Config) -> dict[str, object]:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    rows = pipeline.build_components(ctx, ARCH, ["canary"])
    assert [r.verdict for r in rows if r.label == "build"] == [Verdict.PASS], rows
    data: dict[str, object] = json.loads(buildreport.write(ctx, ARCH, {ARCH: ("canary",)}, rows).read_text())
    return data


@pytest.mark.cross
@pytest.mark.network
def test_a_changed_pin_is_exactly_what_the_diff_shows(cfg: Config, sysroots: dict[Arch, Path], repo: Path,
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    source = shutil.copytree(repo / "components" / "canary", tmp_path / "canary")
    canary = dataclasses.replace(cfg.components["canary"], sources=(TreeSource(path=source),))
    cfg = dataclasses.replace(cfg, components=MappingProxyType({**cfg.components, "canary": canary}))
    old = report_of(cfg)
    assert old["schema"] == buildreport.SCHEMA
    (tmp_path / "old.json").write_text(json.dumps(old))
    with (source / "CMakeLists.txt").open("a") as handle:
        handle.write("# a comment that moves the tree's digest and nothing else\n")
    (tmp_path / "new.json").write_text(json.dumps(report_of(cfg)))
    assert commands.diff_reports(tmp_path / "old.json", tmp_path / "new.json") == 0
    # Besides the pin, only times may differ: the rows' and the component's build seconds (the second build is a
    # ccache hit; on a loaded machine the first one took 5.8 s, past the diff's floor of 5 s).
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if not line.startswith(("time ", "seconds "))]
    assert len(lines) == 1, printed
    [line] = lines
    assert line.startswith("source canary@riscv64: tree:") and " → tree:" in line


def test_each_kind_of_change_is_one_line() -> None:
    old = {"schema": 3, "tools": {"cmake": "3.31.6"},
           "sysroots": {"riscv64": {"versions": {"libc6": "2.42-1", "python3.14": "3.14.0-1"}}},
           "components": [{"component": "c", "arch": "riscv64", "source": "git:u@a", "seconds": 100.0, "outputs": 9,
                           "bytes": 1000}, {"component": "slow", "arch": "riscv64", "seconds": 100.0},
                          {"component": "gone", "arch": "arm64"}],
           "rows": [{"component": "c", "arch": "riscv64", "check": "smoke", "profile": "rvv128", "verdict": "PASS"}]}
    new = {"schema": 3, "tools": {"cmake": "3.31.7"},
           "sysroots": {"riscv64": {"versions": {"libc6": "2.43-1", "python3.14": "3.14.0-1"}}},
           "components": [{"component": "c", "arch": "riscv64", "source": "git:u@b", "seconds": 110.0, "outputs": 12,
                           "bytes": 1500}, {"component": "slow", "arch": "riscv64", "seconds": 200.0},
                          {"component": "new", "arch": "amd64"}],
           "rows": [{"component": "c", "arch": "riscv64", "check": "smoke", "profile": "rvv128", "verdict": "FAIL"}]}
    assert reportdiff.diff(old, new) == [
        'tools: {"cmake": "3.31.6"} → {"cmake": "3.31.7"}',
        "sysroot riscv64 libc6: 2.42-1 → 2.43-1",
        "source c@riscv64: git:u@a → git:u@b",
        "outputs c@riscv64: 9 → 12",
        "bytes c@riscv64: 1000 → 1500",
        "component gone@arm64: removed",
        "component new@amd64: added",
        "seconds slow@riscv64: 100.0 → 200.0",
        "verdict c riscv64 smoke@rvv128: PASS → FAIL",
    ]  # 100 s → 110 s is within the timing noise, so it is not a change
    assert reportdiff.diff(new, new) == []


def test_two_clones_reports_differ_in_their_paths_only() -> None:
    def report(root: str, flag: str) -> dict[str, object]:
        args = [f"-DCMAKE_TOOLCHAIN_FILE={root}/build/riscv64/toolchains/clang.cmake", flag, "-DCACHE=/root/.cache/x"]
        return {"schema": 3, "config": f"{root}/versions.toml",
                "components": [{"component": "c", "arch": "riscv64", "cmake_args": args}]}

    assert reportdiff.diff(report("/srv/a/main", "-DX=1"), report("/srv/b/main", "-DX=1")) == []
    assert reportdiff.diff(report("/srv/a/main", "-DX=1"), report("/srv/b/main", "-DX=2")) == [
        'cmake_args c@riscv64: ["-DCMAKE_TOOLCHAIN_FILE=<project>/build/riscv64/toolchains/clang.cmake", "-DX=1", '
        '"-DCACHE=/root/.cache/x"] → ["-DCMAKE_TOOLCHAIN_FILE=<project>/build/riscv64/toolchains/clang.cmake", '
        '"-DX=2", "-DCACHE=/root/.cache/x"]']


def test_another_schema_or_shape_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps({"schema": 99}))
    with pytest.raises(UsageError, match="report schema 99, this crosslane reads schema 3"):
        reportdiff.load(tmp_path / "r.json")
    (tmp_path / "rows.json").write_text("[]")
    with pytest.raises(UsageError, match="a --json row list, not a build report"):
        reportdiff.load(tmp_path / "rows.json")
    unknown_check = {"component": "c", "arch": "riscv64", "check": "gate:elf-arch", "verdict": "PASS"}
    step_string = {"component": "c", "arch": "riscv64", "step": "gate:elf-arch", "verdict": "PASS"}
    for hostile in ({"sysroots": {"riscv64": "x"}}, {"sysroots": {"riscv64": {"versions": [1]}}}, {"rows": {"x": 1}},
                    {"rows": [unknown_check]}, {"rows": [step_string]}, {"tests": [{"component": "c"}]},
                    {"tests": [{"component": "c", "arch": "a", "profile": "p", "cases": [{"id": 1}]}]}):
        (tmp_path / "odd.json").write_text(json.dumps({"schema": 3, **hostile}))
        assert commands.diff_reports(tmp_path / "odd.json", tmp_path / "odd.json") == UsageError.exit_code
    (tmp_path / "bad.json").write_text("{")
    assert commands.diff_reports(tmp_path / "bad.json", tmp_path / "r.json") == UsageError.exit_code
    assert "Traceback" not in capsys.readouterr().err


def test_configuration_claims_are_kept_apart_from_measurements(cfg: Config) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    claims = buildreport.asserted(ctx, [ARCH], {ARCH: ("executorch-portable", "executorch-xnnpack")})
    whats = [c["what"] for c in claims]
    assert "cases.riscv-ci: yolo26 not run (executorch-portable, executorch-xnnpack)" in whats
    assert "submodule third-party/json at 9cca280a4d0c, not the gitlink's (executorch-portable, executorch-xnnpack)" \
        in whats
    assert all(c["reason"] for c in claims)
    markdown = buildreport.markdown({"asserted": claims, "rows": []})
    assert "## Asserted by configuration (not measured by this run)" in markdown


def test_the_markdown_names_a_source_in_one_cell() -> None:
    pin = ("git:https://github.com/pytorch/executorch@e4d02f41f7909e8ed5bf4a14ffc520d733453d9f"
           "+submodules:third-party/json,backends/xnnpack/third-party/pthreadpool,third-party/gflags"
           "+third-party/json=9cca280a4d0ccf0c08f47a99aa71d1b0e52f8d03")
    assert buildreport.short_source(pin) == "git pytorch/executorch @ e4d02f41f790 (+3 submodules, 1 substituted)"
    assert buildreport.short_source("archive:http://h/p/x.tar.xz#sha256=" + "a" * 64) == \
        "archive x.tar.xz (sha256 aaaaaaaaaaaa…)"
    assert buildreport.short_source(None) == "—"


def suite(cases: dict[str, str], profile: str = "rvv128") -> dict[str, object]:
    return {"component": "cpuinfo", "arch": "riscv64", "profile": profile,
            "cases": [{"id": i, "outcome": o, "seconds": 0.1} for i, o in cases.items()]}


def test_upstream_cases_that_changed_outcome_are_listed() -> None:
    old = {"schema": 3, "tests": [suite({"a": "passed", "b": "passed", "c": "failed"}), suite({"a": "passed"}, "x")]}
    new = {"schema": 3, "tests": [suite({"a": "passed", "b": "failed", "c": "passed", "d": "passed"})]}
    assert reportdiff.diff(old, new) == [
        "test cpuinfo@riscv64/rvv128 b: passed → failed",
        "test cpuinfo@riscv64/rvv128 c: failed → passed",
        "tests cpuinfo@riscv64/rvv128: 1 cases added, 0 removed",
        "tests cpuinfo@riscv64/x: removed (1 cases)",
    ]
