"""The run plan: resolved once, purely, from versions.toml and the request; `invoke all --dry-run` shows it and
writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.config import Config
from crosslane.errors import UsageError
from crosslane.run import plan
from crosslane_helpers import REPO


def test_the_arch_job_plans_the_control_for_compared_smokes(cfg: Config) -> None:
    job = plan.for_arch(cfg, Arch.RISCV64, environ={})
    assert job.arches == (Arch.RISCV64, Arch.AMD64)
    assert job.builds[Arch.RISCV64] == cfg.build_order(cfg.arches[Arch.RISCV64].components)
    assert job.builds[Arch.AMD64] == ("canary", "onnxruntime", "onnxruntime-genai")
    assert job.smokes == job.builds[Arch.RISCV64] and job.whole_arch and job.setup_components is None
    assert [p.name for p in job.profiles] == ["novector", "rvv128", "rvv256", "rvv512"]
    assert all(state.enabled for state in job.lanes.values())


def test_the_control_builds_right_after_what_it_compares_so_those_smokes_start_early(cfg: Config) -> None:
    job = plan.for_arch(cfg, Arch.RISCV64, environ={})
    own = job.builds[Arch.RISCV64]
    cut = own.index("onnxruntime-genai") + 1  # the last riscv64 build the control also makes
    assert job.steps() == ((Arch.RISCV64, own[:cut]), (Arch.AMD64, job.builds[Arch.AMD64]),
                           (Arch.RISCV64, own[cut:]))
    assert job.needs("onnxruntime-genai") == {Arch.RISCV64: frozenset(own[:cut]),
                                              Arch.AMD64: frozenset(job.builds[Arch.AMD64])}
    assert job.needs("cpuinfo") == {Arch.RISCV64: frozenset(own[:own.index("cpuinfo") + 1])}
    alone = plan.for_arch(cfg, Arch.RISCV64, ["cpuinfo"], environ={})
    assert alone.steps() == ((Arch.RISCV64, alone.builds[Arch.RISCV64]),)
    assert plan.for_smoke(cfg, Arch.RISCV64, ["cpuinfo"]).steps() == ()


def test_a_component_job_builds_what_it_needs_and_smokes_only_it(cfg: Config) -> None:
    job = plan.for_arch(cfg, Arch.RISCV64, ["onnxruntime-genai"], environ={})
    # On riscv64 genai's ONNX Runtime is onnxruntime-src's (providers); the control keeps Debian's.
    assert job.builds[Arch.RISCV64] == ("onnxruntime-src", "onnxruntime-genai")
    assert job.builds[Arch.AMD64] == ("onnxruntime", "onnxruntime-genai")
    assert job.smokes == ("onnxruntime-genai",) and not job.whole_arch
    no_control = plan.for_arch(cfg, Arch.RISCV64, ["cpuinfo"], environ={})
    assert no_control.arches == (Arch.RISCV64,)


def test_lanes_are_resolved_once_into_the_plan(cfg: Config) -> None:
    environ = {"CROSSLANE_LANE_ONNXRUNTIME_SRC_RISCV64": "0"}
    job = plan.for_arch(cfg, Arch.RISCV64, ["onnxruntime-genai"], environ=environ)
    assert not job.lane("onnxruntime-src", Arch.RISCV64).enabled
    genai = job.lane("onnxruntime-genai", Arch.RISCV64)  # its ONNX Runtime there is onnxruntime-src's (providers)
    assert not genai.enabled and genai.setting == "dependency onnxruntime-src: CROSSLANE_LANE_ONNXRUNTIME_SRC_RISCV64=0"
    assert job.lane("onnxruntime-genai", Arch.AMD64).enabled  # the override names one arch
    assert "lane off: onnxruntime-genai on riscv64 by dependency onnxruntime-src" in "\n".join(job.describe())


def test_a_plan_for_what_an_arch_does_not_build_is_a_usage_error(cfg: Config) -> None:
    with pytest.raises(UsageError, match="unknown component 'canry'"):  # before anything reads the name
        plan.for_arch(cfg, Arch.RISCV64, ["canry"], environ={})
    with pytest.raises(UsageError, match="component 'executorch-xnnpack-novector' is not built for arm64"):
        plan.for_arch(cfg, Arch.ARM64, ["executorch-xnnpack-novector"], environ={})
    with pytest.raises(UsageError, match="unknown CPU profile 'rvv64'"):
        plan.for_smoke(cfg, Arch.RISCV64, ["canary"], "rvv64", environ={})


def listing(root: Path) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            stat = (Path(folder) / name).lstat()
            found[str((Path(folder) / name).relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.spawns  # the plan asks dpkg-query which host packages setup would install
@pytest.mark.parametrize("arch", list(Arch), ids=lambda a: a.value)
def test_all_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], arch: Arch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "build").mkdir()
    (tmp_path / "cache").mkdir()
    before = listing(tmp_path)
    from crosslane.run import pipeline

    code = commands.run(lambda ctx: pipeline.run_arch(ctx, arch, smokes="after"), dry_run=True,
                        config_path=str(REPO / "versions.toml"))
    assert code == 0
    err = capsys.readouterr().err
    assert f"plan: build {arch}: canary" in err and f"plan: smoke {arch} on" in err
    assert "plan: smokes once every build ended" in err
    assert listing(tmp_path) == before


def test_the_tests_plan_builds_what_the_suites_need_and_names_their_profiles(cfg: Config) -> None:
    from crosslane.suites import stage

    job = plan.for_tests(cfg, Arch.RISCV64, ["onnxruntime-genai"])
    assert job.builds[Arch.RISCV64] == ("onnxruntime-src", "onnxruntime-genai")
    assert job.builds[Arch.AMD64] == ("onnxruntime", "onnxruntime-genai")  # the control, for the parity rows
    xnnpack = plan.for_tests(cfg, Arch.RISCV64, ["xnnpack"])
    assert Arch.AMD64 not in xnnpack.builds  # control = false
    assert stage.describe(cfg, Arch.RISCV64, xnnpack.smokes, xnnpack.profiles) == [
        "upstream tests xnnpack (ctest) on riscv64 rvv128, rvv256, rvv512"]
    assert set(plan.for_tests(cfg, Arch.RISCV64).smokes) >= {"cpuinfo", "xnnpack", "onnxruntime-genai"}
    with pytest.raises(UsageError, match="canary declares no upstream tests for riscv64"):
        plan.for_tests(cfg, Arch.RISCV64, ["canary"])


def test_a_cpu_a_named_smoke_does_not_run_on_is_a_usage_error(cfg: Config) -> None:
    """`invoke smoke --cpu novector` for a smoke whose `profiles` leave novector out ran nothing and passed."""
    with pytest.raises(UsageError) as raised:
        plan.for_smoke(cfg, Arch.RISCV64, ["executorch-xnnpack"], "novector", environ={})
    assert raised.value.exit_code == 2
    assert raised.value.one_line() == (
        "--cpu novector selects no smoke to run on riscv64: executorch-xnnpack's smoke runs on rvv128, rvv256, rvv512 "
        "only (versions.toml components.executorch-xnnpack.smoke.profiles); pass --cpu with a profile the smoke "
        "lists, or no --cpu for all of them")
    chosen = plan.for_smoke(cfg, Arch.RISCV64, ["executorch-xnnpack"], "rvv256", environ={})
    assert [p.name for p in chosen.profiles_of("executorch-xnnpack")] == ["rvv256"]


def test_the_plan_lists_the_profiles_each_smoke_runs_on(cfg: Config) -> None:
    lines = [line for line in plan.for_arch(cfg, Arch.RISCV64, environ={}).describe() if line.startswith("smoke")]
    assert lines[1:] == ["smoke riscv64 on rvv128, rvv256, rvv512: executorch-xnnpack",
                         "smoke riscv64 on novector: executorch-xnnpack-novector"], lines
    assert lines[0].startswith("smoke riscv64 on novector, rvv128, rvv256, rvv512: canary, ")
    assert "executorch-xnnpack" not in lines[0].split(": ", 1)[1].split(", ")


def test_a_smoke_the_cpu_leaves_out_of_a_whole_arch_run_is_skipped_with_why(
        cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No component named: the others run on novector, the excluded one is a SKIP row saying why, not silence."""
    import io

    from crosslane.context import Context
    from crosslane.log import Log
    from crosslane.process.runner import Runner
    from crosslane.report import Verdict
    from crosslane.run import pipeline

    job = plan.for_smoke(cfg, Arch.RISCV64, [], "novector", environ={})
    assert job.profiles_of("executorch-xnnpack") == ()
    assert "smoke riscv64 on no profile of this run (skipped): executorch-xnnpack" in job.describe()
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    (ctx.component_dir(Arch.RISCV64, "executorch-xnnpack") / "install").mkdir(parents=True)
    [row] = pipeline.smoke_one(ctx, job, "executorch-xnnpack")
    assert row.verdict is Verdict.SKIP
    assert row.reason == ("executorch-xnnpack's smoke runs on rvv128, rvv256, rvv512 only (versions.toml "
                          "components.executorch-xnnpack.smoke.profiles); this run's profiles: novector")
    with pytest.raises(UsageError, match="executorch-xnnpack-novector's smoke runs on novector only"):
        plan.for_smoke(cfg, Arch.RISCV64, ["executorch-xnnpack-novector", "executorch-xnnpack"], "rvv128",
                       environ={})
