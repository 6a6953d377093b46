"""The payload driver for real: the target's python3 under qemu-user, deciding from the sentinel."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.cli import actions
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane.smokes import payload
from crosslane.smokes import site as target_site

pytestmark = pytest.mark.qemu

IMPORTS_FAKEDIST = """
import sys
import bindkit
result = bindkit.require("T", "crosslane-fakedist", "crosslane_fakedist")
sys.exit(result if isinstance(result, int) else bindkit.finish("T", "OK", "imported"))
"""


@pytest.fixture(scope="module")
def ctx(cfg: config_mod.Config, sysroots: dict[Arch, Path], session_build_dir: Path) -> Context:
    return Context(cfg, Runner(Log()))


@pytest.fixture
def fakedist(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "crosslane_fakedist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: crosslane-fakedist\nVersion: 1.0\n")
    (site / "crosslane_fakedist").mkdir()
    (site / "crosslane_fakedist" / "__init__.py").write_text("raise ImportError('wrong ELF class: ELFCLASS32')\n")
    return site


def attempt(ctx: Context, program: payload.Payload) -> payload.Attempt:
    arch_cfg = ctx.config.arches[Arch.AMD64]
    return payload.run(ctx, Arch.AMD64, arch_cfg.profile(arch_cfg.default_profile), program, base_timeout=60)


@pytest.mark.parametrize(("text", "verdict", "words"), [
    ("print('T-BIND OK: fine')", Verdict.PASS, "fine"),
    ("x = 1", Verdict.FAIL, "no T-BIND sentinel: the program did not run (exit 0)"),
    ("print('T-BIND FAIL: broken')", Verdict.FAIL, "T-BIND FAIL: broken (exit 0, expected 1)"),
    ("", Verdict.FAIL, "T-BIND ABSENT: the payload (environment) is empty"),
    ("import sys\nprint('T-BIND SKIP: absent')\nsys.exit(3)", Verdict.SKIP, "absent"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", Verdict.FAIL,
     "qemu-x86_64-static crashed with SIGSEGV on profile x86-64-v2"),
], ids=["ok", "prints-nothing", "exit0-with-fail", "empty", "skip", "crash"])
def test_text_payloads(ctx: Context, text: str, verdict: Verdict, words: str) -> None:
    result = attempt(ctx, payload.Payload("T", text=text))
    assert result.outcome.verdict is verdict, result.result.output
    assert words in result.reason


def test_the_targets_bytecode_is_kept_beside_the_build_never_in_the_sysroot(ctx: Context) -> None:
    """A module the first run compiled is read from the build folder's bytecode by the next (the sysroot's Python
    files come without any)."""
    folder = payload.bytecode_folder(ctx, Arch.AMD64)
    program = "import csv, json, sys\nprint('T-BIND OK: ' + sys.modules['csv'].__cached__)"
    first = attempt(ctx, payload.Payload("T", text=program))
    assert first.outcome.verdict is Verdict.PASS, first.result.output
    cached = Path(first.outcome.detail)
    assert cached.is_relative_to(folder) and cached.name.startswith("csv.cpython-"), cached
    assert cached.is_file() and ctx.sysroot(Arch.AMD64).path.as_posix() in cached.as_posix()
    written = cached.stat().st_mtime_ns
    again = attempt(ctx, payload.Payload("T", text=program))
    assert again.outcome.verdict is Verdict.PASS and cached.stat().st_mtime_ns == written  # read, not compiled again
    assert not list((ctx.sysroot(Arch.AMD64).path / "usr/lib").glob("python3*/__pycache__/csv.*.pyc"))


def test_payload_file_that_never_arrived(ctx: Context, tmp_path: Path) -> None:
    result = attempt(ctx, payload.Payload("T", file=tmp_path / "missing.py"))
    assert result.outcome.verdict is Verdict.FAIL
    assert result.result.returncode == 4 and "never arrived" in result.reason


def test_import_raises_with_the_distribution_installed_is_fail(ctx: Context, fakedist: Path) -> None:
    result = attempt(ctx, payload.Payload("T", text=IMPORTS_FAKEDIST, pythonpath=(fakedist,)))
    assert result.outcome.verdict is Verdict.FAIL
    assert result.result.returncode == 1
    assert "crosslane-fakedist 1.0 is installed but import crosslane_fakedist raised ImportError" in result.reason


def test_distribution_not_installed_is_skip(ctx: Context, tmp_path: Path) -> None:
    result = attempt(ctx, payload.Payload("T", text=IMPORTS_FAKEDIST, pythonpath=(tmp_path,)))
    assert result.outcome.verdict is Verdict.SKIP
    assert "not installed" in result.reason


@pytest.mark.parametrize("arch", [Arch.RISCV64, Arch.ARM64], ids=["riscv64", "arm64"])
def test_ort_smoke_matches_the_amd64_control(ctx: Context, arch: Arch) -> None:
    for each in (arch, Arch.AMD64):
        built = pipeline.build_components(ctx, each, ["onnxruntime"])
        assert [(r.label, r.verdict) for r in built] == [("build", Verdict.PASS)], built
    rows = pipeline.smoke_components(ctx, arch, ["onnxruntime"])
    profiles = [p.name for p in ctx.config.arches[arch].profiles]
    assert {r.label for r in rows if r.arch is arch} == {f"{kind}@{p}" for p in profiles
                                                              for kind in ("ort", "parity")}
    assert all(r.verdict is Verdict.PASS for r in rows), [r for r in rows if r.verdict is not Verdict.PASS]
    assert all("add: 6 values identical" in r.reason for r in rows if r.label.startswith("parity@"))


@pytest.fixture(scope="module")
def genai_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("wheels")
    runner = Runner(Log())
    runner.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
                "--platform", "manylinux_2_28_aarch64", "--dest", str(dest), "onnxruntime-genai==0.18.0"], timeout=600)
    (wheel,) = dest.glob("onnxruntime_genai-0.18.0-cp314-cp314-*aarch64.whl")
    return wheel


def run_genai(ctx: Context, arch: Arch, wheel: Path, tmp_path: Path) -> payload.Attempt:
    install = target_site.install(ctx, arch, wheel, tmp_path / "target")
    arch_cfg = ctx.config.arches[arch]
    program = payload.Payload.builtin("genai_payload", "GENAI", pythonpath=(install.site,),
                                      env={"GENAI_PIN": "0.18.0", "GENAI_EXPECTED_MACHINE": str(
                                          {Arch.ARM64: 183, Arch.RISCV64: 243}[arch])})
    return payload.run(ctx, arch, arch_cfg.profile(arch_cfg.default_profile), program, base_timeout=120)


@pytest.mark.network
def test_genai_pypi_wheel_on_arm64_is_ok(ctx: Context, genai_wheel: Path, tmp_path: Path) -> None:
    result = run_genai(ctx, Arch.ARM64, genai_wheel, tmp_path)
    assert result.outcome.verdict is Verdict.PASS, result.result.tail()
    lines = result.result.output.splitlines()
    assert any(line.startswith("PROVEN tier 2 ELF: e_machine 183 of the loaded") for line in lines)
    assert any(line.startswith("PROVEN tier 1 version 0.18.0") for line in lines)
    assert any("rejected by the library: RuntimeError" in line for line in lines)
    assert any(line.startswith("SKIP tier 4 generate(): not armed") for line in lines)


@pytest.mark.network
def test_the_aarch64_wheel_on_riscv64_fails_never_skips(ctx: Context, genai_wheel: Path) -> None:
    """What `invoke smoke --arch riscv64 --component onnxruntime-genai --wheel PATH` runs."""
    given = dataclasses.replace(ctx, wheels=actions.wheels(ctx.config, [str(genai_wheel)]))
    rows = pipeline.smoke_components(given, Arch.RISCV64, ["onnxruntime-genai"])
    steps = {r.label: r for r in rows}
    assert steps["install"].verdict is Verdict.FAIL and "is not built for riscv64" in steps["install"].reason
    for profile in ctx.config.arches[Arch.RISCV64].profiles:
        row = steps[f"genai@{profile.name}"]
        assert row.verdict is Verdict.FAIL, row
        assert "GENAI-BIND FAIL: onnxruntime-genai 0.18.0 is installed but import onnxruntime_genai raised" \
            in row.reason
