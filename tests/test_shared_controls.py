"""Shared controls (controls.py), on the repository's versions.toml with variants added: a variant whose amd64 build
and control test build are its base's uses the base's control, built once; one that changes anything amd64 builds,
or its suite as the control runs it, keeps its own. The run plans, the CI matrix and the suite's plan follow."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from crosslane import config, contract
from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.cli import matrix
from crosslane.config import Profile, controls
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Verdict
from crosslane.run import plan
from crosslane.suites import SuiteCases, outcome, stage
from crosslane.suites.junit import Case, Outcome
from crosslane_helpers import REPO

OURS = (REPO / "versions.toml").read_text(encoding="utf-8")
EXEMPT = ('[components.onnxruntime-genai-v.tests]\n'
          'exempt.{arch} = {{ "test_config" = "fails under qemu-{arch}, measured twice" }}')

# ExecuTorch's runner with another riscv64 compiler, kept on every arch with its suite (on the control too).
EXECUTORCH_GCC = """
[components.executorch-portable-gcc2]
extends = "executorch-portable"
job = false
toolchain = { riscv64 = "gcc-forky" }
"""


def ours_with(extra: str) -> config.Config:
    return config.parse(OURS + extra, REPO / "versions.toml", REPO)


def genai_variant(extra: str) -> config.Config:
    """onnxruntime-genai-v: onnxruntime-genai with *extra* (its smoke and suite compare with the control)."""
    return ours_with(f'\n[components.onnxruntime-genai-v]\nextends = "onnxruntime-genai"\njob = false\n{extra}')


def test_the_repositorys_components_each_build_their_own_control() -> None:
    cfg = ours_with("")
    assert controls.shared(cfg, list(cfg.components)) == {}


@pytest.mark.parametrize(("extra", "shared"), [
    pytest.param('toolchain = { riscv64 = "gcc" }', "onnxruntime-genai", id="riscv64-toolchain-only"),
    pytest.param('arch_cmake_args = { riscv64 = ["-DX=1"] }\n[components.onnxruntime-genai-v.wheel]\n'
                 'pythons = ["3.13", "3.14", "3.15"]', "onnxruntime-genai", id="riscv64-entries-only"),
    pytest.param('[components.onnxruntime-genai-v.smoke]\ntimeout = 900', "onnxruntime-genai", id="smoke-only"),
    pytest.param('arch_cmake_args = { amd64 = ["-DX=1"] }', "onnxruntime-genai-v", id="amd64-arguments"),
    # The amd64 stamp lists every patch of the series (a riscv64-only one as NOT-FOR-ARCH): another series is
    # another amd64 stamp, though amd64 applies none of it.
    pytest.param('patches = []', "onnxruntime-genai-v", id="another-patch-series"),
    pytest.param('toolchain = { amd64 = "gcc" }', "onnxruntime-genai-v", id="amd64-toolchain"),
    pytest.param('cmake_args = ["-DUSE_CUDA=OFF"]', "onnxruntime-genai-v", id="every-arch-arguments"),
    pytest.param('[components.onnxruntime-genai-v.tests]\ntimeout = 900', "onnxruntime-genai-v",
                 id="the-control-suite"),
    pytest.param(EXEMPT.format(arch="amd64"), "onnxruntime-genai-v",
                 id="the-control-exemptions"),
    pytest.param(EXEMPT.format(arch="riscv64"), "onnxruntime-genai",
                 id="riscv64-exemptions-only"),
])
def test_a_variant_uses_its_bases_control_only_when_amd64_builds_the_same(extra: str, shared: str) -> None:
    assert controls.shared_with(genai_variant(extra), "onnxruntime-genai-v") == shared


def test_the_main_jobs_control_builds_a_twin_once_and_its_smoke_waits_for_it() -> None:
    cfg = genai_variant('toolchain = { riscv64 = "gcc" }')
    job = plan.for_arch(cfg, Arch.RISCV64, ["onnxruntime-genai", "onnxruntime-genai-v"])
    assert job.builds[CONTROL_ARCH] == ("onnxruntime", "onnxruntime-genai")
    assert job.control_of("onnxruntime-genai-v") == "onnxruntime-genai"
    assert "onnxruntime-genai" in job.needs("onnxruntime-genai-v")[CONTROL_ARCH]
    assert "control of onnxruntime-genai-v: onnxruntime-genai's (the same amd64 build)" in job.describe()
    alone = plan.for_arch(cfg, Arch.RISCV64, ["onnxruntime-genai-v"])
    assert alone.builds[CONTROL_ARCH] == ("onnxruntime", "onnxruntime-genai")
    legs = matrix.plan(cfg, component="onnxruntime-genai-v").build
    assert {leg["component"] for leg in legs if leg["arch"] == "amd64"} == {"onnxruntime-genai"}


def test_an_executorch_runner_with_another_riscv64_compiler_tests_on_its_bases_control() -> None:
    cfg = ours_with(EXECUTORCH_GCC)
    job = plan.for_tests(cfg, Arch.RISCV64, ["executorch-portable-gcc2"])
    assert job.builds[CONTROL_ARCH] == ("executorch-portable",)
    assert job.builds[Arch.RISCV64] == ("executorch-portable-gcc2",)
    lines = stage.describe(cfg, Arch.RISCV64, ["executorch-portable-gcc2"], job.profiles)
    assert lines[0].endswith("and the amd64 control (executorch-portable's)"), lines
    both = plan.for_tests(cfg, Arch.RISCV64, ["executorch-portable", "executorch-portable-gcc2"])
    assert both.builds[CONTROL_ARCH] == ("executorch-portable",)


def test_the_riscv64_main_jobs_plan_is_unchanged_by_a_twin_built_when_named() -> None:
    before = plan.for_arch(ours_with(""), Arch.RISCV64)
    after = plan.for_arch(ours_with(EXECUTORCH_GCC), Arch.RISCV64)
    assert after.describe() == before.describe()


def test_variants_sharing_a_control_test_build_share_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite itself is a stand-in here (what it runs is the suites' tests' business): the control's runs are
    counted."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    cfg = ours_with(EXECUTORCH_GCC)
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profiles = [p for p in cfg.arches[Arch.RISCV64].profiles if p.name in ("novector", "rvv128")]
    ran: list[tuple[Arch, str]] = []

    def suite(ctx: Context, arch: Arch, name: str, chosen: Sequence[Profile]) -> contract.Outcome[SuiteCases]:
        ran.append((arch, name))
        return outcome(cases={p.name: (Case("op_add.works", Outcome.PASSED, 0.1, ""),) for p in chosen})

    monkeypatch.setattr(stage, "suite", suite)
    rows = stage.run(ctx, Arch.RISCV64, ["executorch-portable", "executorch-portable-gcc2"], profiles)
    assert [each for each in ran if each[0] is CONTROL_ARCH] == [(CONTROL_ARCH, "executorch-portable")]
    parity = [(r.component, r.profile, r.verdict) for r in rows if r.check is Check.PARITY]
    assert parity == [(name, p.name, Verdict.PASS) for name in ("executorch-portable", "executorch-portable-gcc2")
                      for p in profiles], rows
