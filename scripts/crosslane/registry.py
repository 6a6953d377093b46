"""Registries: a kind's names, each mapped to the module attribute that implements it, imported on use.

versions.toml is validated against a registry's names (config/load.py), and a run imports only the
entries it uses: adding a recipe or a smoke is its module plus one line in its registry, and a start
does not pay for every lane's imports. A registry is a value, not module state: a test (or a plugin)
extends one with `with_entry` and hands it to `config.parse`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


def suggestion(value: str, known: list[str] | tuple[str, ...]) -> str:
    """"; did you mean 'x'?" for a near miss, else " (known: a, b)": appended to an unknown-name error."""
    hint = difflib.get_close_matches(value, list(known), n=1)
    return f"; did you mean '{hint[0]}'?" if hint else f" (known: {', '.join(known) or 'none'})"


@dataclass(frozen=True)
class Registry:
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
