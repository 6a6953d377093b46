"""The preflight doctor: every check reports at once with its fix; the build stops on FAIL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from plumbum import local

from crosslane.archs import Arch
from crosslane.cli import actions, commands
from crosslane.features import rules
from crosslane.preflight import doctor
from crosslane.preflight.checks import REGISTRY, Check
from crosslane.preflight.checks import host as host_checks
from crosslane.report import Verdict
from crosslane.run import pipeline
from crosslane_helpers import REPO, context, executable, fake_buildtools, fake_sysroot, probes, write_config

ARCH_CHECKS = [c.name for c in REGISTRY if c.scope == "arch"]
COMPONENT_CHECKS = [c.name for c in REGISTRY if c.scope == "component"]


@pytest.fixture

def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """PATH is one empty folder (tests add fake tools to it); the crosslane cache is empty."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    for name in ("CROSSLANE_LANE_CANARY_RISCV64", "CROSSLANE_LANE_APP_RISCV64"):
        monkeypatch.delenv(name, raising=False)
    with local.env(PATH=str(folder)):
        yield folder


def by_check(findings: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {f["check"]: f for f in findings}


def test_fresh_machine_lists_every_missing_piece(bare_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = commands.run(lambda ctx: actions.preflight(ctx, Arch.RISCV64, ["canary"], as_json=True),
                        config_path=str(REPO / "versions.toml"), stream_summary=False)
    assert code == 3  # a failed preflight is a missing prerequisite
    findings = json.loads(capsys.readouterr().out)
    assert [f["check"] for f in findings] == ARCH_CHECKS + COMPONENT_CHECKS  # one record per check
    found = by_check(findings)
    setup, sysroot = "invoke setup --arch riscv64", "invoke sysroot --arch riscv64"
    expected_fail = {"cmake": setup, "ninja": setup, "qemu": "invoke setup --arch riscv64 (installs qemu-user-static)",
                     "sysroot": sysroot, "compiler": setup}
    assert {name: f["fix"] for name, f in found.items() if f["status"] == "FAIL"} == expected_fail
    assert found["compiler"]["message"] == "clang-19 not found"
    assert found["sysroot"]["message"].startswith("no riscv64 sysroot in ")
    for skipped in ("target-python", "qemu-cpu-profiles", "rvv", "xnnpack", "rust-target"):
        assert found[skipped]["status"] == "SKIP" and found[skipped]["message"]


def test_table_shows_the_fix_under_each_failure(bare_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commands.run(lambda ctx: actions.preflight(ctx, Arch.RISCV64, ["canary"]),
                 config_path=str(REPO / "versions.toml"), stream_summary=False)
    lines = capsys.readouterr().out.splitlines()
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL") and " compiler " in line)
    assert "clang-19 not found" in lines[fail]
    assert lines[fail + 1].split() == ["fix:", "invoke", "setup", "--arch", "riscv64"]
    assert lines[-1].endswith("5 FAIL")


def test_gcc_toolchain_names_the_missing_cross_compiler(bare_path: Path, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""}, riscv64_toolchain="gcc")
    executable(bare_path / "riscv64-linux-gnu-gcc", "#!/bin/sh\nexit 0\n")  # found, never run: g++ is missing
    ctx, _ = context(cfg)
    found = {f.check: f for f in doctor.run(probes(ctx), Arch.RISCV64, ["app"])}
    assert (found["compiler"].message, found["compiler"].fix) == ("riscv64-linux-gnu-g++ not found",
                                                                  "invoke setup --arch riscv64")


def test_build_stops_on_failure_before_building(bare_path: Path, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    ctx, log = context(cfg)
    rows = pipeline.build_components(ctx, Arch.RISCV64, ["app"])
    assert rows and all(r.verdict is Verdict.FAIL for r in rows)
    assert {r.label for r in rows} == {"preflight:cmake", "preflight:ninja", "preflight:qemu", "preflight:sysroot",
                                      "preflight:compiler"}
    assert "nothing was built" in log.getvalue()
    assert not (tmp_path / "build").exists()


def test_build_preflight_skips_the_cpu_profile_probes() -> None:
    gating = {c.name for c in REGISTRY if c.gates_build}
    assert "qemu-cpu-profiles" not in gating and {"cmake", "compiler", "sysroot", "target-python"} <= gating


# -- the sysroot and the target Python's dev files (fake sysroots, nothing spawned) -------------------------

def only(*names: str) -> list[Check]:
    return [c for c in REGISTRY if c.name in names]


def test_stale_sysroot(bare_path: Path, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    old = fake_sysroot(cfg, Arch.RISCV64)
    old.rename(old.with_name("riscv64-trixie-0123456789abcdef"))
    ctx, _ = context(cfg)
    (finding,) = doctor.run(probes(ctx), Arch.RISCV64, [], registry=only("sysroot"))
    assert finding.status is Verdict.FAIL and finding.fix == "invoke sysroot --arch riscv64"
    assert "stale: have riscv64-trixie-0123456789abcdef" in finding.message


@pytest.mark.parametrize(("remove", "status", "message"), [
    (None, "PASS", "python3.13: usr/include/riscv64-linux-gnu/python3.13/pyconfig.h, libpython3.13.so.1.0"),
    ("usr/include/riscv64-linux-gnu/python3.13/pyconfig.h", "FAIL", "a Python extension would see host headers"),
    ("usr/lib/riscv64-linux-gnu/libpython3.13.so.1.0", "FAIL", "no libpython3.13.so in"),
], ids=["ready", "no-pyconfig", "no-libpython"])
def test_target_python_dev_files(bare_path: Path, tmp_path: Path, remove: str | None, status: str,
                                 message: str) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    root = fake_sysroot(cfg, Arch.RISCV64)
    if remove:
        (root / remove).unlink()
    ctx, _ = context(cfg)
    found = {f.check: f for f in doctor.run(probes(ctx), Arch.RISCV64, [], registry=only("sysroot",
                                                                                             "target-python"))}
    assert found["sysroot"].status is Verdict.PASS
    assert found["target-python"].status.value == status and message in found["target-python"].message
    if status == "FAIL":
        assert "invoke sysroot --arch riscv64" in found["target-python"].fix


# -- host tool versions against the pins and minimums (fake tools printing versions) ---------------------

def version_script(text: str) -> str:
    return f"#!/bin/sh\necho '{text}'\n"


@pytest.mark.spawns
@pytest.mark.parametrize(("pin", "cmake_says", "status", "message"), [
    ("3.31.6", "cmake version 3.31.6", "PASS", "cmake 3.31.6 ("),
    ("3.31.6", "cmake version 3.30.0", "FAIL", "reports cmake 3.30.0, versions.toml pins 3.31.6"),
    ("3.25.1", "cmake version 3.25.1", "FAIL", "cmake 3.25.1 found; requires >=3.26"),
], ids=["pinned", "drifted", "below-minimum"])
def test_cmake_version(bare_path: Path, tmp_path: Path, pin: str, cmake_says: str, status: str,
                       message: str) -> None:
    cfg = write_config(tmp_path, {"app": ""}, cmake=pin)
    fake_buildtools(cfg, version_script(cmake_says), version_script("1.13.0.git.kitware.jobserver-pipe-1"))
    ctx, _ = context(cfg)
    found = {f.check: f for f in doctor.run(probes(ctx), Arch.RISCV64, ["app"])}
    assert found["cmake"].status.value == status and message in found["cmake"].message
    assert found["ninja"].status is Verdict.PASS and "ninja 1.13.0" in found["ninja"].message


@pytest.mark.spawns
@pytest.mark.parametrize(("says", "status"), [
    ("qemu-riscv64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)", "PASS"),
    ("qemu-riscv64 version 10.0.2", "PASS"),
    ("qemu-riscv64 version 7.1.0", "FAIL"),
], ids=["7.2", "10.0", "7.1-too-old"])
def test_qemu_version(bare_path: Path, tmp_path: Path, says: str, status: str) -> None:
    executable(bare_path / "qemu-riscv64-static", version_script(says))
    ctx, _ = context(write_config(tmp_path, {"app": ""}))
    found = {f.check: f for f in doctor.run(probes(ctx), Arch.RISCV64, ["app"])}
    assert found["qemu"].status.value == status
    if status == "FAIL":
        assert "requires >=7.2" in found["qemu"].message


@pytest.mark.spawns
def test_a_qemu_that_does_not_run_is_a_finding_not_an_abort(bare_path: Path, tmp_path: Path) -> None:
    executable(bare_path / "qemu-riscv64-static", "#!/bin/sh\necho 'cannot execute' >&2\nexit 1\n")
    ctx, _ = context(write_config(tmp_path, {"app": ""}))
    found = {f.check: f for f in doctor.run(probes(ctx), Arch.RISCV64, ["app"])}
    assert found["qemu"].status.value == "FAIL" and "--version failed" in found["qemu"].message
    assert found["cmake"].status.value == "FAIL"  # and every other check still ran


# -- the rustup positive-evidence rule, with a fake rustup on PATH --------------------------------------

TRIPLE = "riscv64gc-unknown-linux-gnu"
ARGV_GUARD = '[ "$*" = "target list --installed" ] || exit 2\n'
RUSTUPS = {
    "prints-the-triple": f"#!/bin/sh\n{ARGV_GUARD}printf 'x86_64-unknown-linux-gnu\\n{TRIPLE}\\n'\n",
    "prints-other-triples": f"#!/bin/sh\n{ARGV_GUARD}printf 'x86_64-unknown-linux-gnu\\naarch64-unknown-linux-gnu\\n'"
                            "\n",
    "fails": "#!/bin/sh\necho 'error: rustup could not choose a version of rustup to run' >&2\nexit 1\n",
    "prints-nothing": f"#!/bin/sh\n{ARGV_GUARD}exit 0\n",
    "absent": None,
    # exit 0 with only an error (stderr joins the output): no listing, so no evidence the target is missing
    "error-with-exit-0": f"#!/bin/sh\n{ARGV_GUARD}echo 'error: toolchain stable is not installed' >&2\n",
    # the triple, annotated as `rustup target list` writes it: positive evidence it is there
    "annotated-triple": f"#!/bin/sh\n{ARGV_GUARD}printf '{TRIPLE} (installed)\\nx86_64-unknown-linux-gnu "
                        "(installed)\\n'\n",
}
KEPT = {"prints-the-triple": True, "prints-other-triples": False, "fails": True, "prints-nothing": True,
        "absent": True, "error-with-exit-0": True, "annotated-triple": True}


@pytest.mark.spawns
@pytest.mark.parametrize("rustup", list(RUSTUPS))
def test_rustup_positive_evidence(bare_path: Path, tmp_path: Path, rustup: str) -> None:
    script = RUSTUPS[rustup]
    if script is not None:
        executable(bare_path / "rustup", script)
    cfg = write_config(tmp_path, {"app": 'rust_options = ["-DUSE_GUIDANCE=ON"]', "plain": ""})
    ctx, _ = context(cfg)
    found_by = probes(ctx)
    only_rust = [c for c in REGISTRY if c.name == "rust-target"]
    findings = doctor.run(found_by, Arch.RISCV64, ["app", "plain"], registry=only_rust)
    app, plain = findings
    kept = KEPT[rustup]
    # what the build will do with the option ...
    decision = rules.rust_options_for(found_by, "app", Arch.RISCV64)
    assert decision is not None and decision.enabled is kept
    # ... and what preflight says: dropping is loud, with the fix
    if kept:
        assert app.status is Verdict.PASS and "keeping -DUSE_GUIDANCE=ON" in app.message
    else:
        assert app.status is Verdict.WARN and app.fix == f"rustup target add {TRIPLE}"
        assert "dropping -DUSE_GUIDANCE=ON" in app.message
    # a component without a Rust-dependent option is a no-op, said so
    assert plain.status is Verdict.SKIP and "no Rust-dependent option" in plain.message


@pytest.mark.spawns
def test_rustup_is_asked_once_per_process(bare_path: Path, tmp_path: Path) -> None:
    script = RUSTUPS["prints-the-triple"]
    assert script is not None
    executable(bare_path / "rustup", script)
    cfg = write_config(tmp_path, {"a": 'rust_options = ["-DX=ON"]', "b": 'rust_options = ["-DY=ON"]'})
    ctx, _ = context(cfg)
    found_by = probes(ctx)
    doctor.run(found_by, Arch.RISCV64, ["a", "b"], registry=[c for c in REGISTRY if c.name == "rust-target"])
    assert sum(1 for argv in ctx.runner.commands if argv[0].endswith("/rustup")) == 1


# -- the real toolchains: RVV probe and the XNNPACK rule --------------------------------------------------

@pytest.mark.cross
@pytest.mark.parametrize(("toolchain", "xnnpack", "rvv", "status", "option"), [
    ("gcc", "on", "FAIL", "FAIL", None),
    ("gcc", "auto", "FAIL", "NOTICE", "OFF"),
    ("gcc", "off", "FAIL", "PASS", "OFF"),
    ("clang", "on", "PASS", "PASS", "ON"),
    ("clang", "auto", "PASS", "PASS", "ON"),
], ids=["gcc12-on", "gcc12-auto", "gcc12-off", "clang19-on", "clang19-auto"])
def test_rvv_and_xnnpack_with_real_compilers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toolchain: str,
                                            xnnpack: str, rvv: str, status: str, option: str | None) -> None:
    from crosslane.errors import MissingPrerequisite
    from crosslane.recipes import crosswire

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))  # no cached probe: compile for real
    monkeypatch.delenv("CROSSLANE_LANE_APP_RISCV64", raising=False)
    cfg = write_config(tmp_path, {"app": f'options = {{ xnnpack = "{xnnpack}" }}'}, riscv64_toolchain=toolchain)
    ctx, _ = context(cfg)
    found_by = probes(ctx)
    wanted = [c for c in REGISTRY if c.name in ("compiler", "rvv", "xnnpack")]
    found = {f.check: f for f in doctor.run(found_by, Arch.RISCV64, ["app"], registry=wanted)}
    assert found["compiler"].status is Verdict.PASS
    assert found["rvv"].status.value == rvv
    assert found["xnnpack"].status.value == status
    if status == "FAIL":
        assert found["xnnpack"].message.startswith("XNNPACK requires GCC 14+ on riscv64; use clang or GCC 14")
    compiler = ctx.compiler("app", Arch.RISCV64)
    if option is None:
        with pytest.raises(MissingPrerequisite, match="XNNPACK requires GCC 14"):
            crosswire.wire(found_by, cfg.components["app"], Arch.RISCV64, compiler, tmp_path)
    else:
        wiring = crosswire.wire(found_by, cfg.components["app"], Arch.RISCV64, compiler, tmp_path)
        assert wiring.placeholders == {"option_xnnpack": option}


# -- qemu CPU profiles and the acceptance run on the real host --------------------------------------------

@pytest.fixture(scope="module")
def riscv64_ready() -> None:
    """Setup and the riscv64 sysroot, as `invoke setup` / `invoke sysroot` leave them (cached)."""
    assert commands.run(lambda ctx: pipeline.sysroots(ctx, [Arch.RISCV64]),
                        config_path=str(REPO / "versions.toml")) == 0


@pytest.mark.cross
@pytest.mark.qemu
def test_cpu_profiles_probe_every_profile(riscv64_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from crosslane import config as config_mod
    from crosslane.config import Profile
    from crosslane.files.paths import cache_dir

    # a fresh probe cache around the real (shared) sysroots: the probe program is compiled and run for real
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache/sysroots").symlink_to(cache_dir() / "sysroots")
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    cfg = config_mod.load(REPO / "versions.toml")
    arch_cfg = cfg.arches[Arch.RISCV64]
    bogus = Profile("bogus", "rv64,crosslane-no-such-property=true")
    arches = dict(cfg.arches)
    arches[Arch.RISCV64] = dataclasses.replace(arch_cfg, profiles=(*arch_cfg.profiles, bogus))
    ctx, _ = context(dataclasses.replace(cfg, arches=arches))
    only = [c for c in REGISTRY if c.name == "qemu-cpu-profiles"]
    (finding,) = doctor.run(probes(ctx), Arch.RISCV64, [], registry=only)
    assert sum(1 for argv in ctx.runner.commands if "-cpu" in argv) == len(arch_cfg.profiles) + 1
    assert finding.status is Verdict.FAIL
    assert ("profile bogus: no CPU property 'crosslane-no-such-property' (rv64,crosslane-no-such-property=true)"
            in finding.message)
    for good in arch_cfg.profiles:
        assert f"profile {good.name}:" not in finding.message
    # a second process asks qemu nothing: the results are cached on the binary's identity
    ctx2, _ = context(dataclasses.replace(cfg, arches=arches))
    (again,) = doctor.run(probes(ctx2), Arch.RISCV64, [], registry=only)
    assert again == finding
    assert not any("-cpu" in argv or "-static" in argv for argv in ctx2.runner.commands)


@pytest.mark.cross
@pytest.mark.qemu
def test_ready_host_passes(riscv64_ready: None, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = commands.run(lambda ctx: actions.preflight(ctx, Arch.RISCV64, ["canary"], as_json=True),
                        config_path=str(REPO / "versions.toml"), stream_summary=False)
    findings = json.loads(capsys.readouterr().out)
    assert code == 0, findings
    assert {f["status"] for f in findings} <= {"PASS", "SKIP"}
    assert len(findings) == len(REGISTRY)
    assert by_check(findings)["rvv"]["status"] == "PASS"


@pytest.mark.parametrize(("version", "minimum", "expected"), [
    ("3.31.6", (3, 26), True), ("3.26", (3, 26), True), ("3.25.99", (3, 26), False), ("10.0.2", (7, 2), True),
    ("1.13.0.git.kitware.jobserver-pipe-1", (1, 10), True), ("1.9", (1, 10), False), ("v1.2", (1, 0), False),
    ("", (1, 0), False), (None, (1, 0), False),
])
def test_a_tool_meets_its_minimum_by_its_numeric_release(version: str | None, minimum: tuple[int, ...],
                                                         expected: bool) -> None:
    assert host_checks.at_least(version, minimum) is expected


@pytest.mark.parametrize(("version", "series", "expected"), [
    ("19.1.7", "19", True), ("12.2.0", "12.2", True), ("12.20.0", "12.2", False), ("190.1", "19", False),
    ("18.1.8", 19, False), ("19.1.7", 19, True), ("unknown", "19", False), (None, "19", False),
])
def test_a_compiler_is_in_its_toolchains_series_as_pep440_wildcards_say(version: str | None, series: str | int,
                                                                       expected: bool) -> None:
    assert host_checks.same_series(version, series) is expected
