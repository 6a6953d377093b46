"""The onnxruntime-genai lane for real (slow tier: ~10 minutes of clang on 2 cores with a cold ccache).

Skipped, with the command that fixes it, when the pinned sources are not staged: GitHub may be unreachable,
and staging is the user's step (`invoke sources`, from the network or CROSSLANE_GIT_MIRROR).
"""

from __future__ import annotations

import io
import subprocess
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from crosslane.archs import Arch, info
from crosslane.config import Config, PinnedSource
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane.sources import pinned

pytestmark = [pytest.mark.slow, pytest.mark.cross, pytest.mark.qemu]
COMPONENT = "onnxruntime-genai"


def unstaged(cfg: Config) -> list[str]:
    component = cfg.components[COMPONENT]
    source = component.sources[0]
    assert isinstance(source, PinnedSource)
    wanted: list[tuple[str, PinnedSource]] = [(COMPONENT, source)]
    wanted += [(f"{COMPONENT}+{dep}", specs[0]) for dep, specs in component.fetchcontent.items()]
    return [name for name, spec in wanted if pinned.cached(name, spec) is None]


@pytest.fixture(scope="module")
def built(cfg: Config, sysroots: dict[Arch, Path], session_build_dir: Path,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[Context, Path]:
    missing = unstaged(cfg)
    if missing:
        pytest.skip(f"not staged: {', '.join(missing)}; stage them: invoke sources --arch riscv64 "
                    f"--component {COMPONENT}")
    mp = pytest.MonkeyPatch()
    mp.setenv(pinned.OFFLINE_ENV, "1")  # staged means nothing is downloaded
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    rows = pipeline.build_components(ctx, Arch.RISCV64, [COMPONENT])
    mp.undo()
    failed = [r for r in rows if r.verdict is Verdict.FAIL]
    assert not failed, failed
    assert any(r.label == "gates" and r.verdict is Verdict.PASS for r in rows if r.component == COMPONENT), rows
    return ctx, session_build_dir / "riscv64" / COMPONENT


def test_a_repaired_wheel_per_cpython_built_for_riscv64(built: tuple[Context, Path]) -> None:
    _, folder = built
    wheels = sorted((folder / "install" / "dist").glob("*.whl"))
    assert [w.name for w in wheels] == [f"onnxruntime_genai-0.15.2-cp{v}-cp{v}-manylinux_2_39_riscv64.whl"
                                        for v in ("313", "314", "315")]
    for wheel, version in zip(wheels, ("313", "314", "315"), strict=True):
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            extension = next(n for n in names if n.endswith(f".cpython-{version}-riscv64-linux-gnu.so"))
            with archive.open(extension) as handle:
                elf = ELFFile(io.BytesIO(handle.read()))
            # The chain's ORT ships inside, with its closure grafted by auditwheel; no onnxruntime requirement.
            assert "onnxruntime_genai/libonnxruntime.so.1.23" in names
            assert any(n.startswith("onnxruntime_genai.libs/libonnx-") for n in names)
            metadata = archive.read("onnxruntime_genai-0.15.2.dist-info/METADATA").decode()
        assert "Requires-Dist: numpy" in metadata and "Requires-Dist: onnxruntime" not in metadata
        assert elf["e_machine"] == "EM_RISCV" and info(Arch.RISCV64).elf_machine == 243


def test_a_second_ninja_run_compiles_nothing(built: tuple[Context, Path]) -> None:
    """genai's CMake globs with CONFIGURE_DEPENDS, so ninja always re-checks the globs (a cheap step, and
    `ninja -n` cannot know it will find no change): the evidence is a real second run that compiles and
    links nothing."""
    ctx, folder = built
    again = subprocess.run([str(ctx.tools().ninja), "-C", str(folder / "wheels/cp314-linux_riscv64/build"), "-d",
                            "explain"],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-2000:]
    work = [line for line in again.stdout.splitlines() if "Building" in line or "Linking" in line]
    assert work == [], "\n".join(work[:10]) + again.stderr[-2000:]


def test_every_tier_passes_under_qemu(built: tuple[Context, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Tier 4 converts SmolLM2 on the host once (PyPI, ~4 minutes cold, then cached) and needs the target's
    greedy tokens to equal the host's."""
    ctx, _ = built
    monkeypatch.delenv("GENAI_MODEL_DIR", raising=False)
    rows = pipeline.smoke_components(ctx, Arch.RISCV64, [COMPONENT], "rvv128")
    steps = {r.label: r for r in rows}
    assert steps["install"].verdict is Verdict.PASS, rows
    reason = steps["genai@rvv128"].reason
    assert steps["genai@rvv128"].verdict is Verdict.PASS and "version=0.15.2" in reason, rows
    assert "16 tokens equal to the host reference" in reason
    installs = [r for r in rows if r.subject.startswith("wheel-install:") and r.arch is Arch.RISCV64]
    assert len(installs) == 3 and all(r.verdict is Verdict.PASS for r in installs), installs
    assert all("generate=16 tokens equal to the host reference" in r.reason for r in installs)
