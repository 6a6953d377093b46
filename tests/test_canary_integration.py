"""Real cross builds of the canary against real sysroots, run under real qemu-user."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from crosslane.archs import Arch, info
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.host import toolchains
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Row, Verdict
from crosslane.run import pipeline

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.network]


def context(cfg: Config, *, dry_run: bool = False, sources: dict[str, Path] | None = None) -> Context:
    return Context(cfg, Runner(Log(io.StringIO()), dry_run=dry_run), sources=dict(sources or {}))


BUILD_STEPS = ("-S", "--build", "--install")


def build_rows(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.label == "build"]


@pytest.fixture(scope="module")
def built(cfg: Config, sysroots: dict[Arch, Path], session_build_dir: Path) -> Path:
    ctx = context(cfg)
    for arch in Arch:
        rows = build_rows(pipeline.build_components(ctx, arch, ["canary"]))
        assert [r.verdict for r in rows] == [Verdict.PASS], rows
    return session_build_dir


@pytest.mark.parametrize("arch", list(Arch), ids=[a.value for a in Arch])
def test_artifacts_are_for_the_target(built: Path, arch: Arch) -> None:
    install = built / arch.value / "canary" / "install"
    suffix = f".cpython-314-{info(arch).multiarch}.so"
    extension = install / "python" / f"canary{suffix}"
    for path in (install / "bin/canary-cli", extension):
        with path.open("rb") as handle:
            elf = ELFFile(handle)
            assert elf["e_machine"] == {62: "EM_X86_64", 183: "EM_AARCH64", 243: "EM_RISCV"}[info(arch).elf_machine]


def test_riscv64_every_profile_passes(built: Path, cfg: Config) -> None:
    rows = pipeline.smoke_components(context(cfg), Arch.RISCV64, ["canary"])
    steps = {r.label: r for r in rows}
    for profile in ("novector", "rvv128", "rvv256", "rvv512"):
        for kind in ("cli", "python-import"):
            row = steps[f"{kind}@{profile}"]
            assert row.verdict is Verdict.PASS, row
    assert "kernel=rvv vlenb=64" in steps["cli@rvv512"].reason
    assert "kernel=scalar" in steps["cli@novector"].reason


def test_arm64_passes_against_control(built: Path, cfg: Config) -> None:
    rows = pipeline.smoke_components(context(cfg), Arch.ARM64, ["canary"])
    assert rows and all(r.verdict is Verdict.PASS for r in rows), rows


def test_scalar_only_build_fails_on_vector_profiles(built: Path, cfg: Config, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """GCC 12 cannot build the RVV kernel: the smoke must catch the silent scalar fallback, not pass on rc 0."""
    from dataclasses import replace
    from types import MappingProxyType

    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    canary = replace(cfg.components["canary"], toolchain=MappingProxyType({Arch.RISCV64: "gcc"}))
    gcc_cfg = replace(cfg, components=MappingProxyType({"canary": canary}))
    ctx = context(gcc_cfg)
    got = pipeline.build_components(ctx, Arch.AMD64, ["canary"])
    assert [r.verdict for r in build_rows(got)] == [Verdict.PASS], got
    refused = pipeline.build_components(ctx, Arch.RISCV64, ["canary"])
    assert [(r.label, r.verdict) for r in refused] == [("preflight:rvv", Verdict.FAIL)]
    # Past the preflight on purpose: the smoke must still catch what the preflight predicted.
    from crosslane.recipes import cmake

    planned = cmake.plan(ctx, canary, Arch.RISCV64, cmake.prepare(ctx, canary, Arch.RISCV64))
    assert cmake.execute(ctx, planned).verdict is Verdict.PASS
    rows = {r.label: r for r in pipeline.smoke_components(ctx, Arch.RISCV64, ["canary"], "rvv256")}
    assert rows["cli@rvv256"].verdict is Verdict.FAIL
    assert "silent scalar fallback" in rows["cli@rvv256"].reason
    assert rows["python-import@rvv256"].verdict is Verdict.FAIL
    novector = pipeline.smoke_components(ctx, Arch.RISCV64, ["canary"], "novector")
    assert all(r.verdict is Verdict.PASS for r in novector), novector


def test_missing_control_fails(built: Path, cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for arch in ("riscv64",):
        shutil.copytree(built / arch, tmp_path / arch, symlinks=True)
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    rows = pipeline.smoke_components(context(cfg), Arch.RISCV64, ["canary"], "rvv128")
    assert rows and all(r.verdict is Verdict.FAIL for r in rows)
    assert "no amd64 control checksum" in rows[0].reason


def test_second_build_skips_every_step(built: Path, cfg: Config) -> None:
    ctx = context(cfg)
    rows = build_rows(pipeline.build_components(ctx, Arch.RISCV64, ["canary"]))
    assert [(r.verdict, r.reason) for r in rows] == [(Verdict.PASS, "up to date (skipped)")]
    assert not any(c[0].endswith("cmake") and c[1] in BUILD_STEPS for c in ctx.runner.commands)


def test_source_change_rebuilds_and_dry_run_prints(built: Path, cfg: Config, tmp_path: Path) -> None:
    tree = tmp_path / "canary"
    source = cfg.components["canary"].sources[0]
    assert isinstance(source, TreeSource)
    shutil.copytree(source.path, tree)
    dry = context(cfg, dry_run=True, sources={"canary": tree})
    rows = build_rows(pipeline.build_components(dry, Arch.ARM64, ["canary"]))
    assert rows[0].verdict is Verdict.SKIP
    printed = [c for c in dry.runner.commands if c[0].endswith("cmake") and c[1] in BUILD_STEPS]
    assert [c[1] for c in printed] == ["-S", "--build", "--install"]
    real = context(cfg, sources={"canary": tree})
    (tree / "src" / "cli.c").write_text((tree / "src" / "cli.c").read_text() + "\n/* changed */\n")
    rows = pipeline.build_components(real, Arch.ARM64, ["canary"])
    assert ("source", Verdict.PASS, f"local, unverified: {tree}") in [(r.label, r.verdict, r.reason) for r in rows]
    rows = build_rows(rows)
    assert (rows[0].verdict, rows[0].reason) == (Verdict.PASS, "built")


@pytest.mark.parametrize("toolchain,expected", [("gcc", False), ("clang", True)])
def test_rvv_probe_decides_by_compiling(cfg: Config, toolchain: str, expected: bool) -> None:
    runner = Runner(Log(io.StringIO()))
    compiler = toolchains.detect(runner, cfg.toolchains[toolchain], Arch.RISCV64)
    if toolchain == "gcc" and compiler.major != 12:
        pytest.skip(f"GCC {compiler.version}: the 'GCC 12 has no RVV intrinsics' expectation is Debian 12's")
    assert toolchains.can_compile_rvv(runner, compiler) is expected


def test_build_gates_catch_a_foreign_binary(built: Path, cfg: Config, tmp_path: Path) -> None:

    from crosslane.recipes import cmake

    ctx = context(cfg)
    install = tmp_path / "install"
    canary = cfg.components["canary"]
    planned = cmake.plan(ctx, canary, Arch.RISCV64, cmake.prepare(ctx, canary, Arch.RISCV64))
    shutil.copytree(planned.install_dir, install, symlinks=True)
    assert [r.label for r in pipeline.gate_install(ctx, "canary", Arch.RISCV64, [install])] == ["gates"]
    shutil.copy(built / "amd64/canary/install/bin/canary-cli", install / "bin/canary-cli")
    rows = pipeline.gate_install(ctx, "canary", Arch.RISCV64, [install])
    assert any(r.verdict is Verdict.FAIL and "bin/canary-cli: x86-64, expected RISC-V" in r.reason for r in rows), rows
