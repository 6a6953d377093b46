"""ARCH-PARITY: every Python distribution versions.toml builds for an arch is installed there, or exempt.

Expected set = components with a `distribution`, × their arches, minus lanes that are off. The installed
set is read from a target environment (dist-info / egg-info folders and wheels, found recursively in a
site-packages folder or the build's staging). An absence without an exemption is drift; an exemption for
something present, for something not expected, or against an explicitly enabled lane is stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.policy import lanes
from crosslane.report import Check, Row, Verdict

STEP = "arch-parity"
METADATA_SUFFIXES = (".dist-info", ".egg-info")


def installed(paths: Iterable[Path]) -> set[str]:
    """Normalized distribution names found under *paths*."""
    names: set[str] = set()
    for root in paths:
        candidates = [root, *root.rglob("*")] if root.is_dir() else [root]
        for path in candidates:
            if path.name.endswith(METADATA_SUFFIXES) and path.is_dir():
                names.add(canonicalize_name(path.name.split("-", 1)[0]))
            elif path.name.endswith(".whl") and path.is_file():
                try:
                    names.add(str(parse_wheel_filename(path.name)[0]))
                except InvalidWheelFilename:
                    continue
    return names


def _exemptions(cfg: Config, arch: Arch) -> dict[str, tuple[str, str]]:
    """canonical distribution → (versions.toml key, reason) for *arch*."""
    found: dict[str, tuple[str, str]] = {}
    for key, reason in cfg.parity_exemptions.items():
        arch_name, _, dist = key.partition(":")
        if arch_name == arch.value:
            found[canonicalize_name(dist)] = (key, reason)
    return found


def check(cfg: Config, arch: Arch, present: set[str], where: str) -> list[Row]:
    rows: list[Row] = []
    exempt = _exemptions(cfg, arch)
    covered: set[str] = set()
    for name, component in sorted(cfg.components.items()):
        if component.distribution is None or not component.job or not cfg.builds(name, arch):
            continue  # only what the arch's job installs (a job = false component is built when named)
        dist: str = canonicalize_name(component.distribution)
        lane = cfg.lanes.get((name, arch))
        # The same resolution the build used: environment override, versions.toml, dependencies' lanes.
        state = lanes.resolve(cfg, name, arch, orchestrated=True)
        setting = state.setting
        exemption = exempt.get(dist)
        if not state.enabled:
            if exemption is None:
                covered.add(dist)
                why = f" ({state.reason})" if state.reason else ""
                rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.PASS,
                                reason=f"not expected: lane off by {setting}{why}", subject=STEP))
            continue
        covered.add(dist)
        if exemption is not None:
            key, reason = exemption
            if dist in present:
                rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.FAIL,
                                reason=f"stale exemption: [parity.exemptions] \"{key}\" but {dist} is installed in "
                                f"{where}; delete the exemption", subject=STEP))
            elif lane is not None:
                rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.FAIL,
                                reason=f"exemption \"{key}\" contradicts {setting}; delete the exemption or turn the "
                                "lane off", subject=STEP))
            else:
                rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.PASS,
                                reason=f"exempt: {reason}", subject=STEP))
            continue
        if dist in present:
            rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.PASS,
                            reason=f"installed in {where}", subject=STEP))
        else:
            rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.FAIL,
                            reason=f"drift: {dist} (component {name}) is expected on {arch} but not installed in "
                            f"{where}; build it, or set [lanes.{name}.{arch}] enabled = false, or add "
                            f"[parity.exemptions] \"{arch}:{dist}\" = \"<reason>\"", subject=STEP))
    for dist, (key, _) in sorted(exempt.items()):
        if dist not in covered:
            rows.append(Row(component=dist, arch=arch, check=Check.POLICY, verdict=Verdict.FAIL,
                            reason=f"stale exemption: [parity.exemptions] \"{key}\": {arch} is not expected to have "
                            f"{dist} (no component builds it, or its lane is off); delete the exemption", subject=STEP))
    return rows
