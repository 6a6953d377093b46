"""A dry run writes nothing, anywhere: not in the build folder, not in the cache (probes included)."""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.run import pipeline
from crosslane_helpers import fresh_cache
from hostilekit import BIN, REPO, invoke, snapshot


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every entry under *root* with its size and mtime (content changes move one of them)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            stat = path.lstat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.cross
@pytest.mark.network
@pytest.mark.parametrize("arch", list(Arch), ids=lambda a: a.value)
def test_a_dry_build_writes_nothing(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, arch: Arch) -> None:
    """On every arch: arm64's qemu -L is a guest root with its own /proc/cpuinfo, which a dry run names in
    the toolchain file's emulator line but does not make."""
    # A cache of its own (sharing the sysroots and build tools): the probes would land in it.
    for key, value in fresh_cache(tmp_path).items():
        monkeypatch.setenv(key, value)
    (tmp_path / "build").mkdir()
    watched = [tmp_path / "build", tmp_path / "cache"]
    before = [listing(p) for p in watched]
    runner = Runner(Log(io.StringIO()), dry_run=True)
    names = [n for n in ("canary", "cpuinfo") if cfg.builds(n, arch)]
    rows = pipeline.build_components(Context(cfg, runner), arch, names)
    assert rows and all(r.verdict.value != "FAIL" for r in rows), rows
    assert any("--build" in argv for argv in runner.commands)  # it did plan the builds
    assert [listing(p) for p in watched] == before


@pytest.mark.network
def test_dry_sources_and_upstream_tests_write_nothing(cfg: Config, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`invoke sources --dry-run` names what it would fetch (every pin, the tool roots, the host venvs) and
    `invoke upstream-tests --dry-run` prints its plan; neither writes to the build folder or the cache."""
    from crosslane.run import plan

    for key, value in fresh_cache(tmp_path).items():
        monkeypatch.setenv(key, value)
    (tmp_path / "build").mkdir()
    watched = [tmp_path / "build", tmp_path / "cache"]
    before = [listing(p) for p in watched]
    log = io.StringIO()
    ctx = Context(cfg, Runner(Log(log), dry_run=True))
    rows = pipeline.stage_sources(ctx, Arch.ARM64, ["onnxruntime-genai"])
    subjects = {r.subject for r in rows}
    assert {"main", "llguidance", "toolroot:rust", "toolroot:qemu-user"} <= subjects, subjects
    assert all(r.verdict.value == "SKIP" for r in rows), [r for r in rows if r.verdict.value != "SKIP"]
    assert pipeline.run_tests(ctx, plan.for_tests(cfg, Arch.ARM64, ["onnxruntime-genai"], None)) == []
    assert "plan: upstream tests onnxruntime-genai (pytest) on arm64 max and the amd64 control" in log.getvalue()
    assert [listing(p) for p in watched] == before


@pytest.mark.hostile("dry runs")
@pytest.mark.cross
@pytest.mark.spawns
def test_a_dry_run_of_a_wheel_lane_writes_nothing(tmp_path: Path, sysroots: object) -> None:
    build = tmp_path / "build"
    earlier = build / "riscv64/onnxruntime-genai/wheels/cp314-linux_riscv64/install/dist"
    earlier.mkdir(parents=True)
    (earlier / "onnxruntime_genai-0.15.2-cp314-cp314-linux_riscv64.whl").write_bytes(b"an earlier build's wheel")
    before = snapshot(build, ())
    done = invoke("build", "--arch", "riscv64", "--component", "onnxruntime-genai", "--dry-run",
                  env={"CROSSLANE_BUILD_DIR": str(build)})
    assert done.rc == 0, done.out
    assert "Traceback" not in done.out and not re.search(r"\bPASS\s+(\S+s/\S+s\s+)?built", done.out)
    assert snapshot(build, ()) == before
    pack = invoke("pack", "--arch", "riscv64", "--component", "onnxruntime-genai", "--output",
                  str(tmp_path / "genai.tar.gz"), env={"CROSSLANE_BUILD_DIR": str(build)})
    assert pack.rc == 2 and len(pack.errors) == 1 and "not built" in pack.errors[0], pack.out


def fresh_clone(tmp_path: Path) -> Path:
    """A clone of this repository's committed tree: what a new contributor runs `--dry-run` in first."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=300,
                   stdin=subprocess.DEVNULL, capture_output=True)
    return clone


@pytest.mark.spawns
@pytest.mark.parametrize("command", ["build", "all"])
@pytest.mark.parametrize("arch", list(Arch), ids=lambda a: a.value)
def test_a_dry_run_in_a_fresh_clone_prints_the_plan_and_writes_nothing(tmp_path: Path, arch: Arch,
                                                                       command: str) -> None:
    """No sysroot, no build tools, no network: the plan is printed first, per build (toolchain, source, patches,
    CMake arguments, would build or up to date), what setup would install after it, and not a file is made."""
    clone = fresh_clone(tmp_path)
    build, cache = tmp_path / "build", tmp_path / "cache"
    watched = [build, cache, clone]
    before = [listing(p) for p in watched]
    env = {**os.environ, "CROSSLANE_CACHE": str(cache), "CROSSLANE_BUILD_DIR": str(build), "CROSSLANE_OFFLINE": "1",
           "CROSSLANE_NO_WAIT": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([str(BIN / "invoke"), "--search-root", str(clone), command, "--arch", arch.value,
                           "--dry-run"], cwd=clone, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", timeout=300, check=False)
    out = done.stdout
    assert done.returncode == 0 and "Traceback" not in out, out
    assert [listing(p) for p in watched] == before, out
    assert not build.exists() and not cache.exists(), out
    lines = out.splitlines()
    assert lines[0].startswith("plan: "), out  # before anything else
    canary = lines.index(f"plan: build canary ({arch}): would build (never built)")
    assert lines[canary + 1].startswith("plan:     recipe cmake, toolchain "), out
    assert lines[canary + 2] == f"plan:     source: this repository's {clone / 'components/canary'}", out
    assert lines[canary + 3] == "plan:     patches: none", out
    assert lines[canary + 4].startswith("plan:     cmake args: "), out
    assert f"plan: would make the {arch} sysroot (Debian " in out, out
    assert "plan: would install cmake " in out, out


def test_the_outline_says_built_before_stale_or_never_built(cfg: Config, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """From the stamps already written and versions.toml alone: never built, up to date as far as the configuration
    says, or which of its inputs changed (a pinned tool, a dependency rebuilt)."""
    import dataclasses

    from crosslane.files import stamps
    from crosslane.policy.lanes import LaneState
    from crosslane.run import outline

    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    component, on = cfg.components["canary"], LaneState("canary", Arch.RISCV64, enabled=True, setting="default")
    assert outline.build_status(ctx, component, Arch.RISCV64, on) == "would build (never built)"
    folder = ctx.component_dir(Arch.RISCV64, "canary")
    (folder / "install" / "bin").mkdir(parents=True)
    inputs = {"cmake": cfg.tools.cmake, "ninja": cfg.tools.ninja, "depends": {}}
    stamps.write(folder, "k", inputs, outputs=folder / "install")
    assert outline.build_status(ctx, component, Arch.RISCV64, on).startswith("up to date unless")
    newer = Context(dataclasses.replace(cfg, tools=dataclasses.replace(cfg.tools, cmake="9.9.9")), ctx.runner)
    assert outline.build_status(newer, component, Arch.RISCV64, on) == \
        "would build (cmake changed since the last build)"
    (folder / "install" / "bin" / "extra").write_text("not what the build installed")
    assert "install folder changed" in outline.build_status(ctx, component, Arch.RISCV64, on)
    off = dataclasses.replace(on, enabled=False, setting="CROSSLANE_LANE_CANARY_RISCV64=0")
    assert outline.build_status(ctx, component, Arch.RISCV64, off).startswith("lane off by CROSSLANE_LANE_CANARY")
