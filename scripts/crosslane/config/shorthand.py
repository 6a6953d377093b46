"""versions.toml's ways of stating a fact once, resolved on the raw TOML before the typed reading.

- `extends = "<component>"`: a component starts from another's table (already resolved) and states what differs.
  Keys replace the parent's; a sub-table (arch_cmake_args, toolchain, options, smoke, …) is merged one level
  deep, so `arch_cmake_args.arm64` replaces only arm64's list, and per-arch entries for arches the variant does
  not build are dropped. A variant without a source of its own builds the parent's (`source_of`), sharing its
  staged copy.
- `"@<group>"` in cmake_args and arch_cmake_args lists: the arguments of `[args.<group>]`, in place.
- `[pins]` (distribution = "version") and bare names in a requirements list: "name" becomes "name==version";
  `[hostenvs.<name>] extends = "<other>"` starts from the other venv's requirements.

Each mistake is one line naming the key (an unknown parent or group, a cycle, a name without a pin, a pin
written twice).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidName, canonicalize_name

from crosslane.archs import CONTROL_ARCH
from crosslane.config.reader import Table
from crosslane.registry import SMOKES, Registry, suggestion

GROUP_PREFIX = "@"
ARG_KEYS = ("cmake_args", "arch_cmake_args")
SOURCE_KEYS = ("source", "source_of", "mirrors")
PER_ARCH_KEYS = ("arch_cmake_args", "toolchain")


def _in_order(raw: object, resolved: Mapping[str, object]) -> dict[str, object]:
    """*raw*'s entries in their order, the resolved ones replaced (a non-table entry stays for the typed reader
    to refuse by name)."""
    assert isinstance(raw, dict)
    return {name: resolved.get(name, value) for name, value in raw.items()}


def _tables(data: object) -> dict[str, dict[str, object]]:
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


Merge = Callable[[dict[str, object], dict[str, object], str], dict[str, object]]


def _resolve_chain(kind: str, tables: Mapping[str, dict[str, object]], file: str, section: str,
                   merge: Merge) -> dict[str, dict[str, object]]:
    """Each table with `extends`, resolved parent first; `merge(parent, child, name)` makes the result."""
    resolved: dict[str, dict[str, object]] = {}

    def resolve(name: str, trail: tuple[str, ...]) -> dict[str, object]:
        if name in resolved:
            return resolved[name]
        table = tables[name]
        parent = table.get("extends")
        where = Table({}, file, f"{section}.{name}")
        if parent is None:
            resolved[name] = table
            return table
        if not isinstance(parent, str):
            where.fail("extends", f"expected the name of another {kind}, got {type(parent).__name__}")
        if parent not in tables:
            where.fail("extends", f"unknown {kind} '{parent}'{suggestion(parent, list(tables))}")
        if parent in trail:
            where.fail("extends", f"inheritance cycle {' -> '.join([*trail, parent])}; one of them must not extend")
        child = {k: v for k, v in table.items() if k != "extends"}
        resolved[name] = merge(resolve(parent, (*trail, parent)), child, parent)
        return resolved[name]

    for name in tables:
        resolve(name, (name,))
    return resolved


def _merge_component(parent: dict[str, object], child: dict[str, object], parent_name: str,
                     smokes: Registry = SMOKES) -> dict[str, object]:
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
    for key in PER_ARCH_KEYS:
        per_arch = result.get(key)
        if isinstance(per_arch, dict) and isinstance(arches, list):
            result[key] = {arch: value for arch, value in per_arch.items() if arch in arches}
    return result


def _expand_groups(values: object, groups: Mapping[str, list[str]], where: Table) -> object:
    if not isinstance(values, list):
        return values
    expanded: list[object] = []
    for index, value in enumerate(values):
        if isinstance(value, str) and value.startswith(GROUP_PREFIX):
            name = value[len(GROUP_PREFIX):]
            if name not in groups:
                where.fail(index, f"unknown argument group '{name}'{suggestion(name, list(groups))}; "
                                  f"add [args] {name} = [...]")
            expanded += groups[name]
        else:
            expanded.append(value)
    return expanded


def _groups(data: dict[str, object], file: str) -> dict[str, list[str]]:
    raw = data.get("args", {})
    if not isinstance(raw, dict):
        Table(data, file).fail("args", "expected a table of named argument lists")
    table = Table(raw, file, "args")
    groups = {name: list(table.strings(name)) for name in list(table.keys())}
    for name, values in groups.items():
        for index, value in enumerate(values):
            if value.startswith(GROUP_PREFIX):
                Table({}, file, f"args.{name}").fail(index, "a group cannot name another group; list its arguments")
    return groups


def resolve_components(data: dict[str, object], file: str, smokes: Registry = SMOKES) -> dict[str, object]:
    """The [components.*] tables with `extends` and `@group` resolved, and `@group` in [baremetal.*] cmake_args
    (a new dict; *data* is left as it is)."""
    groups = _groups(data, file)
    targets = _tables(data.get("baremetal"))
    if targets:
        data = {**data, "baremetal": _in_order(data["baremetal"], {
            name: {**table, "cmake_args": _expand_groups(table["cmake_args"], groups,
                                                         Table({}, file, f"baremetal.{name}.cmake_args"))}
            if "cmake_args" in table else table for name, table in targets.items()})}
    components = _tables(data.get("components"))
    if not components:
        return data
    resolved = _resolve_chain("component", components, file, "components",
                              lambda parent, child, name: _merge_component(parent, child, name, smokes))
    for name, table in resolved.items():
        table = dict(table)
        for key in ARG_KEYS:
            where = Table({}, file, f"components.{name}.{key}")
            if key == "cmake_args":
                table[key] = _expand_groups(table.get(key, []), groups, where) if key in table else None
            elif isinstance(table.get(key), dict):
                per_arch = table[key]
                assert isinstance(per_arch, dict)
                table[key] = {arch: _expand_groups(v, groups, Table({}, file, f"components.{name}.{key}.{arch}"))
                              for arch, v in per_arch.items()}
        resolved[name] = {k: v for k, v in table.items() if v is not None}
    return {**data, "components": _in_order(data["components"], resolved)}


def pinned_requirements(values: tuple[str, ...], pins: Mapping[str, str], where: Table) -> tuple[str, ...]:
    """A requirements list with bare names filled in from [pins]; every entry must end up name==version."""
    result = []
    for index, value in enumerate(values):
        try:
            requirement = Requirement(value)
        except InvalidRequirement as exc:
            where.fail(index, f"'{value}' is not a requirement ({exc})")
        name = canonicalize_name(requirement.name)
        if str(requirement.specifier) == "" and requirement.url is None:
            if name not in pins:
                where.fail(index, f"'{value}' has no version: pin it in [pins] ({requirement.name} = \"X.Y\") "
                                  "or write name==version")
            requirement.specifier = SpecifierSet(f"=={pins[name]}")
            result.append(str(requirement))
            continue
        if name in pins:
            where.fail(index, f"'{value}': {requirement.name} is pinned in [pins] already; write the bare name")
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==":
            where.fail(index, f"'{value}' is not pinned; write name==version so the venv is reproducible")
        result.append(value)
    return tuple(result)


def is_distribution_name(name: str) -> bool:
    try:
        canonicalize_name(name, validate=True)
    except InvalidName:
        return False
    return True


def _pinnable(version: str) -> bool:
    """Whether name==*version* is a requirement pip reads (found by fuzzing: '.0.28.0' was a traceback)."""
    try:
        SpecifierSet(f"=={version}")
    except InvalidSpecifier:
        return False
    return True


def read_pins(data: dict[str, object], file: str) -> dict[str, str]:
    """[pins]: distribution = "version", by canonical name."""
    raw = data.get("pins", {})
    if not isinstance(raw, dict):
        Table(data, file).fail("pins", "expected a table of distribution = \"version\"")
    table = Table(raw, file, "pins")
    pins: dict[str, str] = {}
    for name in list(table.keys()):
        version = table.string(name)
        if not is_distribution_name(name):
            table.fail(name, f"'{name}' is not a distribution name (a pin is name = \"version\")")
        if canonicalize_name(name) in pins:
            table.fail(name, f"{name} is pinned twice (names compare case- and separator-insensitively)")
        if not version or any(c in version for c in " =<>!~,;") or not _pinnable(version):
            table.fail(name, f"'{version}' is not a version such as 2.13.0")
        pins[canonicalize_name(name)] = version
    return pins


def resolve_hostenvs(data: dict[str, object], file: str, pins: Mapping[str, str]) -> dict[str, object]:
    """[hostenvs.*] with each own requirement pinned (errors name its own index), then `extends` resolved: the
    parent's requirements, then the child's."""
    hostenvs = _tables(data.get("hostenvs"))
    if not hostenvs:
        return data
    own = {}
    for name, table in hostenvs.items():
        reader = Table(table, file, f"hostenvs.{name}")
        pinned = pinned_requirements(reader.strings("requirements"), pins,
                                     Table({}, file, f"hostenvs.{name}.requirements"))
        own[name] = {**table, "requirements": list(pinned)}

    def merge(parent: dict[str, object], child: dict[str, object], _: str) -> dict[str, object]:
        before, after = parent.get("requirements", []), child.get("requirements", [])
        assert isinstance(before, list) and isinstance(after, list)
        return {**parent, **child, "requirements": [*before, *after]}

    return {**data, "hostenvs": _in_order(data["hostenvs"], _resolve_chain("host venv", own, file, "hostenvs", merge))}
