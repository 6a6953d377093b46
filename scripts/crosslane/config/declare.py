"""A versions.toml key declared where it lands: a field of the model's frozen dataclass, its declaration (keys.Key:
type, default, doc, constraints) in the field's metadata.

`section_of` derives a table's declaration (keys.Section: what the reader checks and jsonschema.py writes) from the
dataclass's fields, and `read_into` fills the dataclass from a table by walking the same fields, so a key added to
the model is read, checked and in the schema at once (scikit-build-core derives its settings schema and reader from
its settings dataclasses the same way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from crosslane.archs import KNOWN_ARCHS
from crosslane.config.fields import read_arch
from crosslane.config.keys import Key, Section
from crosslane.config.reader import Table
from crosslane.registry import Registry

_META = "crosslane.declared"


class Kinds(Protocol):
    """The registries whose entries some declarations name (model.Registries)."""

    @property
    def recipes(self) -> Registry: ...
    @property
    def smokes(self) -> Registry: ...
    @property
    def suites(self) -> Registry: ...


# A key whose declaration names a registry's entries (the recipes, smoke kinds, suite kinds) is declared by a function
# of the registries in use, plug-ins included.
Declaration = Key | Callable[[Kinds], Key]
# A reader of a field that is not one plain value: the table, the key, the caller's context (load's root, pins,
# registries) and the fields read so far; it returns the field's value, or with *fills* a mapping of its and those
# fields' values. A reader that needs more than the config package (a source's fetch rules) is given to read_into.
Reader = Callable[[Table, str, Any, Mapping[str, object]], object]
T = TypeVar("T")
# A check of a value read, beside its field: the table, the key, the value and the fields read so far.
Check = Callable[[Table, str, Any, Mapping[str, object]], None]


@dataclasses.dataclass(frozen=True)
class Declared:
    """What a field's metadata holds: the keys it is read from (a plain field: its own name) and how."""

    keys: Mapping[str, Declaration]
    read: Reader | None = None
    check: Check | None = None
    fills: tuple[str, ...] = ()  # other fields *read* gives values to (read together, as one key's parts)
    # Entries of arches a variant drops are dropped with them when `extends` merges (inherit.merge_component).
    per_arch: bool = False


def _default(declaration: Declaration) -> dict[str, Any]:
    """The dataclass default a key's declaration implies: none for a required key, an empty mapping for a table."""
    if not isinstance(declaration, Key) or declaration.required:
        return {}
    if declaration.type == "table" and declaration.default is None:
        return {"default_factory": dict}
    return {"default": declaration.default}


def key(declaration: Declaration, *, read: Reader | None = None, check: Check | None = None,
        per_arch: bool = False, **default: Any) -> Any:
    """A field read from the key of its own name (`section_of` names it); *default* (default= or default_factory=):
    the model's, where it is not what the declaration implies (a table read into a dataclass)."""
    return dataclasses.field(**(default or _default(declaration)),
                             metadata={_META: Declared(MappingProxyType({"": declaration}), read, check,
                                                       per_arch=per_arch)})


def using(read: Callable[[Table, str], object]) -> Reader:
    """A reader of one key that needs neither the context nor other fields (fields.arch_list)."""
    return lambda table, name, _context, _values: read(table, name)


def derived(read: Reader | None = None, *, fills: tuple[str, ...] = (), default_factory: Any = dataclasses.MISSING,
            **keys: Declaration) -> Any:
    """A field whose value a reader makes from *keys* (named as versions.toml names them), with *fills*' values;
    without *read*, read_into is given the reader (by the field's name)."""
    extra: dict[str, Any] = {} if default_factory is dataclasses.MISSING else {"default_factory": default_factory}
    return dataclasses.field(**extra, metadata={_META: Declared(MappingProxyType(keys), read, fills=fills)})


def declared(cls: type) -> list[tuple[dataclasses.Field[Any], Declared]]:
    return [(f, f.metadata[_META]) for f in dataclasses.fields(cls) if _META in f.metadata]


def _named(field_name: str, name: str) -> str:
    return name or field_name


def section_of(cls: type, kinds: Kinds | None = None, *, doc: str, first: Mapping[str, Key] | None = None) -> Section:
    """The table *cls* is read from, declared by its fields in their order (*first*: keys read before the model is,
    such as `extends`)."""
    keys: dict[str, Key] = dict(first or {})
    for f, decl in declared(cls):
        for name, declaration in decl.keys.items():
            if not isinstance(declaration, Key):
                assert kinds is not None, f"{cls.__name__}.{f.name} names registry entries: section_of needs them"
                declaration = declaration(kinds)
            keys[_named(f.name, name)] = declaration
    return Section(MappingProxyType(keys), doc=doc)


def per_arch_keys(cls: type) -> tuple[str, ...]:
    return tuple(_named(f.name, name) for f, decl in declared(cls) if decl.per_arch for name in decl.keys)


def read_plain(table: Table, name: str) -> object:
    """A key holding one value the reader's accessors read alone: a scalar, a list of strings, a table of strings
    (per arch, an arch's list of strings)."""
    decl = table.declared(name)
    assert decl is not None, name
    match decl.type:
        case "string":
            return table.optional_string(name) if decl.default is None else table.string(name)
        case "boolean":
            return table.boolean(name)
        case "number":
            return table.number(name)
        case "integer":
            return table.integer(name)
        case "array":
            return table.strings(name)
        case _:
            return _strings_table(table, name)


def _strings_table(table: Table, name: str) -> Mapping[Any, object]:
    sub = table.table(name)
    assert sub.section is not None and sub.section.names is not None, name
    arches = sub.section.name_choices == KNOWN_ARCHS
    read = Table.strings if sub.section.names.type == "array" else Table.string
    found: dict[Any, object] = {}
    for entry in list(sub.keys()):
        found[read_arch(sub, entry, entry) if arches else entry] = read(sub, entry)
    sub.finish()
    return MappingProxyType(found)


def read_into(cls: type[T], table: Table, context: object, given: Mapping[str, object],
              readers: Mapping[str, Reader] | None = None) -> T:
    """*cls* filled from *table* field by field, in the fields' order (each checked as it is read); *given*: the
    fields the caller knows (a component's name); *readers*: by field name, those the fields do not name. The caller
    finishes the table (its unknown keys)."""
    values: dict[str, object] = dict(given)
    for f, decl in declared(cls):
        if f.name in values:
            continue
        name = _named(f.name, next(iter(decl.keys), ""))
        read = decl.read or (readers or {}).get(f.name)
        if read is None:
            assert len(decl.keys) == 1, f"{cls.__name__}.{f.name} is derived: read_into needs its reader"
            value = read_plain(table, name)
        else:
            value = read(table, name, context, values)
        if decl.fills:
            assert isinstance(value, Mapping)
            values.update(value)
        else:
            values[f.name] = value
        if decl.check is not None:
            decl.check(table, name, values[f.name], values)
    return cls(**values)


