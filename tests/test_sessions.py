"""Nox sessions per arch × component: the plan, what nox really lists, the lint, and what a session runs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import cfgkit
from crosslane import sessions
from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.policy import consistency
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.run import pipeline
from crosslane.run.plan import RunPlan

COMPONENTS = """
[components.a]
source = { kind = "tree", path = "components/canary" }
arches = ["amd64", "riscv64"]
[components.b]
source = { kind = "tree", path = "components/canary" }
arches = ["riscv64"]
"""


def test_plan_follows_each_components_arches(tmp_path: Path) -> None:
    planned = sessions.plan(cfgkit.make(tmp_path, COMPONENTS))
    names = [s.name for s in planned if s.component in (None, "a", "b")]
    assert names == ["build-amd64", "smoke-amd64", "build-amd64-a", "smoke-amd64-a", "repro-amd64-a",
                     "build-arm64", "smoke-arm64",
                     "build-riscv64", "smoke-riscv64", "build-riscv64-a", "smoke-riscv64-a", "repro-riscv64-a",
                     "build-riscv64-b", "smoke-riscv64-b", "repro-riscv64-b"]
    one = next(s for s in planned if s.name == "build-riscv64-b")
    assert one.tags == ("riscv64", "b", "build")
    assert one.invoke_args() == ["all", "--arch", "riscv64", "--component", "b"]
    assert "riscv64" in one.doc and "b" in one.doc


def test_a_component_with_upstream_tests_gets_a_tests_session_per_arch_it_lists(tmp_path: Path) -> None:
    cfg = cfgkit.make(tmp_path, COMPONENTS.replace('arches = ["riscv64"]\n', 'arches = ["riscv64"]\n'
                                                   '[components.b.tests]\nkind = "ctest"\n') + """
[components.c]
extends = "b"
arches = ["riscv64", "amd64"]
""")
    tests = [s for s in sessions.plan(cfg) if s.action == "tests"]
    assert [s.name for s in tests] == ["tests-amd64-c", "tests-riscv64-b", "tests-riscv64-c"]
    assert tests[1].invoke_args() == ["upstream-tests", "--arch", "riscv64", "--component", "b"]


@pytest.mark.parametrize(("text", "said"), [
    pytest.param("[tools\n", "versions.toml", id="not-toml"),
    pytest.param(None, "components.genai.arche: unknown key; did you mean 'arches'?", id="unknown-key"),
])
def test_a_refused_file_lists_the_arch_sessions_and_says_why(tmp_path: Path, text: str | None, said: str) -> None:
    """nox still lists build-/smoke-<arch> for every known arch (their `invoke` names the error again), and the
    noxfile says the refusal in one line instead of a traceback."""
    path = tmp_path / "versions.toml"
    if text is None:
        cfgkit.make(tmp_path)
        path.write_text(path.read_text().replace('arches = ["amd64", "arm64", "riscv64"]\ndistribution',
                                                 'arche = ["amd64", "arm64", "riscv64"]\ndistribution'))
    else:
        path.write_text(text)
    planned, refused = sessions.listed(path)
    assert [s.name for s in planned] == [f"{step}-{arch.value}" for arch in Arch for step in ("build", "smoke")]
    assert said in refused and "\n" not in refused


@pytest.mark.spawns
def test_nox_lists_the_arch_sessions_of_a_refused_file(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text((repo / "noxfile.py").read_text())
    (tmp_path / "scripts").symlink_to(repo / "scripts")
    (tmp_path / "versions.toml").write_text("[tools\n")
    listed = subprocess.run([sys.executable, "-m", "nox", "-f", str(tmp_path / "noxfile.py"), "-l"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "build-riscv64" in listed.stdout and "Traceback" not in listed.stderr
    assert "versions.toml is refused, so only the arch sessions are listed" in listed.stderr


@pytest.mark.spawns
def test_nox_lists_the_riscv64_sessions_by_tag(repo: Path, cfg: Config) -> None:
    listed = subprocess.run([sys.executable, "-m", "nox", "-f", str(repo / "noxfile.py"), "-t", "riscv64", "-l",
                             "--json"], capture_output=True, text=True, timeout=120, check=True)
    names = {entry["session"] for entry in json.loads(listed.stdout)}
    riscv64 = [n for n, c in cfg.components.items() if Arch.RISCV64 in c.arches]
    per_component = {f"{kind}-riscv64-{name}" for name in riscv64 for kind in ("build", "smoke")}
    per_component |= {f"repro-riscv64-{name}" for name in riscv64 if cfg.components[name].recipe != "provided"}
    upstream = {f"tests-riscv64-{name}" for name in riscv64 if cfg.components[name].tests is not None}
    assert upstream and names == {"build-riscv64", "smoke-riscv64"} | per_component | upstream


@pytest.mark.spawns
def test_consistency_finds_missing_and_extra_sessions(cfg: Config, tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(
        "import nox\n"
        "@nox.session(name='build-riscv64')\ndef a(session): pass\n"
        "@nox.session(name='build-riscv64-nothing')\ndef b(session): pass\n")
    found = {f.found for f in consistency.session_findings(cfg, tmp_path)}
    assert "session build-riscv64-nothing" in found
    assert "no session build-riscv64-cpuinfo" in found and "no session smoke-riscv64" in found


@pytest.mark.spawns
def test_consistency_accepts_the_repository_noxfile(cfg: Config, repo: Path) -> None:
    assert consistency.session_findings(cfg, repo) == []


def recording(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, tuple[str, ...]]]:
    calls: list[tuple[str, str, tuple[str, ...]]] = []
    lock = threading.Lock()  # smokes are recorded from the thread they run in beside the builds

    def setup(ctx: Context, arches: tuple[Arch, ...], components: tuple[str, ...] | None = None) -> list[Row]:
        calls.append(("setup", ",".join(arches), tuple(components or ())))
        return []

    def sysroots(ctx: Context, arches: tuple[Arch, ...]) -> list[Row]:
        calls.append(("sysroots", ",".join(arches), ()))
        return []

    def build(ctx: Context, job: RunPlan, arch: Arch, names: tuple[str, ...] | None = None,
              on_built: pipeline.OnBuilt | None = None, **kw: object) -> list[Row]:
        names = names if names is not None else job.builds[arch]
        with lock:
            calls.append(("build", arch.value, names))
        for name in names:
            if on_built:
                on_built(arch, name, True)
        return [Row(component=n, arch=arch, check=Check.BUILD, verdict=Verdict.PASS, reason="") for n in names]

    def smoke_one(ctx: Context, job: RunPlan, name: str) -> list[Row]:
        with lock:
            calls.append(("smoke", job.arch.value, (name,)))
        return []

    monkeypatch.setattr(pipeline, "setup", setup)
    monkeypatch.setattr(pipeline, "sysroots", sysroots)
    monkeypatch.setattr(pipeline, "build", build)
    monkeypatch.setattr(pipeline, "smoke_one", smoke_one)
    return calls


def test_a_component_session_runs_only_what_it_needs(cfg: Config, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    calls = recording(monkeypatch)
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    pipeline.run_arch(ctx, Arch.RISCV64, ["cpuinfo"])
    # cpuinfo's smoke has no control: no amd64 at all, only cpuinfo's toolchain packages.
    assert calls == [("setup", "riscv64", ("cpuinfo",)), ("sysroots", "riscv64", ()),
                     ("build", "riscv64", ("cpuinfo",)), ("smoke", "riscv64", ("cpuinfo",))]
    calls.clear()
    pipeline.run_arch(ctx, Arch.RISCV64, ["canary"])
    # The canary's smoke compares with the amd64 control, so the control builds the canary too.
    assert ("build", "amd64", ("canary",)) in calls and ("smoke", "riscv64", ("canary",)) in calls
    assert not (tmp_path / "reports" / "observations").exists()  # a per-component run is no floors observation
    assert (tmp_path / "reports" / "report-riscv64.md").is_file()


def test_the_arch_job_still_runs_everything(cfg: Config, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    calls = recording(monkeypatch)
    pipeline.run_arch(Context(cfg, Runner(Log(io.StringIO()))), Arch.RISCV64)
    listed = cfg.arches[Arch.RISCV64].components
    builds = [(arch, names) for step, arch, names in calls if step == "build"]
    assert tuple(n for arch, names in builds if arch == "riscv64" for n in names) == listed
    assert {names for step, _, names in calls if step == "smoke"} == {(n,) for n in listed}
    assert ("setup", "riscv64,amd64", ()) in calls
    # The control builds right after the last riscv64 component it also builds, before the riscv64 rest.
    control = [i for i, (arch, _) in enumerate(builds) if arch == "amd64"]
    assert control == [1] and len(builds) == 3, builds
    assert set(builds[1][1]) <= set(builds[0][1]) and builds[0][1][-1] in builds[1][1]


def test_the_repository_sessions_cover_versions_toml(repo: Path, cfg: Config) -> None:
    """The plan against the loaded config, computed here independently."""
    planned = {s.name for s in sessions.plan(cfg)}
    wanted = set()
    for arch in cfg.arches:
        wanted |= {f"build-{arch}", f"smoke-{arch}"}
        wanted |= {f"{kind}-{arch}-{name}" for name in cfg.components if cfg.builds(name, arch)
                   for kind in ("build", "smoke")}
        wanted |= {f"repro-{arch}-{name}" for name, c in cfg.components.items()
                   if cfg.builds(name, arch) and c.recipe != "provided"}
        wanted |= {f"tests-{arch}-{name}" for name, c in cfg.components.items()
                   if arch in c.arches and c.tests is not None}
    wanted |= {f"build-{target}" for target in cfg.baremetal}
    assert planned == wanted == consistency.expected_sessions(cfg)
