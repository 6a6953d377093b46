"""The shape of a preflight check: a name, an applies-to predicate and a probe, held as data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from crosslane.archs import Arch
from crosslane.features.probes import Probes
from crosslane.policy.lanes import LaneState
from crosslane.report import Verdict


@dataclass(frozen=True)
class Subject:
    """What a check looks at: an arch, and for component checks one component and its lane."""

    arch: Arch
    component: str | None = None
    lane: LaneState | None = None


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One check's verdict on one subject, with its fix."""

    status: Verdict
    message: str
    fix: str = ""


# None: the check applies; a string: why it does not (reported as SKIP with that reason).
Applies = Callable[[Probes, Subject], str | None]
Probe = Callable[[Probes, Subject], Outcome]


def always(probes: Probes, subject: Subject) -> str | None:
    return None


@dataclass(frozen=True)
class Check:
    """A preflight check: its name, scope, when it applies, its probe and whether it gates builds."""

    name: str
    scope: Literal["arch", "component"]
    applies: Applies
    probe: Probe
    # Run by `invoke build` before building; False for checks only the smoke needs (and costly ones).
    gates_build: bool = True
    # A component check is SKIPped for a lane that is off, unless it reports on the lane itself.
    respects_lane: bool = True


def setup_fix(arch: Arch) -> str:
    return f"invoke setup --arch {arch}"
