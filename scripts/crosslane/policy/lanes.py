"""Lanes: one (component, arch) pair, switched on or off by policy, never by accident.

The effective state of a lane, first match wins:
  1. the environment override CROSSLANE_LANE_<COMPONENT>_<ARCH> = 1/0 (name from env_name());
  2. versions.toml [lanes.<component>.<arch>] enabled = false;
  3. an experimental lane ([lanes.<component>.<arch>] experimental = true) in a *standalone* task
     (invoke build / smoke / preflight run on their own) is off: the conservative default. Only the
     orchestrated run (invoke all, nox -s build-<arch>: pipeline.run_arch) opts in through
     versions.toml's enabled (default true);
  4. otherwise on.
A lane whose dependency's lane is off is off too ("dependency <name>: ..."), so switching a lane off
never leaves a dependent build to fail. The override is scoped to its arch: it names one.

The producer (the build) writes, for an off lane, the placeholder output tree (the component's install
folder) holding only `.lane-off` (JSON: reason and the setting that decided it), and succeeds. The
verifier (the smoke) believes the marker first, falls back to resolve() only for a tree without one,
and so agrees with the producer by construction (tests/policy/test_lanes.py asserts it).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import ConfigError, UsageError
from crosslane.files import bounded, stamps
from crosslane.report import Check, Row, Verdict

ENV_PREFIX = "CROSSLANE_LANE_"
MARKER = ".lane-off"
_ON, _OFF = ("1", "on", "true", "yes"), ("0", "off", "false", "no")


@dataclass(frozen=True)
class LaneState:
    """A lane as resolved for this run: enabled or not, by which setting, and why."""

    component: str
    arch: Arch
    enabled: bool
    setting: str
    reason: str = ""


def env_name(component: str, arch: Arch) -> str:
    """CROSSLANE_LANE_ONNXRUNTIME_GENAI_RISCV64 for (onnxruntime-genai, riscv64)."""
    name = "".join(c if c.isalnum() else "_" for c in component.upper())
    return f"{ENV_PREFIX}{name}_{arch.value.upper()}"


def _env_override(component: str, arch: Arch, environ: Mapping[str, str]) -> bool | None:
    name = env_name(component, arch)
    value = environ.get(name, "").strip().lower()
    if not value:
        return None
    if value in _ON or value in _OFF:
        return value in _ON
    raise UsageError(f"{name}={environ[name]!r}: expected 1 (lane on) or 0 (lane off)")


def _own(config: Config, component: str, arch: Arch, orchestrated: bool, environ: Mapping[str, str]) -> LaneState:
    lane = config.lanes.get((component, arch))
    reason = lane.reason if lane else ""
    override = _env_override(component, arch, environ)
    if override is not None:
        return LaneState(component, arch, override, f"{env_name(component, arch)}={int(override)}", reason)
    where = f"lanes.{component}.{arch}"
    if lane is not None and not lane.enabled:
        return LaneState(component, arch, False, f"versions.toml {where}.enabled = false", reason)
    if lane is not None and lane.experimental and not orchestrated:
        return LaneState(component, arch, False, f"default: {where} is experimental, off outside the orchestrated "
                         f"run (invoke all --arch {arch}) unless {env_name(component, arch)}=1", reason)
    setting = f"versions.toml {where}" if lane is not None else "default"
    return LaneState(component, arch, True, setting, reason)


def resolve(config: Config, component: str, arch: Arch, *, orchestrated: bool = False,
            environ: Mapping[str, str] | None = None) -> LaneState:
    env = os.environ if environ is None else environ
    state = _own(config, component, arch, orchestrated, env)
    if not state.enabled:
        return state
    for dep in config.components[component].dependencies(arch):
        dep_state = resolve(config, dep, arch, orchestrated=orchestrated, environ=env)
        if not dep_state.enabled:
            return LaneState(component, arch, False, f"dependency {dep}: {dep_state.setting}", dep_state.reason)
    return state


def install_dir(ctx: Context, component: str, arch: Arch) -> Path:
    return ctx.component_dir(arch, component) / "install"


def read_marker(install: Path) -> dict[str, str] | None:
    """The marker's content; None without one. A marker that is not a JSON object with a "setting" is
    returned as {"error": why}: a defect to report, never a reason to skip."""
    path = install / MARKER
    if not path.is_file():
        return None
    try:
        data = bounded.read_json(path, error=ConfigError, fix="", limit=1 << 16)
    except ConfigError as exc:
        return {"error": f"{path} is unreadable ({exc.message})"}
    if not isinstance(data, dict) or not isinstance(data.get("setting"), str):
        return {"error": f"{path} is not a lane marker (no \"setting\")"}
    return {str(k): str(v) for k, v in data.items()}


def marked_off(install: Path) -> str | None:
    """The setting that switched this tree's lane off, from a valid marker; None otherwise."""
    marker = read_marker(install)
    return None if marker is None or "error" in marker else marker["setting"]


def write_placeholder(folder: Path, state: LaneState) -> Path:
    """Replace the component's output tree with the placeholder: an install folder holding only the marker."""
    install = folder / "install"
    stamps.clear(folder)  # turning the lane back on must rebuild
    shutil.rmtree(install, ignore_errors=True)
    install.mkdir(parents=True)
    record = {k: str(v) for k, v in asdict(state).items() if k != "enabled"}
    (install / MARKER).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return install


def produce(ctx: Context, state: LaneState) -> Row | None:
    """The build's lane step: None when the lane is on (build it), else the placeholder's report row."""
    component, arch = state.component, state.arch
    install = install_dir(ctx, component, arch)
    if state.enabled:
        if (install / MARKER).is_file() and not ctx.runner.dry_run:
            (install / MARKER).unlink()
            stamps.clear(install.parent)
        return None
    if not ctx.runner.dry_run:
        write_placeholder(install.parent, state)
    ctx.log.notice(f"{component} on {arch}: lane off by {state.setting}" + (f" ({state.reason})" if state.reason
                                                                             else ""))
    return Row(component=component, arch=arch, check=Check.BUILD, verdict=Verdict.SKIP,
               reason=f"lane off by {state.setting}: placeholder {install} with {MARKER}")


def off_reason(setting: str) -> str:
    return f"not installed — lane off by {setting}: policy, not drift"


def verify(ctx: Context, state: LaneState) -> Row | None:
    """The smoke's lane step: None when the lane is on and installed (smoke it), else the row to report. The
    tree's marker is believed first; *state* (the plan's resolution) only for a tree without one."""
    component, arch = state.component, state.arch
    install = install_dir(ctx, component, arch)
    marker = read_marker(install)
    if marker is not None and "error" in marker:
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                   reason=f"{marker['error']}; invoke build --arch {arch} --component {component} rewrites it")
    if marker is not None:
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                   reason=off_reason(marker["setting"]))
    if not state.enabled:
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                   reason=off_reason(state.setting))
    if not install.is_dir():
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                   reason=f"not installed although the lane is on ({state.setting}): {install} missing; "
                   f"invoke build --arch {arch} --component {component}")
    return None
