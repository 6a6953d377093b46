"""versions.toml: the model (model.py), its loader and validation (load.py), the TOML reader (reader.py)."""

from __future__ import annotations

from crosslane.config.load import DEFAULT_FILE, SCHEMA_VERSION, find_config, load, parse
from crosslane.config.model import (
    ArchConfig,
    ArchiveSource,
    BareMetalBuild,
    BareMetalTarget,
    Component,
    Config,
    Constrained,
    DebianSource,
    GitSource,
    Lane,
    ModelSpec,
    PatchSpec,
    PinnedSource,
    Profile,
    Registries,
    SmokeSpec,
    SourceSpec,
    SysrootPackage,
    SysrootSpec,
    SuiteSpec,
    Toolchain,
    ToolRootSpec,
    Tools,
    TreeSource,
    WheelSpec,
    version_of,
)

__all__ = ["DEFAULT_FILE", "SCHEMA_VERSION", "ArchConfig", "ArchiveSource", "BareMetalBuild", "BareMetalTarget",
           "Component", "Config", "Constrained", "DebianSource", "GitSource", "Lane", "ModelSpec", "PatchSpec",
           "PinnedSource", "Profile", "Registries", "SmokeSpec", "SourceSpec", "SysrootPackage", "SysrootSpec",
           "SuiteSpec", "ToolRootSpec", "Toolchain", "Tools", "TreeSource", "WheelSpec", "find_config", "load",
           "parse",
           "version_of"]
