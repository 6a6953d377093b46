"""The name tables: every name versions.toml may use for an implementation, and where that lives.

This module is the only place that knows both sides. versions.toml is validated against the names
(config/), and a run imports only the entries it uses (`Registry.load`): adding a recipe, a smoke, an
option rule or a model converter is its module plus one line here, and config never imports the code it
names (the layers stay acyclic: tests/test_layers.py). A registry is a value, not module state: a test (or
a plugin) extends one with `with_entry` and hands it to `config.parse`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from crosslane.records import Record


def suggestion(value: str, known: list[str] | tuple[str, ...]) -> str:
    """"; did you mean 'x'?" for a near miss, else " (known: a, b)": appended to an unknown-name error."""
    import difflib  # only on the error path

    hint = difflib.get_close_matches(value, list(known), n=1)
    return f"; did you mean '{hint[0]}'?" if hint else f" (known: {', '.join(known) or 'none'})"


@dataclass(frozen=True, eq=False, repr=False)
class Registry(Record):
    """A name table: names config may use, each to the module and attribute that implements it."""

    kind: str  # what the names are, for messages: "recipe", "smoke kind", "option"
    entries: Mapping[str, str]  # name -> "package.module:attribute"

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def unknown(self, name: str) -> str:
        return f"unknown {self.kind} '{name}'{suggestion(name, self.names())}"

    def load(self, name: str) -> object:
        module, _, attribute = self.entries[name].partition(":")
        return getattr(importlib.import_module(module), attribute)

    def with_entry(self, name: str, target: str) -> Registry:
        return Registry(self.kind, MappingProxyType({**self.entries, name: target}))


# How a component becomes an install folder (versions.toml `recipe`): objects with `run(...) -> Built`.
RECIPES = Registry("recipe", MappingProxyType({
    "cmake": "crosslane.recipes.cmake:RECIPE",
    "cmake-wheel": "crosslane.recipes.cmake_wheel:RECIPE",
    "provided": "crosslane.recipes.provided:RECIPE",
}))

# Smokes by kind (versions.toml `smoke.kind`): each is `run(ctx, arch, component, profiles) -> rows`.
SMOKES = Registry("smoke kind", MappingProxyType({
    "canary": "crosslane.smokes.canary:run",
    "cpuinfo-isa": "crosslane.smokes.cpuinfo:run",
    "ort": "crosslane.smokes.ort:run",
    "genai": "crosslane.smokes.genai:run",
    "executorch": "crosslane.smokes.executorch:run",
}))

# Upstream test suites by kind (versions.toml `tests.kind`): each is `run(ctx, arch, component, profiles) -> Run`.
TEST_KINDS = Registry("test suite kind", MappingProxyType({
    "ctest": "crosslane.suites.ctest:run",
    "pytest": "crosslane.suites.pytest_suite:run",
}))

# Smoke kinds that compare the arch's outputs with the amd64 control: a job running one of them also builds
# the control's copy of the component (per-component jobs build it only then).
CONTROLLED_SMOKES = frozenset({"canary", "ort", "genai"})

# Per-component feature options (components.<name>.options) and the rule (features/rules.py) that decides each.
OPTIONS = Registry("option", MappingProxyType({"xnnpack": "crosslane.features.rules:xnnpack_for"}))

# versions.toml's [models.*].converter → the program (a file of crosslane/models/) that does the conversion; it
# runs in a host venv, so it is named by file, not imported.
CONVERTERS: Mapping[str, str] = MappingProxyType({"gguf-to-genai": "gguf_to_genai.py"})
MODEL_PRECISIONS = ("fp32", "int4")
