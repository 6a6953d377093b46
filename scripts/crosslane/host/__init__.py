"""The build machine: host packages, pinned build tools, cross compilers, cached probes and their rules."""

from __future__ import annotations

from types import MappingProxyType

from crosslane.registry import Registry

# Per-component feature options (components.<name>.options) and the rule (rules.py) that decides each.
OPTIONS = Registry("option", MappingProxyType({"xnnpack": "crosslane.host.rules:xnnpack_for"}))
