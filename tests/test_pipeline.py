"""The command layer end to end: setup, sysroot from scratch, summaries, JSON, dry runs."""

from __future__ import annotations

import dataclasses
import io
import json
import runpy
import sys
import types
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite, UsageError
from crosslane.files import stamps
from crosslane.guest import sysroot
from crosslane.host import buildtools
from crosslane.log import Log, Progress
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Scope, Verdict
from crosslane.run import pipeline, plan
from crosslane.smokes.payloads import canary_payload
from crosslane.smokes.payloads import path as payload_path


def test_run_prints_summary_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rows = [Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="fine",
                subject="cli", profile="rvv128"),
            Row(component="et", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="2 runs",
                subject="op-timing", detail="| op | ms |")]
    code = commands.run(lambda ctx: rows, json_path=str(tmp_path / "out.json"),
                        config_path=str(repo / "versions.toml"))
    assert code == 0
    out = capsys.readouterr().out
    assert "cli@rvv128" in out and "| op | ms |" not in out  # the detail is for the summary page only
    written = json.loads((tmp_path / "out.json").read_text())
    assert written[0]["subject"] == "cli" and written[1]["detail"] == "| op | ms |"
    page = summary.read_text()
    assert "| canary | riscv64 | cli@rvv128 | PASS |  | fine |" in page
    assert page.index("| et | riscv64 | op-timing | PASS |  | 2 runs |") < page.index("| op | ms |")


def test_the_context_a_command_builds_is_frozen(repo: Path) -> None:
    seen = []

    def action(ctx: Context) -> list[Row]:
        seen.append(ctx)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ctx.cases = ()  # type: ignore[misc]
        return []

    assert commands.run(action, cases=["mv2"], config_path=str(repo / "versions.toml")) == 0
    assert seen[0].cases == ("mv2",) and seen[0].wheels == {}


def test_run_fails_on_a_fail_row(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    code = commands.run(lambda ctx: [Row(component="c", arch=Scope("a"), check=Check.SMOKE, verdict=Verdict.FAIL,
                                         reason="x", subject="s")],
                        config_path=str(repo / "versions.toml"))
    assert code == 1
    assert "crosslane: error: 1 of 1 checks failed" in capsys.readouterr().err


def test_usage_errors(cfg: Config) -> None:
    with pytest.raises(UsageError, match="unknown arch 'x86'"):
        commands.parse_arch("x86")
    with pytest.raises(UsageError, match="expected NAME=PATH"):
        commands.parse_sources(["canary"], ["canary"])
    with pytest.raises(UsageError, match="not a folder"):
        commands.parse_sources(["canary=/nonexistent/x"], ["canary"])
    with pytest.raises(UsageError, match=r"unknown component 'canry'; did you mean 'canary'\?"):
        commands.parse_sources(["canry=/tmp"], ["canary", "cpuinfo"])
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    with pytest.raises(UsageError, match="unknown component 'nope'"):
        plan.components_for(ctx.config, Arch.RISCV64, ["nope"])
    with pytest.raises(UsageError, match="unknown CPU profile 'rvv64'"):
        plan.profiles_for(ctx.config, Arch.RISCV64, "rvv64")
    assert [p.name for p in plan.profiles_for(ctx.config, Arch.RISCV64, "rvv256")] == ["rvv256"]
    assert cfg.controlled(["canary", "cpuinfo", "onnxruntime", "onnxruntime-genai"]) == \
        ("canary", "onnxruntime", "onnxruntime-genai")


def test_missing_sysroot_names_the_fix(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    with pytest.raises(MissingPrerequisite) as raised:
        ctx.sysroot(Arch.RISCV64)
    assert raised.value.one_line() == "no riscv64 sysroot for the current versions.toml; invoke sysroot --arch riscv64"


def test_progress_plain_lines() -> None:
    stream = io.StringIO()
    progress = Progress(Log(stream), "extract", total=2, every=0)
    progress.advance(detail="a.deb")
    progress.advance(detail="b.deb")
    progress.close()
    assert "extract: 2/2" in stream.getvalue()


def test_progress_of_work_that_counts_itself_shows_no_counter_of_its_own() -> None:
    stream = io.StringIO()
    progress = Progress(Log(stream), "build canary (riscv64)", every=0)
    progress.advance(0, "[164/207]")
    assert stream.getvalue().strip() == "build canary (riscv64): (0s) [164/207]"


def test_log_github_annotations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    stream = io.StringIO()
    log = Log(stream)
    log.warn("w")
    log.error("e")
    with log.group("g"):
        log.notice("n")
    assert stream.getvalue().splitlines() == ["::warning::w", "::error::e", "::group::g", "::notice::n",
                                              "::endgroup::"]


def test_canary_payload_logic_on_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The payload's own decisions, with a stand-in module: a wrong suffix is a FAIL, not an OK."""
    import sysconfig

    fake = types.ModuleType("canary")
    fake.__file__ = str(tmp_path / "canary.so")
    fake.info = lambda: '{"arch": "amd64"}'  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "canary", fake)
    assert canary_payload.main() == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("CANARY-BIND FAIL: extension suffix mismatch")
    fake.__file__ = str(tmp_path / f"canary{sysconfig.get_config_var('EXT_SUFFIX')}")
    assert canary_payload.main() == 0
    assert capsys.readouterr().out.splitlines()[-1] == 'CANARY-BIND OK: {"arch": "amd64"}'
    monkeypatch.setitem(sys.modules, "canary", None)
    assert canary_payload.main() == 1
    assert "CANARY-BIND FAIL: import failed" in capsys.readouterr().out
    # The file as shipped runs main() as a script.
    with pytest.raises(SystemExit):
        runpy.run_path(str(payload_path("canary_payload")), run_name="__main__")


@pytest.mark.spawns
def test_setup_with_everything_present_installs_nothing(cfg: Config) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    if buildtools.locate(cfg.tools) is None:
        pytest.skip("pinned build tools not installed yet (invoke setup installs them)")
    rows = pipeline.setup(ctx, [Arch.RISCV64])
    assert rows[0].verdict is Verdict.PASS and "all host packages present" in rows[0].reason
    assert not any(c[0].endswith("apt-get") or "apt-get" in c for c in ctx.runner.commands)


@pytest.mark.network
@pytest.mark.spawns
def test_sysroot_from_scratch(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real, small sysroot (zlib and what it needs) assembled from Debian's archive into an empty cache."""
    from dataclasses import replace

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    spec = replace(cfg.sysroot, packages=("zlib1g",), arch_packages={})
    runner = Runner(Log(io.StringIO()))
    built = sysroot.ensure(runner, spec, Arch.RISCV64)
    names = {p["package"] for p in built.packages()}
    assert {"zlib1g", "libc6"} <= names
    assert (built.path / "usr/lib/riscv64-linux-gnu").is_dir()
    assert [p.name for p in (tmp_path / "sysroots").iterdir()] == [built.path.name], "work folder left behind"
    again = Runner(Log(io.StringIO()))
    assert sysroot.ensure(again, spec, Arch.RISCV64).path == built.path
    assert again.commands == []


@pytest.mark.spawns
def test_sysroot_dry_run_touches_nothing(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    ctx = Context(cfg, Runner(Log(io.StringIO()), dry_run=True))
    rows = pipeline.sysroots(ctx, [Arch.ARM64])
    assert rows[0].verdict is Verdict.PASS
    assert any("apt-get" in c for c in ctx.runner.commands)
    assert any("mmdebstrap" in " ".join(c) for c in ctx.runner.commands)  # and arm64's qemu-user tool root
    assert list(tmp_path.rglob("*.deb")) == []
    assert not sysroot.sysroot_path(cfg.sysroot, Arch.ARM64).exists()


def test_bad_keyring(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    spec = replace(cfg.sysroot, keyring=str(tmp_path / "none.gpg"))
    with pytest.raises(MissingPrerequisite, match=r"archive keyring .* not found"):
        sysroot.ensure(Runner(Log(io.StringIO())), spec, Arch.ARM64)


def test_unwritable_places_are_one_line_exit_3(repo: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [Row(component="canary", arch=Arch.RISCV64, check=Check.BUILD, verdict=Verdict.PASS, reason="ok")]
    code = commands.run(lambda ctx: rows, json_path="/proc/crosslane-no/x.json",
                        config_path=str(repo / "versions.toml"))
    err = capsys.readouterr().err
    assert code == 3
    assert err.strip().splitlines()[-1] == ("crosslane: error: /proc/crosslane-no: No such file or directory; "
                                           "check the path, its permissions and free space")
    assert "Traceback" not in err

    def mkdir_fails(ctx: Context) -> list[Row]:
        (Path("/proc/crosslane-no") / "build").mkdir(parents=True)
        return []

    assert commands.run(mkdir_fails, config_path=str(repo / "versions.toml")) == 3
    assert "Traceback" not in capsys.readouterr().err


def test_a_project_name_stands_for_its_variants_on_each_arch(cfg: Config) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    assert plan.components_for(ctx.config, Arch.RISCV64, ["executorch"]) == (
        "executorch-portable", "executorch-xnnpack", "executorch-xnnpack-novector")
    assert plan.components_for(ctx.config, Arch.ARM64, ["executorch"]) == ("executorch-portable", "executorch-xnnpack")
    assert plan.expand_families(ctx.config, Arch.RISCV64, ["canary", "executorch-xnnpack"]) == [
        "canary", "executorch-xnnpack"]
    with pytest.raises(UsageError, match="unknown component 'executorh'"):
        plan.components_for(ctx.config, Arch.RISCV64, ["executorh"])


def test_staging_also_names_the_host_venvs_an_offline_build_needs(cfg: Config) -> None:
    """`invoke sources` makes the pinned host venvs too: CROSSLANE_OFFLINE=1 then needs no PyPI (measured: a fresh
    machine's offline build stopped at ExecuTorch's codegen venv)."""
    ctx = Context(cfg, Runner(Log(io.StringIO()), dry_run=True))
    rows = pipeline.stage_hostenvs(ctx, Arch.RISCV64, [])
    assert {r.subject for r in rows} == {"hostenv:executorch", "hostenv:executorch-aot", "model:smollm2",
                                         "toolroot:rust"}  # genai's Rust: the tool root is made by sources too
    assert all(r.verdict is Verdict.SKIP and r.check is Check.SOURCE for r in rows)
    assert pipeline.stage_hostenvs(ctx, Arch.RISCV64, ["canary"]) == []


def test_a_provided_component_is_not_rewritten_when_current(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Its install folder's times are what the dependents' gate cache keys on: a no-op rewrite made every no-op
    build re-read the genai wheels (30 s instead of under 1 s)."""
    from crosslane.recipes import provided

    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    component = cfg.components["onnxruntime"]
    first = provided.record(ctx, component, Arch.RISCV64)
    install = ctx.component_dir(Arch.RISCV64, "onnxruntime") / "install"
    before = stamps.outputs_listing(install), install.stat().st_mtime_ns
    again = provided.record(ctx, component, Arch.RISCV64)
    assert first.verdict is again.verdict is Verdict.PASS
    assert (stamps.outputs_listing(install), install.stat().st_mtime_ns) == before
