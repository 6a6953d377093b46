"""Smokes by kind: each takes (ctx, arch, component, profiles) and returns report rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.report import Row
from crosslane.smokes import canary, cpuinfo, genai, ort

Smoke = Callable[[Context, Arch, str, Sequence[Profile]], list[Row]]

SMOKES: Mapping[str, Smoke] = MappingProxyType({
    "canary": canary.run,
    "cpuinfo-isa": cpuinfo.run,
    "ort": ort.run,
    "genai": genai.run,
})
