"""cpuinfo: the isa-info smoke's expectations, and (integration) the real component built and smoked."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config, Profile
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.registry import SMOKES
from crosslane.run import pipeline
from crosslane.smokes import cpuinfo

RISCV = "Instruction sets:\n\tBase Integer: yes\n\tCompressed: yes\n\tVector: {v}\n"
X86 = "Scalar instructions:\n\tLAHF/SAHF: yes\n\tPOPCNT: yes\nSIMD extensions:\n\tSSE: yes\n"
ARM = "Instruction sets:\n\tAES: yes\n\tSHA1: yes\n"
NOVECTOR = Profile("novector", "rv64,v=false")
RVV = Profile("rvv128", "rv64,v=true,vlen=128")
MAX = Profile("max", "max")


@pytest.mark.parametrize(("output", "arch", "profile", "ok"), [
    pytest.param(RISCV.format(v="yes"), Arch.RISCV64, RVV, True, id="riscv-vector-yes"),
    pytest.param(RISCV.format(v="no"), Arch.RISCV64, NOVECTOR, True, id="riscv-vector-no"),
    pytest.param(RISCV.format(v="no"), Arch.RISCV64, RVV, False, id="riscv-silent-scalar-fallback"),
    pytest.param(RISCV.format(v="yes"), Arch.RISCV64, NOVECTOR, False, id="riscv-vector-claimed-without-v"),
    pytest.param("Instruction sets:\n\tBase Integer: yes\n", Arch.RISCV64, RVV, False, id="riscv-no-vector-line"),
    pytest.param(X86, Arch.AMD64, MAX, True, id="amd64-table"),
    pytest.param(ARM, Arch.ARM64, MAX, True, id="arm64-table"),
    pytest.param("", Arch.ARM64, MAX, False, id="arm64-empty"),
    pytest.param("Instruction sets:\n", Arch.ARM64, MAX, False, id="heading-without-features"),
])
def test_isa_info_expectations(output: str, arch: Arch, profile: Profile, ok: bool) -> None:
    assert (cpuinfo.check(output, arch, profile) == []) is ok


def test_smoke_kind_is_registered_and_used_by_versions_toml(cfg: Config) -> None:
    spec = cfg.components["cpuinfo"].smoke
    assert spec is not None and SMOKES.load(spec.kind) is cpuinfo.run
    assert "cpuinfo" in cfg.arches[Arch.RISCV64].components and "cpuinfo" in cfg.arches[Arch.ARM64].components
    assert all("onnxruntime-genai" in cfg.arches[a].components for a in (Arch.RISCV64, Arch.ARM64))


@pytest.mark.cross
@pytest.mark.qemu
@pytest.mark.network
@pytest.mark.parametrize("arch", [Arch.RISCV64, Arch.ARM64], ids=lambda a: a.value)
def test_cpuinfo_builds_and_passes_isa_info_on_every_profile(cfg: Config, sysroots: dict[Arch, Path],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             arch: Arch) -> None:
    """Fetched from its pinned source or mirror (Debian's orig tarball without GitHub), cross-built, smoked."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log()))
    built = pipeline.build_components(ctx, arch, ["cpuinfo"])
    assert [r.label for r in built] == ["source", "build", "gates"]
    assert all(r.verdict.value == "PASS" for r in built), built
    rows = pipeline.smoke_components(ctx, arch, ["cpuinfo"])
    assert len(rows) == len(cfg.arches[arch].profiles)
    assert all(r.verdict.value == "PASS" for r in rows), rows
    if arch is Arch.RISCV64:
        reasons = {r.label: r.reason for r in rows}
        assert reasons["isa-info@novector"].endswith("Vector: no")
        # cpuinfo detects the vector unit and uses none: the row says the sweep ran scalar code (gates/vector_code)
        assert reasons["isa-info@rvv256"].endswith("Vector: yes; no RVV instruction in its 3 ELF files: every "
                                                   "profile runs the same scalar code, so the VLEN sweep shows only "
                                                   "that it runs")
