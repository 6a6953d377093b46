"""`extends`, resolved in one place: a table starts from another's (already resolved) and states what differs.

Used by the loader (config/shorthand.py, on the parsed file), before the typed reading.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from crosslane.archs import CONTROL_ARCH, KNOWN_ARCHS
from crosslane.errors import ConfigError
from crosslane.registry import SMOKES, Registry, suggestion

SOURCE_KEYS = ("source", "source_of", "mirrors")


def _fail(file: str, where: str, message: str) -> ConfigError:
    return ConfigError(f"{file}: {where}.extends: {message}")


Merge = Callable[[dict[str, object], dict[str, object], str], dict[str, object]]


def resolve_chain(kind: str, tables: Mapping[str, dict[str, object]], file: str, section: str,
                   merge: Merge) -> dict[str, dict[str, object]]:
    """Each table with `extends`, resolved parent first; `merge(parent, child, name)` makes the result. A loop,
    not recursion: a chain of a thousand tables is as valid as one of two."""
    resolved: dict[str, dict[str, object]] = {}
    for start in tables:
        chain = [start]  # the child first, up to a resolved table or one that extends nothing
        while chain[-1] not in resolved and (parent := tables[chain[-1]].get("extends")) is not None:
            where = f"{section}.{chain[-1]}"
            if not isinstance(parent, str):
                raise _fail(file, where, f"expected the name of another {kind}, got {type(parent).__name__}")
            if parent not in tables:
                raise _fail(file, where, f"unknown {kind} '{parent}'{suggestion(parent, list(tables))}")
            if parent in chain:
                raise _fail(file, where, f"inheritance cycle {' -> '.join([*chain, parent])}; "
                                         "one of them must not extend")
            chain.append(parent)
        for name in reversed(chain):
            if name in resolved:
                continue
            table = tables[name]
            parent = table.get("extends")
            if parent is None:
                resolved[name] = table
            else:
                assert isinstance(parent, str)
                resolved[name] = merge(resolved[parent], {k: v for k, v in table.items() if k != "extends"}, parent)
    return resolved


def merge_component(parent: dict[str, object], child: dict[str, object], parent_name: str,
                    smokes: Registry = SMOKES, per_arch: tuple[str, ...] = ()) -> dict[str, object]:
    """*child* over *parent*; *per_arch*: the keys whose entries go with the arches the result drops (the model
    declares them: declare.per_arch_keys(Component); nox's plan reads none of them)."""
    result = copy.deepcopy({k: v for k, v in parent.items() if k not in SOURCE_KEYS})
    for key, value in child.items():
        base = result.get(key)
        result[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    if not any(key in child for key in ("source", "source_of")):
        result["source_of"] = parent.get("source_of", parent_name) if "source" not in parent else parent_name
    arches = result.get("arches")
    smoke = result.get("smoke")
    # The control builds a variant whose smoke compares with it (Config.builds): its per-arch entries stay.
    if isinstance(smoke, dict) and smokes.compares_with_control(smoke.get("kind"), smoke) and isinstance(arches, list):
        arches = [*arches, CONTROL_ARCH.value]
    for key in per_arch:
        entries = result.get(key)
        if isinstance(entries, dict) and isinstance(arches, list):
            # a name that is no arch stays, so the loader names it (as it does in a table without extends)
            result[key] = {arch: value for arch, value in entries.items() if arch in arches or arch not in KNOWN_ARCHS}
    return result


def resolve_components(components: Mapping[str, dict[str, object]], file: str, smokes: Registry = SMOKES,
                       per_arch: tuple[str, ...] = ()) -> dict[str, dict[str, object]]:
    """[components.*] with `extends` resolved (each a new dict)."""
    return resolve_chain("component", components, file, "components",
                         lambda parent, child, name: merge_component(parent, child, name, smokes, per_arch))
