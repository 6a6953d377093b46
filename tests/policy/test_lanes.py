"""Lane toggles: resolution order, the arch-scoped hatch, producer marker vs verifier, the four states."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.files import stamps
from crosslane.policy import lanes
from crosslane.report import Row, Verdict
from crosslane.run import pipeline
from crosslane_helpers import REPO, context, write_config

OTHERS = (Arch.AMD64, Arch.ARM64)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(lanes.ENV_PREFIX):
            monkeypatch.delenv(name)
    monkeypatch.delenv("CROSSLANE_BUILD_DIR", raising=False)
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))


def build_app(ctx: Context, arch: Arch) -> list[Row]:
    return pipeline.build_components(ctx, arch, ["app"])


@pytest.mark.parametrize(("component", "arch", "name"), [
    ("onnxruntime-genai", Arch.RISCV64, "CROSSLANE_LANE_ONNXRUNTIME_GENAI_RISCV64"),
    ("canary", Arch.AMD64, "CROSSLANE_LANE_CANARY_AMD64"),
    ("executorch.xnn", Arch.ARM64, "CROSSLANE_LANE_EXECUTORCH_XNN_ARM64"),
], ids=["genai-riscv64", "canary-amd64", "dotted"])
def test_env_name(component: str, arch: Arch, name: str) -> None:
    assert lanes.env_name(component, arch) == name


def test_readme_documents_the_override() -> None:
    text = (REPO / "README.md").read_text()
    lanes_section = text.split("## Lanes", 1)[1]
    assert lanes.env_name("onnxruntime-genai", Arch.RISCV64) in lanes_section
    assert lanes.MARKER in lanes_section and "policy, not drift" in lanes_section


# (lane table in versions.toml, orchestrated, env value) -> enabled
TABLES = {
    "none": "",
    "enabled": "enabled = true",
    "disabled": 'enabled = false\nreason = "upstream bug 123"',
    "experimental": "experimental = true",
    "experimental-disabled": "experimental = true\nenabled = false",
}


def expected_state(table: str, orchestrated: bool, env: str | None) -> bool:
    """The documented order, written independently of lanes.resolve()."""
    if env is not None:
        return env == "1"
    if table in ("disabled", "experimental-disabled"):
        return False
    if table == "experimental":
        return orchestrated
    return True


CASES = [(t, o, e) for t in TABLES for o in (False, True) for e in (None, "0", "1")]


@pytest.mark.parametrize(("table", "orchestrated", "env"), CASES,
                         ids=[f"{t}-{'orch' if o else 'standalone'}-env{e}" for t, o, e in CASES])
def test_resolution_order(tmp_path: Path, table: str, orchestrated: bool, env: str | None) -> None:
    lane_toml = f"[lanes.app.riscv64]\n{TABLES[table]}\n" if table != "none" else ""
    cfg = write_config(tmp_path, {"app": ""}, lanes=lane_toml)
    environ = {} if env is None else {"CROSSLANE_LANE_APP_RISCV64": env}
    state = lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=orchestrated, environ=environ)
    assert state.enabled is expected_state(table, orchestrated, env)
    if env is not None:
        assert state.setting == f"CROSSLANE_LANE_APP_RISCV64={env}"
    elif table in ("disabled", "experimental-disabled"):
        assert state.setting == "versions.toml lanes.app.riscv64.enabled = false"
    # the hatch is scoped to its arch: the same override leaves the other arches on
    for other in OTHERS:
        assert lanes.resolve(cfg, "app", other, orchestrated=orchestrated, environ=environ).enabled


@pytest.mark.parametrize("table", list(TABLES))
def test_defaults_are_consistent(tmp_path: Path, table: str) -> None:
    """Producer and verifier share one default; the standalone default is never less conservative."""
    lane_toml = f"[lanes.app.riscv64]\n{TABLES[table]}\n" if table != "none" else ""
    cfg = write_config(tmp_path, {"app": ""}, lanes=lane_toml)
    ctx, _ = context(cfg)
    install = lanes.install_dir(ctx, "app", Arch.RISCV64)
    for orchestrated in (False, True):
        # the verifier on a tree without a marker (config fallback) ...
        fallback = lanes.verify(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=orchestrated))
        assert fallback is not None
        verifier_off = fallback.verdict is Verdict.SKIP
        # ... agrees with what the producer does to the tree
        produced = lanes.produce(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=orchestrated))
        assert (produced is not None) is verifier_off
        assert lanes.marked_off(install) is not None if verifier_off else not (install / lanes.MARKER).exists()
        if produced is not None:
            assert produced.verdict is not Verdict.FAIL
        shutil.rmtree(install.parent, ignore_errors=True)
    standalone = lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=False, environ={})
    orchestrated_state = lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=True, environ={})
    assert not standalone.enabled or orchestrated_state.enabled
    if "experimental" in table:
        assert not standalone.enabled, "an experimental lane must be off in a standalone task"


def test_dependency_off_turns_dependents_off(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"base": "", "app": 'depends = ["base"]'},
                       lanes="[lanes.base.riscv64]\nenabled = false\n")
    state = lanes.resolve(cfg, "app", Arch.RISCV64, environ={})
    assert not state.enabled
    assert state.setting == "dependency base: versions.toml lanes.base.riscv64.enabled = false"
    assert lanes.resolve(cfg, "app", Arch.AMD64, environ={}).enabled


def test_bad_override_value_is_a_usage_error(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    with pytest.raises(UsageError, match="CROSSLANE_LANE_APP_ARM64='maybe': expected 1"):
        lanes.resolve(cfg, "app", Arch.ARM64, environ={"CROSSLANE_LANE_APP_ARM64": "maybe"})


# -- the four toggle states: riscv64 on/off x other arches on/off, set by env or by versions.toml ---------

STATES = [(rv, others, how) for rv in (True, False) for others in (True, False) for how in ("env", "toml")]
STATE_IDS = [f"riscv64-{'on' if r else 'off'}-others-{'on' if o else 'off'}-{h}" for r, o, h in STATES]


@pytest.mark.parametrize(("riscv64_on", "others_on", "how"), STATES, ids=STATE_IDS)
def test_four_toggle_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                            riscv64_on: bool, others_on: bool, how: str) -> None:
    wanted = {Arch.RISCV64: riscv64_on, **dict.fromkeys(OTHERS, others_on)}
    lane_toml = ""
    for arch, on in wanted.items():
        if how == "env":
            monkeypatch.setenv(lanes.env_name("app", arch), "1" if on else "0")
        else:
            lane_toml += f"[lanes.app.{arch}]\nenabled = {'true' if on else 'false'}\n"
    cfg = write_config(tmp_path, {"app": 'smoke = { kind = "canary" }'}, lanes=lane_toml)
    ctx, logged = context(cfg)
    for arch, on in wanted.items():
        install = lanes.install_dir(ctx, "app", arch)
        if on:
            state = lanes.resolve(cfg, "app", arch, orchestrated=False)
            assert lanes.produce(ctx, state) is None  # the build goes ahead
            assert not install.exists()
            missing = lanes.verify(ctx, lanes.resolve(cfg, "app", arch, orchestrated=False))
            assert missing is not None and missing.verdict is Verdict.FAIL and "not installed" in missing.reason
            continue
        # an off lane: the whole build command (preflight gate included) succeeds, spawning nothing
        code = commands.run(functools.partial(build_app, arch=arch), config_path=str(cfg.path))
        assert code == 0
        marker = json.loads((install / lanes.MARKER).read_text())
        own = lanes.env_name("app", arch) if how == "env" else f"lanes.app.{arch}.enabled = false"
        assert own in marker["setting"] and marker["arch"] == arch.value
        assert sorted(p.name for p in install.iterdir()) == [lanes.MARKER]
        smoke = pipeline.smoke_components(ctx, arch, ["app"])
        assert [(r.verdict, r.reason) for r in smoke] == [
            (Verdict.SKIP, f"not installed — lane off by {marker['setting']}: policy, not drift")]
    captured = capsys.readouterr()
    for text in (captured.out, captured.err, logged.getvalue()):
        assert "FAIL" not in text and "error" not in text


def test_verifier_believes_the_marker_over_the_config(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    ctx, _ = context(cfg)
    install = lanes.install_dir(ctx, "app", Arch.RISCV64)
    lanes.write_placeholder(install.parent, lanes.LaneState("app", Arch.RISCV64, False, "CROSSLANE_LANE_APP_RISCV64=0"))
    # the config says on; the tree says what happened
    row = lanes.verify(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=False))
    assert row is not None and row.verdict is Verdict.SKIP and "CROSSLANE_LANE_APP_RISCV64=0" in row.reason


def test_corrupt_marker_is_a_defect(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    ctx, _ = context(cfg)
    install = lanes.install_dir(ctx, "app", Arch.RISCV64)
    install.mkdir(parents=True)
    (install / lanes.MARKER).write_text("{not json")
    row = lanes.verify(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=False))
    assert row is not None and row.verdict is Verdict.FAIL and "unreadable" in row.reason


def test_off_replaces_old_artifacts_and_on_rebuilds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write_config(tmp_path, {"app": ""})
    ctx, _ = context(cfg)
    folder = ctx.component_dir(Arch.RISCV64, "app")
    (folder / "install/bin").mkdir(parents=True)
    (folder / "install/bin/app").write_text("old")
    stamps.write(folder, "k", {})
    monkeypatch.setenv("CROSSLANE_LANE_APP_RISCV64", "0")
    assert lanes.produce(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=False)) is not None
    assert sorted(p.name for p in (folder / "install").iterdir()) == [lanes.MARKER]
    assert stamps.read(folder) is None
    monkeypatch.setenv("CROSSLANE_LANE_APP_RISCV64", "1")
    assert lanes.produce(ctx, lanes.resolve(cfg, "app", Arch.RISCV64, orchestrated=False)) is None
    assert not (folder / "install" / lanes.MARKER).exists()
