"""Smokes by kind: each takes (ctx, arch, component, profiles) and returns report rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from ..archs import Arch
from ..config import Profile
from ..context import Context
from ..report import Row
from . import canary, cpuinfo, genai, ort

Smoke = Callable[[Context, Arch, str, Sequence[Profile]], list[Row]]

SMOKES: Mapping[str, Smoke] = MappingProxyType({
    "canary": canary.run,
    "cpuinfo-isa": cpuinfo.run,
    "ort": ort.run,
    "genai": genai.run,
})
