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

from collections.abc import Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidName, canonicalize_name

from crosslane import inherit
from crosslane.config.component_model import Component
from crosslane.config.declare import per_arch_keys
from crosslane.config.reader import Table
from crosslane.registry import SMOKES, Registry, suggestion

GROUP_PREFIX = "@"
ARG_KEYS = ("cmake_args", "arch_cmake_args")


def _in_order(raw: object, resolved: Mapping[str, object]) -> dict[str, object]:
    """*raw*'s entries in their order, the resolved ones replaced (a non-table entry stays for the typed reader
    to refuse by name)."""
    assert isinstance(raw, dict)
    return {name: resolved.get(name, value) for name, value in raw.items()}


def _tables(data: object) -> dict[str, dict[str, object]]:
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


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
    resolved = inherit.resolve_components(components, file, smokes, per_arch_keys(Component))
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

    resolved = inherit.resolve_chain("host venv", own, file, "hostenvs", merge)
    return {**data, "hostenvs": _in_order(data["hostenvs"], resolved)}
