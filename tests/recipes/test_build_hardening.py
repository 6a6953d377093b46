"""The build tree under hostile conditions: deleted outputs, a symlinked install folder, host compiler flags,
a second build of the same arch, a failing configure (exit 5). Real canary builds (seconds each)."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
import time
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite
from crosslane.files import locks
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline

pytestmark = [pytest.mark.cross, pytest.mark.network]
ARCH = Arch.RISCV64


def build(cfg: Config, force: bool = False) -> str:
    rows = pipeline.build_components(Context(cfg, Runner(Log(io.StringIO()))), ARCH, ["canary"], force=force)
    [row] = [r for r in rows if r.label == "build"]
    assert row.verdict is Verdict.PASS, rows
    return row.reason


@pytest.fixture
def built(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    assert build(cfg) == "built"
    return tmp_path / "build" / ARCH.value / "canary"


def test_a_deleted_or_changed_output_rebuilds(cfg: Config, built: Path) -> None:
    assert build(cfg) == "up to date (skipped)"
    (built / "install" / "bin" / "canary-cli").unlink()
    assert build(cfg) == "built" and (built / "install" / "bin" / "canary-cli").is_file()
    with (built / "install" / "bin" / "canary-cli").open("ab") as handle:
        handle.write(b"tampered")
    assert build(cfg) == "built"
    assert build(cfg) == "up to date (skipped)"


def test_a_symlinked_install_folder_is_replaced_not_written_through(cfg: Config, built: Path,
                                                                   tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    import shutil
    shutil.rmtree(built / "install")
    (built / "install").symlink_to(outside)
    assert build(cfg, force=True) == "built"
    assert not (built / "install").is_symlink() and (built / "install" / "bin" / "canary-cli").is_file()
    assert [p.name for p in outside.iterdir()] == ["keep.txt"]


def test_host_compiler_flags_do_not_reach_the_cross_build(cfg: Config, built: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFLAGS", "-march=x86-64 -DFROM_THE_HOST")
    monkeypatch.setenv("LDFLAGS", "-L/usr/lib/x86_64-linux-gnu")
    assert build(cfg, force=True) == "built"
    cache = (built / "build" / "CMakeCache.txt").read_text()
    assert "FROM_THE_HOST" not in cache and "x86_64-linux-gnu" not in cache


def test_a_second_build_of_the_arch_waits_or_fails_at_once(cfg: Config, built: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    lock = built.parent / ".lock"
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with locks.hold(lock, "the riscv64 build tree", Log(io.StringIO())):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    monkeypatch.setenv(locks.NO_WAIT_ENV, "1")
    with pytest.raises(MissingPrerequisite, match=r"the riscv64 build tree is in use by pid \d+") as caught:
        build(cfg)
    assert caught.value.exit_code == 3
    monkeypatch.delenv(locks.NO_WAIT_ENV)
    threading.Timer(1.0, release.set).start()
    start = time.monotonic()
    assert build(cfg) == "up to date (skipped)"  # waited for the holder, then found the tree current
    assert time.monotonic() - start >= 0.9
    thread.join()


def test_a_failing_configure_exits_5(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(b C)\nthis_is_not_cmake(\n")
    canary = cfg.components["canary"].sources[0]
    assert isinstance(canary, TreeSource)
    source = dataclasses.replace(canary, path=broken)
    component = dataclasses.replace(cfg.components["canary"], sources=(source,), smoke=None)
    bad = dataclasses.replace(cfg, components=MappingProxyType({"canary": component}))
    monkeypatch.setattr(config_mod, "load", lambda path=None, registries=None: bad)
    code = commands.run(lambda ctx: pipeline.build_components(ctx, ARCH, ["canary"]))
    assert code == 5
    assert "a build among them" in capsys.readouterr().err


def test_gate_verdicts_are_reused_only_for_the_same_outputs(cfg: Config, built: Path) -> None:
    import json

    cache = built / pipeline.GATES_CACHE
    first = json.loads(cache.read_text())
    assert first["rows"] and all(r["verdict"] == "PASS" for r in first["rows"])
    assert build(cfg) == "up to date (skipped)" and json.loads(cache.read_text())["key"] == first["key"]
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    install = built / "install"
    assert pipeline.gates_key(ctx, "canary", ARCH, [install], []) == first["key"]
    (install / "lib" / "extra.so").write_bytes(b"\x7fELF not really")
    assert pipeline.gates_key(ctx, "canary", ARCH, [install], []) != first["key"]


def test_the_report_carries_what_the_build_recorded(cfg: Config, built: Path) -> None:
    from crosslane.reports import build as buildreport

    # invoke build wrote it (README: every build writes the arch's report), with the canary's build in it
    written = json.loads((built.parent.parent / "reports" / f"report-{ARCH.value}.json").read_text())
    assert [c["component"] for c in written["components"]] == ["canary"]

    ctx = Context(cfg, Runner(Log(io.StringIO())))
    facts = buildreport.component_facts(ctx, ARCH, "canary", [])
    assert str(facts["source"]).startswith("tree:") and "clang" in str(facts["compiler"])
    assert isinstance(facts["seconds"], float) and facts["seconds"] > 0
    phases = json.loads((built / ".crosslane-stamp.json").read_text())["facts"]["phases"]
    assert set(phases) == {"setup", "configure", "compile", "install", "package"} and phases["compile"] > 0
    assert sum(phases.values()) <= facts["seconds"] + 0.1  # the split of the build's own time, nothing else
    cache = facts["ccache"]
    assert isinstance(cache, dict) and set(cache) == {"hits", "misses"}
    assert cache["hits"] + cache["misses"] >= 1  # the canary compiles at least one file through ccache
    installed = [p for p in (built / "install").rglob("*") if p.is_file() and not p.is_symlink()]
    assert facts["bytes"] == sum(p.stat().st_size for p in installed) > 0
    path = buildreport.write(ctx, ARCH, {ARCH: ("canary",)}, [])
    text = path.with_suffix(".md").read_text()
    assert "| canary | riscv64 | tree " in text and "| riscv64 | forky |" in text and "libc6 " in text


def test_pkg_config_files_name_their_prefix_relative_to_themselves(tmp_path: Path) -> None:
    from crosslane.recipes import reproducible

    install = tmp_path / "a build folder" / "install"
    (install / "lib/pkgconfig").mkdir(parents=True)
    pc = install / "lib/pkgconfig/libx.pc"
    pc.write_text(f"prefix={install}\nexec_prefix={install}\nlibdir=${{exec_prefix}}/lib\nLibs: -L${{libdir}} -lx\n")
    (install / "lib/pkgconfig/plain.pc").write_text("prefix=/usr\n")
    assert reproducible.relocatable_pkgconfig(install) == [pc]
    assert pc.read_text().splitlines()[:2] == ["prefix=${pcfiledir}/../..", "exec_prefix=${pcfiledir}/../.."]
    assert (install / "lib/pkgconfig/plain.pc").read_text() == "prefix=/usr\n"


def test_prefix_maps_turn_each_ancestor_into_the_relative_form_ccache_gives(tmp_path: Path) -> None:
    """ccache runs the compiler with paths below its base folder relative to the build tree; the maps give an
    absolute path the same form, the most specific map last (GCC and clang apply the last that matches)."""
    from crosslane.recipes import reproducible

    repo, cache = tmp_path / "checkout", tmp_path / "cache"
    build_dir = repo / "build" / "riscv64" / "canary" / "build"
    build_dir.mkdir(parents=True)
    cache.mkdir()
    maps = reproducible.prefix_maps(build_dir, repo / "build", repo, cache)
    assert reproducible.ccache_base(repo / "build", repo) == repo.resolve()
    assert maps == (f"-ffile-prefix-map={cache.resolve()}/=/crosslane-cache/",
                    f"-ffile-prefix-map={repo.resolve()}/=../../../../",
                    f"-ffile-prefix-map={repo.resolve()}/build/=../../../",
                    f"-ffile-prefix-map={repo.resolve()}/build/riscv64/=../../",
                    f"-ffile-prefix-map={repo.resolve()}/build/riscv64/canary/=../",
                    f"-ffile-prefix-map={build_dir.resolve()}/=")
    elsewhere = tmp_path / "elsewhere" / "riscv64" / "x" / "build"
    elsewhere.mkdir(parents=True)
    outside = reproducible.prefix_maps(elsewhere, tmp_path / "elsewhere", repo, cache)
    assert f"-ffile-prefix-map={repo.resolve()}/=/crosslane-src/" in outside  # not below the base: a fixed name
