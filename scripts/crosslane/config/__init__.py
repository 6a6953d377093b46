"""versions.toml: the model (model.py), its loader and validation (load.py), the TOML reader (reader.py)."""

from __future__ import annotations

from crosslane.config.load import DEFAULT_FILE, SCHEMA_VERSION, find_config, load, parse
from crosslane.config.model import (
    ArchConfig,
    Component,
    Config,
    Lane,
    ModelSpec,
    PatchSpec,
    Profile,
    Registries,
    SmokeSpec,
    SourceSpec,
    SysrootSpec,
    Toolchain,
    Tools,
)

__all__ = ["DEFAULT_FILE", "SCHEMA_VERSION", "ArchConfig", "Component", "Config", "Lane", "ModelSpec", "PatchSpec",
           "Profile", "Registries", "SmokeSpec", "SourceSpec", "SysrootSpec", "Toolchain", "Tools", "find_config",
           "load", "parse"]
