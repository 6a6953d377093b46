"""The pytest kind end to end: a wheel and a test folder of its own on a clean riscv64 root under real qemu-user
(pytest from PyPI, numpy from the distribution), results from pytest's JUnit file; and the absent-data rule."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Component, Config, SuiteSpec, TreeSource, WheelSpec
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Verdict
from crosslane.suites import pytest_suite, stage
from crosslane.suites.junit import Case, Outcome

TESTS = """\
import boardcheck
import numpy
import pytest


def test_answer():
    assert boardcheck.ANSWER == 42


def test_broken():
    assert numpy.int64(6) * 7 == 43


@pytest.mark.skip(reason="not on this board")
def test_skipped():
    pass
"""


def wheel(tmp_path: Path) -> Path:
    tree = tmp_path / "tree" / "boardcheck-1.0"
    (tree / "boardcheck").mkdir(parents=True)
    (tree / "boardcheck" / "__init__.py").write_text("ANSWER = 42\n")
    info = tree / "boardcheck-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: boardcheck\nVersion: 1.0\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: cp314-none-any\n")
    subprocess.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", str(tmp_path), str(tree)], check=True,
                   capture_output=True)
    return tmp_path / "boardcheck-1.0-cp314-none-any.whl"


@pytest.mark.qemu
@pytest.mark.network
def test_upstream_pytest_on_a_board(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    source = tmp_path / "components" / "boardcheck"
    (source / "tests").mkdir(parents=True)
    (source / "tests" / "test_board.py").write_text(TESTS)
    spec = SuiteSpec(kind="pytest", timeout=120, paths=("tests/test_board.py",),
                     requirements=(f"pytest=={cfg_pin(cfg)}",), control=False)
    # The install test's root (python3.14, its venv, numpy): the one tests/smokes/test_wheel_install.py makes.
    component = Component(name="boardcheck", sources=(TreeSource(path=source),), arches=(Arch.RISCV64,), depends=(),
                          recipe="cmake", source_subdir="", cmake_args=(), arch_cmake_args={}, toolchain={},
                          smoke=None, patches=(), tests=spec, wheel=WheelSpec(install_packages=("python3-numpy",)))
    config = dataclasses.replace(cfg, components={"boardcheck": component})
    ctx = Context(config, Runner(Log(io.StringIO())), wheels={"boardcheck": (wheel(tmp_path),)})
    profile = config.arches[Arch.RISCV64].profile("rvv128")
    rows = stage.run(ctx, Arch.RISCV64, ["boardcheck"], [profile])
    installed = [r for r in rows if r.subject == "upstream-tests:install"]
    assert installed and installed[0].verdict is Verdict.PASS, rows
    [row] = [r for r in rows if r.check is Check.TESTS and r.subject == "upstream-tests"]
    assert row.verdict is Verdict.FAIL and row.profile == "rvv128"
    assert row.reason.startswith("1 of 3 failed: test_board::test_broken (AssertionError: assert"), row.reason
    assert "1 passed, 1 skipped" in row.reason


def cfg_pin(cfg: Config) -> str:
    """The pytest versions.toml pins for the genai suite (the one pin; here too)."""
    spec = cfg.components["onnxruntime-genai"].tests
    assert spec is not None
    return next(r.split("==")[1] for r in spec.requirements if r.startswith("pytest=="))


def test_a_failure_naming_an_absent_data_file_is_that(tmp_path: Path) -> None:
    """For a source staged before the mirror's absent files were recorded: the absent_ok heuristic."""
    (tmp_path / "test/models/whisper").mkdir(parents=True)
    (tmp_path / "test/models/whisper/genai_config.json").write_text("{}")
    missing = pytest_suite.missing_data_of(tmp_path, ["test/*"], None)
    gone = "/crosslane/src/test/models/whisper/dummy_encoder.onnx"
    case = Case("t::w", Outcome.FAILED, 0.1, "RuntimeError", f"RuntimeError: Load model from {gone} failed:Load "
                f"model {gone} failed. File doesn't exist")
    assert missing(case) == "test/models/whisper/dummy_encoder.onnx"
    present = Case("t::p", Outcome.FAILED, 0.1, "x", "open /crosslane/src/test/models/whisper/genai_config.json")
    assert missing(present) is None  # there: the failure is the test's own
    elsewhere = pytest_suite.missing_data_of(tmp_path, ["docs/*"], None)
    assert elsewhere(case) is None  # absent, but not a file the mirror may lack: a defect, not missing data
    climbing = Case("t::c", Outcome.FAILED, 0.1, "x", "open /crosslane/src/test/../../../etc/crosslane.cfg")
    assert missing(climbing) is None


def test_only_a_file_the_mirror_lacked_is_absent_data_once_recorded(tmp_path: Path) -> None:
    recorded = frozenset({"test/models/whisper/dummy_encoder.onnx"})
    missing = pytest_suite.missing_data_of(tmp_path, ["test/*"], recorded)
    lacked = Case("t::w", Outcome.FAILED, 0.1, "x", "Load model from /crosslane/src/test/models/whisper/"
                  "dummy_encoder.onnx failed")
    assert missing(lacked) == "test/models/whisper/dummy_encoder.onnx"
    # not written by the code under test: a defect, though absent_ok's test/* would have allowed the path
    unwritten = Case("t::o", Outcome.FAILED, 0.1, "x", "open /crosslane/src/test/python/out/genai_config.json")
    assert missing(unwritten) is None


def test_nothing_is_recorded_absent_for_a_tree_no_staged_pin_describes(cfg: Config, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))  # nothing staged here
    genai = cfg.components["onnxruntime-genai"]
    assert pytest_suite.recorded_absent(Context(cfg, Runner(Log(io.StringIO()))), genai) is None
    local = Context(cfg, Runner(Log(io.StringIO())), sources={"onnxruntime-genai": tmp_path})
    assert pytest_suite.recorded_absent(local, genai) is None  # a --source checkout: the pin's record is not its
