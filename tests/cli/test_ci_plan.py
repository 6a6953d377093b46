"""CI as a product: the per-job plan from versions.toml, packed build outputs, the merged report, and the
workflow's cheap jobs run locally the way Actions runs them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

import actions_local
from crosslane.archs import Arch
from crosslane.cli import commands, matrix
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import ConfigError, UsageError
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.reports import summary
from crosslane.run import artifacts


def test_pull_requests_build_only_when_a_build_input_changed(cfg: Config) -> None:
    assert not matrix.plan(cfg, event="pull_request", changed=["README.md", "tests/test_x.py"]).run
    assert matrix.plan(cfg, event="pull_request", changed=["patches/onnxruntime-genai/001.patch"]).run
    assert matrix.plan(cfg, event="schedule").run and matrix.plan(cfg, event="push").run


def test_the_plan_adds_the_control_and_narrows_profiles_on_pull_requests(cfg: Config) -> None:
    nightly = matrix.plan(cfg, event="schedule", arch="riscv64", component="onnxruntime-genai")
    assert nightly.build == [{"arch": "riscv64", "component": "onnxruntime-genai", "toolchain": "clang"},
                             {"arch": "amd64", "component": "onnxruntime-genai", "toolchain": "clang"}]
    assert [s["profile"] for s in nightly.smoke] == [p.name for p in cfg.arches[Arch.RISCV64].profiles]
    pr = matrix.plan(cfg, event="pull_request", arch="riscv64", changed=["versions.toml"])
    assert pr.smoke == [{"arch": "riscv64", "profile": cfg.arches[Arch.RISCV64].default_profile}]
    cpuinfo = matrix.plan(cfg, arch="riscv64", component="cpuinfo")
    assert cpuinfo.build == [{"arch": "riscv64", "component": "cpuinfo", "toolchain": "clang"}]
    lines = dict(line.split("=", 1) for line in nightly.github_output().splitlines())
    assert lines["run"] == "true" and json.loads(lines["build"])["include"] == nightly.build
    assert json.loads(lines["baremetal"]) == {"include": []}  # a narrowed plan names no bare-metal target
    whole = dict(line.split("=", 1) for line in matrix.plan(cfg, event="schedule").github_output().splitlines())
    assert json.loads(whole["baremetal"])["include"] == [{"target": name} for name in cfg.baremetal]
    with pytest.raises(UsageError, match="unknown arch 'sparc'"):
        matrix.plan(cfg, arch="sparc")


def test_upstream_suites_are_one_job_per_profile_and_one_profile_on_pull_requests(cfg: Config) -> None:
    nightly = matrix.plan(cfg, event="schedule", arch="riscv64")
    jobs = {(j["component"], j["profile"]) for j in nightly.upstream}
    assert ("cpuinfo", "novector") in jobs and ("cpuinfo", "rvv512") in jobs
    assert ("xnnpack", "rvv256") in jobs and ("xnnpack", "novector") not in jobs  # the suite's own profiles
    assert ("xnnpack-novector", "novector") in jobs and ("onnxruntime-genai", "rvv128") in jobs
    pr = matrix.plan(cfg, event="pull_request", arch="riscv64", changed=["versions.toml"])
    assert {(j["component"], j["profile"]) for j in pr.upstream} == {
        ("cpuinfo", "rvv128"), ("onnxruntime-src", "rvv128"), ("onnxruntime-genai", "rvv128"), ("xnnpack", "rvv128"),
        ("xnnpack-novector", "novector"), ("executorch-portable", "rvv128")}
    lines = dict(line.split("=", 1) for line in pr.github_output().splitlines())
    assert json.loads(lines["upstream"])["include"] == pr.upstream
    assert matrix.plan(cfg, arch="riscv64", component="canary").upstream == []


def built_component(ctx: Context, arch: Arch, name: str, outside: Path) -> Path:
    folder = ctx.component_dir(arch, name)
    (folder / "install" / "lib").mkdir(parents=True)
    (folder / "install" / "lib" / "libx.so").write_bytes(b"\x7fELF x")
    (folder / "install" / "lib" / "libx.so.1").symlink_to("libx.so")
    (folder / "install" / "sysroot-include").symlink_to(outside)
    (folder / ".crosslane-stamp.json").write_text(json.dumps({"key": "k", "inputs": {}}))
    return folder


def test_pack_then_unpack_restores_the_component(cfg: Config, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    folder = built_component(ctx, Arch.RISCV64, "cpuinfo", tmp_path)
    packed = tmp_path / "out" / "riscv64-cpuinfo.tar.gz"
    [row] = artifacts.pack(ctx, Arch.RISCV64, "cpuinfo", packed)
    assert row.verdict is Verdict.PASS and "1 links into the sysroot left out" in row.reason
    import shutil
    shutil.rmtree(folder)
    rows = artifacts.unpack(ctx, packed)
    assert rows[0].label == "unpack" and (folder / "install/lib/libx.so").read_bytes() == b"\x7fELF x"
    assert (folder / "install/lib/libx.so.1").is_symlink() and (folder / ".crosslane-stamp.json").is_file()
    assert not (folder / "install/sysroot-include").exists()


def test_unpack_refuses_what_is_not_a_pack(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    hostile = tmp_path / "hostile.tar.gz"
    with tarfile.open(hostile, "w:gz") as tar:
        data = b"x"
        info = tarfile.TarInfo("crosslane-pack/../../escape")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ConfigError, match="not a crosslane pack"):
        artifacts.unpack(ctx, hostile)
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        info = tarfile.TarInfo("crosslane-pack/readme")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(ConfigError, match="not a crosslane pack"):
        artifacts.unpack(ctx, plain)
    with pytest.raises(UsageError, match="not built"):
        artifacts.pack(ctx, Arch.RISCV64, "canary", tmp_path / "x.tar.gz")


def test_reports_merge_into_json_and_markdown(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo)
    one = [Row(component="canary", arch=Arch.RISCV64, check=Check.BUILD, verdict=Verdict.PASS, reason="built")]
    two = [Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.FAIL, reason="no sentinel",
               subject="cli", profile="rvv128"), *one]
    summary.write_json(one, tmp_path / "in" / "build-riscv64-canary" / "build.json")
    summary.write_json(two, tmp_path / "in" / "smoke-riscv64-rvv128" / "smoke.json")
    (tmp_path / "in" / "other.json").write_text('{"not": "a report"}')
    facts = {"generated": "2026-11-30T00:00:00Z", "sysroots": {"riscv64": {"suite": "forky", "key": "abc",
                                                                          "versions": {"libc6": "2.43-7"}}},
             "components": [{"component": "canary", "arch": "riscv64", "source": "tree:x", "seconds": 3.5,
                             "ccache": {"hits": 7, "misses": 1}, "patches": []}], "rows": [],
             "asserted": [{"what": "cases.m: x not run (a)", "reason": "needs weights"}]}
    (tmp_path / "in" / "build-riscv64-canary" / "report-riscv64.json").write_text(json.dumps(facts))
    # a second job's report asserts the same claim: the merge keeps it once
    (tmp_path / "in" / "smoke-riscv64-rvv128" / "report-riscv64.json").write_text(json.dumps(facts))
    code = commands.merge_reports(tmp_path / "in", tmp_path / "out" / "report")
    assert code == 1  # the merged report carries the smoke's failure
    merged = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [Row.from_dict(r) for r in merged["rows"]] == [one[0], two[0]] and merged["jobs"] == 2
    from crosslane.policy import floors
    assert floors.load_report(tmp_path / "out" / "report.json") == [one[0], two[0]]  # the report job's --check
    text = (tmp_path / "out" / "report.md").read_text()
    assert "2 job reports, 2 rows" in text and "| smoke | 0 | 1 | 0 |" in text and "| build | 1 | 0 | 0 |" in text
    assert "| canary | riscv64 | tree x… | — | — | 3.5 | 7 hit / 1 miss |" in text
    assert "| riscv64 | forky | abc | libc6 2.43-7 |" in text
    assert merged["asserted"] == [{"what": "cases.m: x not run (a)", "reason": "needs weights"}]
    assert "- cases.m: x not run (a): needs weights" in text


def steps_of(workflow: dict[str, object], job: str) -> list[dict[str, object]]:
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    steps = jobs[job]["steps"]
    assert isinstance(steps, list)
    return steps


def test_the_workflow_is_pinned_and_passes_values_through_env(repo: Path) -> None:
    workflow = yaml.safe_load((repo / ".github/workflows/ci.yml").read_text())
    for job in workflow["jobs"]:
        for step in steps_of(workflow, job):
            uses = step.get("uses")
            if isinstance(uses, str):
                assert len(uses.split("@", 1)[1]) == 40, f"{job}: {uses} is not pinned to a commit"
            run = step.get("run")
            assert not (isinstance(run, str) and "${{" in run), f"{job}: expression expanded inside run:"


@pytest.fixture(scope="module")
def setup_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What actions/setup-python leaves first on PATH: a clean CPython 3.11 with pip, nothing else installed."""
    folder = tmp_path_factory.mktemp("setup-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True, timeout=120)
    subprocess.run([folder / "bin" / "python", "-m", "ensurepip", "--default-pip"], check=True, timeout=300,
                   capture_output=True)
    return folder / "bin"


@pytest.mark.spawns
@pytest.mark.network
def test_the_plan_job_runs_in_a_clean_clone_as_actions_would(repo: Path, tmp_path: Path,
                                                              setup_python: Path) -> None:
    """Every run: step of the plan job (pip install of crosslane from the clone included), for a nightly run."""
    context = {"github": {"event_name": "schedule"}, "inputs": {"arch": "", "component": ""}}
    done, _ = actions_local.run_in_clean_clone(repo, "plan", tmp_path / "workspace", context, path_first=setup_python)
    plan = done.outputs["plan"]
    assert plan["run"] == "true"
    build = json.loads(plan["build"])["include"]
    assert {"arch": "riscv64", "component": "onnxruntime-genai", "toolchain": "clang"} in build
    assert {"arch": "arm64", "component": "executorch-xnnpack", "toolchain": "clang"} in build
    assert {"arch": "riscv64", "profile": "rvv512"} in json.loads(plan["smoke"])["include"]
    upstream = json.loads(plan["upstream"])["include"]
    assert {"arch": "riscv64", "component": "xnnpack", "profile": "rvv512", "toolchain": "clang"} in upstream


@pytest.mark.spawns
@pytest.mark.network
def test_the_lint_job_runs_in_a_clean_clone_as_actions_would(repo: Path, tmp_path: Path,
                                                             setup_python: Path) -> None:
    """The lint job's steps (pip install nox; nox -s lint: ruff, mypy, consistency, zizmor, the schema check)."""
    done, _ = actions_local.run_in_clean_clone(repo, "lint", tmp_path / "workspace", {}, path_first=setup_python)
    log = "\n".join(done.logs)
    assert "Session lint was successful" in log
    assert "No findings to report" in log


def test_expressions_resolve_as_actions_would() -> None:
    context = {"matrix": {"arch": "riscv64"}, "github": {"event": {"pull_request": {"base": {"sha": "abc"}}}}}
    assert actions_local.resolve("${{ matrix.arch }}-${{ github.event.pull_request.base.sha }}", context) == \
        "riscv64-abc"
    assert actions_local.resolve("${{ inputs.arch }}|${{ matrix.missing }}", context) == "|"


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize(("arch", "component"), [("riscv64", "cpuinfo"), ("arm64", "canary")])
def test_the_build_job_runs_in_a_clean_clone_as_actions_would(repo: Path, tmp_path: Path, setup_python: Path,
                                                              arch: str, component: str) -> None:
    """The build job's steps with the cache folder warm (sysroots, sources, tools): setup, sysroot, build, pack."""
    context = {"github": {"event_name": "schedule"}, "matrix": {"arch": arch, "component": component}}
    _, clone = actions_local.run_in_clean_clone(repo, "build", tmp_path / "workspace", context,
                                                path_first=setup_python)
    packed = clone / "artifacts" / "packs" / f"{arch}-{component}.tar.gz"  # as the build job packs it
    with tarfile.open(packed) as archive:
        names = archive.getnames()
    assert f"crosslane-pack/{arch}/{component}/.crosslane-stamp.json" in names
    assert any(name.startswith(f"crosslane-pack/{arch}/{component}/install/") for name in names)
    rows = json.loads((clone / "build" / "reports" / f"build-{arch}-{component}.json").read_text())
    steps = {(row["component"], row["check"]): row["verdict"] for row in rows}
    assert steps[(component, "build")] == "PASS" and "FAIL" not in steps.values(), rows


def test_ci_matrix_is_derived_from_versions_toml(cfg: object, repo: Path) -> None:
    from crosslane.cli import matrix
    from crosslane.config import Config

    assert isinstance(cfg, Config)
    nightly = matrix.plan(cfg, event="schedule")
    assert sorted({row["arch"] for row in nightly.build}) == sorted(a.value for a in cfg.arches)
    riscv = [row["profile"] for row in nightly.smoke if row["arch"] == "riscv64"]
    assert riscv == ["novector", "rvv128", "rvv256", "rvv512"]
    workflow = (repo / ".github/workflows/ci.yml").read_text()
    assert 'invoke matrix --event "$EVENT"' in workflow and '>> "$GITHUB_OUTPUT"' in workflow
    assert "fromJSON(needs.plan.outputs.build)" in workflow and "fromJSON(needs.plan.outputs.smoke)" in workflow
    assert "riscv64" not in workflow, "the workflow must not list arches by hand"
